"""Reading a small text file a user names: definitions, tokens, secrets, env and input files.

Every such file is read the same way: only a regular file (a FIFO would block, a device
never end), at most ``MAX_FILE_BYTES`` whatever its size claims, as UTF-8 with or without
a byte-order mark (Notepad writes one).
"""

from __future__ import annotations

import os
import stat
from typing import Final

from agentkit.toolerrors import TextFileError

__all__ = ["MAX_FILE_BYTES", "TextFileError", "read_text_file"]

#: The most a file read with ``read_text_file`` may hold.
MAX_FILE_BYTES: Final = 1024 * 1024

_BOM: Final = b"\xef\xbb\xbf"
# Not on every platform; without them a FIFO given by name could block the open.
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def read_text_file(
    path: str | os.PathLike[str], *, limit: int = MAX_FILE_BYTES, what: str = "such a file"
) -> str:
    """The text of the regular file ``path``, a leading byte-order mark dropped.

    At most ``limit + 1`` bytes are read whatever the file claims its size is (``/proc``
    files claim 0); opening does not wait (a FIFO would block). Raises
    ``TextFileError`` when it is not a regular file, cannot be read, holds more than
    ``limit`` bytes (``what`` names the kind of file in that message) or is not UTF-8.
    """
    try:
        fd = os.open(path, os.O_RDONLY | _NONBLOCK | _CLOEXEC)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise TextFileError("not a regular file (a folder, FIFO, device or socket)")
            data = _read_at_most(fd, limit + 1)
        finally:
            os.close(fd)
    except OSError as exc:
        raise TextFileError(f"cannot read: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise TextFileError(f"the file is over {limit} bytes, the most {what} may be")
    data = data.removeprefix(_BOM)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line_start = data.rfind(b"\n", 0, exc.start) + 1
        raise TextFileError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x}); save it as UTF-8",
            line=data.count(b"\n", 0, exc.start) + 1,
            column=len(data[line_start : exc.start].decode("utf-8", "replace")) + 1,
        ) from None


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size < limit:  # every pass reads at least one byte or ends the loop
        chunk = os.read(fd, limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
