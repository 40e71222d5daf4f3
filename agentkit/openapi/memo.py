"""Schema conversions of one import, kept by the component they convert.

A large description names one component schema (Kubernetes' ``ObjectMeta``,
GitHub's ``simple-user``) from hundreds of operations, and converting it again
for each was most of an import. ``Conversions`` keeps what converting a
``$ref`` target gave, for the rest of the same import (nothing outlives it),
and gives it back only where converting again would give the same:

- the key is what the conversion reads besides the schema: the target's
  pointer, the direction, the depth, the depth budget and the description
  given for it;
- the notes it made are kept relative to the ``where`` it was given (every
  note of a conversion is made at that ``where`` or below it), and made again,
  in the same order, at the new ``where``;
- the refs on the stack change the result only where the conversion asked
  whether a ref it met is on the stack (a loop, cut there): an entry remembers
  which refs it asked about and which of them were on the stack, and serves
  only a stack that answers each of those questions the same way.

What an entry gives back is a copy of the spec's top level (callers set a
description or drop a default there); what is below it is shared, and the
writers only read it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, final

#: What a conversion reads besides the schema: target pointer, direction, depth, depth
#: budget, description.
Key = tuple[str, str, int, int, str]
#: A note as made: where, pointer, message.
Note = tuple[str, str, str]


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class Converted:
    """One kept conversion: its result, its notes (``where`` relative) and what it asked."""

    spec: dict[str, Any] | None
    nullable: bool
    notes: tuple[Note, ...]
    #: The refs the conversion asked about, and those of them that were on the stack.
    asked: frozenset[str]
    on_stack: frozenset[str]

    def fits(self, stack: Iterable[str]) -> bool:
        return self.asked.intersection(stack) == self.on_stack

    def result(self) -> tuple[dict[str, Any] | None, bool]:
        return (None if self.spec is None else dict(self.spec)), self.nullable


@final
@dataclass(slots=True, kw_only=True)
class _Frame:
    """A conversion under way: where its notes start in the log, the refs it asked about."""

    where: str
    start: int
    asked: set[str] = field(default_factory=set)


class Conversions:
    """The conversions of one import (see the module's docstring)."""

    def __init__(self) -> None:
        #: How many conversions were given back instead of made again.
        self.served = 0
        self._kept: dict[Key, list[Converted]] = {}
        self._frames: list[_Frame] = []
        #: Every note made while a conversion is under way, in order.
        self._log: list[Note] = []

    def find(self, key: Key, stack: tuple[str, ...]) -> Converted | None:
        for converted in self._kept.get(key, ()):
            if converted.fits(stack):
                self.served += 1
                if self._frames:
                    self._frames[-1].asked |= converted.asked
                return converted
        return None

    def noted(self, where: str, pointer: str, message: str) -> None:
        """A note was made: the conversions under way made it too."""
        if self._frames:
            self._log.append((where, pointer, message))

    def asked(self, ref: str) -> None:
        """The conversion under way asked whether ``ref`` is on the stack."""
        if self._frames:
            self._frames[-1].asked.add(ref)

    def start(self, where: str) -> None:
        self._frames.append(_Frame(where=where, start=len(self._log)))

    def abandon(self) -> None:
        """The conversion under way raised: what it asked counts for the one around it."""
        frame = self._pop()
        if not self._frames:
            del self._log[frame.start :]

    def finish(
        self, key: Key, stack: tuple[str, ...], spec: dict[str, Any] | None, nullable: bool
    ) -> None:
        """The conversion under way gave ``(spec, nullable)`` for ``stack``: keep it."""
        frame = self._pop()
        notes = self._log[frame.start :]
        if not self._frames:
            del self._log[frame.start :]
        prefix = frame.where
        if not all(where.startswith(prefix) for where, _, _ in notes):
            return  # a note outside its own ``where`` could not be made again elsewhere
        asked = frozenset(frame.asked)
        self._kept.setdefault(key, []).append(
            Converted(
                spec=None if spec is None else dict(spec),
                nullable=nullable,
                notes=tuple((where[len(prefix) :], at, text) for where, at, text in notes),
                asked=asked,
                on_stack=asked.intersection(stack),
            )
        )

    def _pop(self) -> _Frame:
        frame = self._frames.pop()
        if self._frames:
            self._frames[-1].asked |= frame.asked
        return frame
