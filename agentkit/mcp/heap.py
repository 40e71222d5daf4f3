"""The server's start-up heap, kept out of the garbage collector's full collections.

Every object a process holds that can be part of a cycle is walked by each full
collection of CPython's cyclic garbage collector (its oldest generation). Once a server
has started, most of those objects are there to stay: the modules, the SDK's and
pydantic's models, the loaded tools. Serving makes cyclic garbage all the time (a call's
task, its cancel scopes, an exception and its traceback), so under load a full
collection comes every few seconds, and while it walks the whole heap every call in
flight waits: measured under the soak (32 sessions, four tools), a full collection took
up to 83 ms, and two in three of the slowest 1% of calls waited on one.

``freeze()``, once the server is ready, moves every object into the collector's
permanent generation (``gc.freeze``), which no later collection walks; a full
collection then walks only what was made since. It collects the young generations
first, not the whole heap: a full collection of a server with 1,000 tools takes 30-40
ms, which start-up would pay, and finds a few dozen objects. The frozen objects are
freed as usual when the last reference to them goes; only a cycle among them that
becomes garbage stays, until the generation is thawed. So a reload, which drops the
tools it replaces, thaws, collects and freezes again (``refreeze``: one full
collection's pause, once a reload), and the end of serving thaws (``thaw``). A
process that froze objects itself before serving (``gc.freeze`` to fork, say) keeps
its own arrangement: nothing here touches it.
"""

from __future__ import annotations

import gc
import threading
from typing import Final

__all__ = ["freeze", "refreeze", "thaw"]

_lock: Final = threading.Lock()
#: Whether the frozen generation is this module's: frozen by ``freeze``, not yet thawed.
_owned = False


def freeze() -> bool:
    """Collect the young generations, then freeze every object left, unless something
    froze objects already (this module, or the process itself). Whether it froze them."""
    global _owned
    with _lock:
        if _owned or gc.get_freeze_count():
            return False
        gc.collect(1)
        gc.freeze()
        _owned = True
        return True


def refreeze() -> None:
    """After the objects kept long have changed (a reload's swap): thaw, collect what
    the change left behind, freeze again. Nothing when ``freeze`` did not freeze."""
    with _lock:
        if not _owned:
            return
        gc.unfreeze()
        gc.collect()
        gc.freeze()


def thaw() -> None:
    """Give the frozen objects back to the collector, if ``freeze`` froze them."""
    global _owned
    with _lock:
        if _owned:
            gc.unfreeze()
            _owned = False
