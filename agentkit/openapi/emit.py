"""Writing definitions as YAML text, fast: libyaml's text at a fraction of its time.

An import of a large description (GitHub's: 1,100 files, 6 MB) spent most of
its time writing YAML. The values written are plain data (mappings, lists,
strings, numbers, booleans, None): ``yamlwriter.Writer`` writes them as text
directly, as libyaml's emitter writes them with ``OPTIONS``. Characters outside
the Basic Multilingual Plane (emoji) are written escaped (``"\\U0001F6A7"``), as
libyaml does; the values read back are the same.

A value the writer does not take (another type) is written through PyYAML with
libyaml's emitter (``libyaml_dump``): the nodes built here directly, and each
distinct scalar's implicit tag resolved once.
"""

from __future__ import annotations

import io
from typing import Any, Final

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from agentkit.openapi.yamlwriter import Writer

_BaseDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

_STR: Final = "tag:yaml.org,2002:str"
_INT: Final = "tag:yaml.org,2002:int"
_FLOAT: Final = "tag:yaml.org,2002:float"
_BOOL: Final = "tag:yaml.org,2002:bool"
_NULL: Final = "tag:yaml.org,2002:null"
_MAP: Final = "tag:yaml.org,2002:map"
_SEQ: Final = "tag:yaml.org,2002:seq"
#: The options every written file uses: keys in the order given, block style
#: everywhere (an empty collection ``{}`` or ``[]``), and no line width: a string
#: is never folded onto a second line, so a template (``{{ inputs.id }}``) or a
#: phrase is found whole by grep and replaced whole by sed.
OPTIONS: Final[dict[str, Any]] = {
    "sort_keys": False,
    "allow_unicode": True,
    "width": 2**31 - 1,  # libyaml's largest: no width
    "default_flow_style": False,
}


class _Dumper(_BaseDumper):  # type: ignore[misc]  # a dynamic base: CSafeDumper or SafeDumper
    """The safe dumper, answering the emitter's two questions per scalar from a table."""

    def __init__(self, stream: Any, **options: Any) -> None:
        super().__init__(stream, **options)
        self._implicit: dict[str, str] = {}

    # No path resolvers: the emitter's calls on entering and leaving a node do nothing.
    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass

    def resolve(self, kind: type[Node], value: Any, implicit: Any) -> str:
        # The tag a scalar would get if written plain; quoted (implicit[0] false) it
        # is always a string. No path resolvers, so nothing else matters.
        if kind is not ScalarNode:
            tag: str = super().resolve(kind, value, implicit)
            return tag
        if not implicit[0]:
            return _STR
        tag = self._implicit.get(value) or super().resolve(kind, value, implicit)
        self._implicit[value] = tag
        return tag


def dump(document: Any, writer: Writer | None = None) -> str:
    """``document`` (mappings, lists, strings, numbers, booleans, None) as YAML text,
    as ``yaml.safe_dump(document, Dumper=CSafeDumper, **OPTIONS)`` writes it.

    ``writer`` is one kept for the documents of one import, which then shares what it
    learnt of one with the next: none of them may change once written.
    """
    text = (writer or Writer()).dump(document)
    return libyaml_dump(document) if text is None else text


def libyaml_dump(document: Any) -> str:
    """``dump`` through PyYAML and libyaml's emitter (or PyYAML's, without libyaml)."""
    stream = io.StringIO()
    dumper = _Dumper(stream, **OPTIONS)
    try:
        dumper.open()
        dumper.serialize(_node(document, dumper))
        dumper.close()
    finally:
        dumper.dispose()
    return stream.getvalue()


def _node(value: Any, dumper: Any) -> Node:
    kind = type(value)
    if kind is str:
        return ScalarNode(_STR, value)
    # Strings, most of every file, are made in place: a call each was a tenth of an import.
    if kind is dict:
        pairs = [
            (
                ScalarNode(_STR, key) if type(key) is str else _node(key, dumper),
                ScalarNode(_STR, item) if type(item) is str else _node(item, dumper),
            )
            for key, item in value.items()
        ]
        return MappingNode(_MAP, pairs, flow_style=False)
    if kind is list:
        items = [
            ScalarNode(_STR, item) if type(item) is str else _node(item, dumper) for item in value
        ]
        return SequenceNode(_SEQ, items, flow_style=False)
    if kind is bool:
        return ScalarNode(_BOOL, "true" if value else "false")
    if kind is int:
        return ScalarNode(_INT, str(value))
    if value is None:
        return ScalarNode(_NULL, "null")
    # Floats (.inf, .nan, 1e+20 written 1.0e+20) and anything else: PyYAML's own way.
    node: Node = dumper.represent_data(value)
    return node
