"""stdin and stdout read and written without an event loop: the stdio front's lines are
the event loop's lines, and what the front leaves unread the loop reads first."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Iterator

import pytest

from agentkit.mcp_pipes import PipeLines, take_lines, write_all

WAIT_SECONDS = 60

CHUNKINGS = [
    pytest.param([b'{"a": 1}\n{"b": 2}\n'], ['{"a": 1}\n', '{"b": 2}\n'], id="two-in-one"),
    pytest.param([b'{"a"', b": 1}", b"\n"], ['{"a": 1}\n'], id="one-in-three"),
    pytest.param([b"x\r\ny\n"], ["x\r\n", "y\n"], id="crlf"),
    pytest.param([b"x\r", b"\ny\n"], ["x\r\n", "y\n"], id="crlf-cut-in-two"),
    pytest.param([b"a\rb\n"], ["a\r", "b\n"], id="lone-cr"),
    pytest.param([b"x\n", b"last"], ["x\n", "last"], id="last-without-newline"),
    pytest.param([b"\n"], ["\n"], id="empty-line"),
    pytest.param(["Zürich\n".encode()[:2], "Zürich\n".encode()[2:]], ["Zürich\n"], id="utf8"),
    pytest.param([b"bad \xff byte\n"], ["bad \ufffd byte\n"], id="bad-utf8-replaced"),
]


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read, write = os.pipe()
    yield read, write
    for fd in (read, write):
        with contextlib.suppress(OSError):  # closed by the test
            os.close(fd)


def _all_lines(lines: PipeLines) -> list[str]:
    taken = []
    while (line := lines.next_line(WAIT_SECONDS)) is not None:
        taken.append(line)
    return taken


@pytest.mark.parametrize(("chunks", "lines"), CHUNKINGS)
def test_pipe_lines_are_the_lines_a_text_file_gives(
    pipe: tuple[int, int], chunks: list[bytes], lines: list[str]
) -> None:
    read, write = pipe
    for chunk in chunks:
        os.write(write, chunk)
    os.close(write)
    assert _all_lines(PipeLines(read)) == lines


@pytest.mark.parametrize(("chunks", "lines"), CHUNKINGS)
def test_the_event_loops_reader_splits_the_same_lines(
    chunks: list[bytes], lines: list[str]
) -> None:
    pytest.importorskip("anyio")  # mcp_stdio's: the serve extra
    from agentkit.mcp_stdio import LineReader

    async def read() -> list[str]:
        reader = LineReader()
        for chunk in chunks:
            reader.data_received(chunk)
        reader.eof_received()
        return [line async for line in reader]

    assert asyncio.run(read()) == lines


def test_take_lines_takes_whole_lines_and_leaves_the_rest() -> None:
    buffer = bytearray(b"one\r\ntwo\rthree\nfour")
    assert take_lines(buffer) == [b"one\r\n", b"two\r", b"three\n"]
    assert buffer == b"four"
    assert take_lines(buffer) == []
    assert buffer == b"four"


def test_a_wait_cut_short_leaves_the_begun_line_unread(pipe: tuple[int, int]) -> None:
    read, write = pipe
    os.write(write, b'{"id": 1}\n{"id": 2}\n{"id"')
    lines = PipeLines(read)
    assert lines.next_line(0) == '{"id": 1}\n'
    assert lines.rest() == b'{"id": 2}\n{"id"'
    assert lines.next_line(0) == '{"id": 2}\n'
    assert lines.next_line(0.01) is None  # the third line is not whole
    assert lines.rest() == b'{"id"'


def test_a_byte_on_the_wake_pipe_ends_the_wait(pipe: tuple[int, int]) -> None:
    read, _ = pipe
    wake_read, wake_write = os.pipe()
    try:
        os.write(wake_write, b"\0")
        assert PipeLines(read, wake=wake_read).next_line() is None  # no timeout: woken
    finally:
        os.close(wake_read)
        os.close(wake_write)


def test_lines_already_read_are_given_before_a_wake(pipe: tuple[int, int]) -> None:
    read, write = pipe
    wake_read, wake_write = os.pipe()
    try:
        os.write(write, b"one\ntwo\n")
        lines = PipeLines(read, wake=wake_read)
        assert lines.next_line() == "one\n"
        os.write(wake_write, b"\0")
        assert lines.next_line() == "two\n"
        assert lines.next_line() is None
    finally:
        os.close(wake_read)
        os.close(wake_write)


def test_the_end_of_the_input_ends_the_lines(pipe: tuple[int, int]) -> None:
    read, write = pipe
    os.close(write)
    lines = PipeLines(read)
    assert lines.next_line() is None
    assert lines.next_line() is None
    assert lines.rest() == b""


def _drain(fd: int, into: bytearray) -> None:
    while data := os.read(fd, 65536):
        into += data


@pytest.mark.parametrize("blocking", [True, False], ids=["blocking", "non-blocking"])
def test_write_all_writes_past_a_full_pipe(pipe: tuple[int, int], blocking: bool) -> None:
    read, write = pipe
    os.set_blocking(write, blocking)
    data = "Zürich ".encode() * 100_000  # far over a pipe's buffer
    received = bytearray()
    reader = threading.Thread(target=_drain, args=(read, received))
    reader.start()
    try:
        write_all(write, data)
    finally:
        os.close(write)
        reader.join(WAIT_SECONDS)
    assert bytes(received) == data


def test_write_all_says_when_the_reader_is_gone(pipe: tuple[int, int]) -> None:
    read, write = pipe
    os.close(read)
    with pytest.raises(BrokenPipeError):
        write_all(write, b"lost\n")
