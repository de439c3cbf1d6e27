"""Bounded YAML for files people hand to memaudit: rule packs, source mappings.

PyYAML's ``safe_load`` runs no code, but it still builds whatever the text describes: nine
nested aliases (a "billion laughs" bomb) become a few hundred bytes that expand into
gigabytes as soon as anything walks the result, and a ``!!python/object`` tag ends in a
``ConstructorError`` with no line. This module reads YAML through a loader built on
:class:`yaml.SafeLoader` that refuses, at the event where they appear and with
``file:line``:

* aliases (``*name``) and anchors (``&name``) -- and with them ``<<`` merge keys;
* any explicit tag other than the JSON-like core ones (``!!str``, ``!!int``, ``!!float``,
  ``!!bool``, ``!!null``, ``!!map``, ``!!seq``, ``!!timestamp``);
* nesting deeper than :data:`auditor.limits.MAX_YAML_DEPTH`;
* more than :data:`auditor.limits.MAX_YAML_NODES` nodes;
* a file larger than the caller's byte limit (checked on the file size, before reading).

:func:`check_events` applies the same refusals to the parser's events only (with the C
parser when the caller loads with ``CSafeLoader``), for a source's page front matter.

So a hostile file costs at most one pass over a bounded number of bytes. Errors are
:class:`YamlRefused` (an :class:`~auditor.errors.InputError`) whose message is
``<where>:<line>: <reason>``; they never quote the file's values.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from auditor import limits
from auditor.errors import InputError

__all__ = [
    "ALLOWED_TAGS",
    "YamlRefused",
    "check_events",
    "compose_documents",
    "load_file",
    "load_text",
    "read_bounded",
]

_CORE = "tag:yaml.org,2002:"
#: Explicit tags a file may use (all others are refused).
ALLOWED_TAGS = frozenset(
    _CORE + name for name in ("str", "int", "float", "bool", "null", "map", "seq", "timestamp")
)


class YamlRefused(InputError):
    """A YAML file breaks a safety rule; the message starts with ``<where>:<line>``."""


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that refuses aliases, anchors, non-core tags, deep nesting, many nodes."""

    def __init__(self, stream: str, where: str, max_depth: int, max_nodes: int) -> None:
        super().__init__(stream)
        self._where = where
        self._max_depth = max_depth
        self._max_nodes = max_nodes
        self._depth = 0
        self._nodes = 0

    def _refuse(self, event: yaml.Event, reason: str) -> YamlRefused:
        line = event.start_mark.line + 1 if event.start_mark is not None else 1
        return YamlRefused(f"{self._where}:{line}: {reason}")

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        if isinstance(event, yaml.AliasEvent):
            raise self._refuse(event, "YAML aliases (*name) are not allowed in this file")
        if getattr(event, "anchor", None) is not None:
            raise self._refuse(event, "YAML anchors (&name) are not allowed in this file")
        tag = getattr(event, "tag", None)
        if tag is not None and tag not in ALLOWED_TAGS:
            raise self._refuse(
                event, "YAML tags other than the core ones (!!str, !!int, ...) are not allowed"
            )
        self._nodes += 1
        if self._nodes > self._max_nodes:
            raise self._refuse(event, f"more than {self._max_nodes:,} YAML nodes in one file")
        self._depth += 1
        try:
            if self._depth > self._max_depth:
                raise self._refuse(event, f"nested deeper than {self._max_depth} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def check_events(
    text: str,
    *,
    loader: Any = yaml.SafeLoader,
    first_line: int = 1,
    max_depth: int = limits.MAX_YAML_DEPTH,
    max_nodes: int = limits.MAX_YAML_NODES,
) -> str | None:
    """Scan ``text``'s parse events (with a fast C loader if given) without building values.

    For callers that load with ``yaml.CSafeLoader`` for speed (a source's page front
    matter): the same refusals as :func:`compose_documents`, at the parser's speed.

    Args:
        text: the YAML text.
        loader: the loader class whose parser to use.
        first_line: the line number of ``text``'s first line in its file.
        max_depth: deepest nesting allowed.
        max_nodes: most nodes allowed.

    Returns:
        None when the text is acceptable, else ``"line N: reason"``. Invalid YAML is left
        to the caller's own load (which reports it).
    """
    depth = nodes = 0
    try:
        for event in yaml.parse(text, Loader=loader):
            line = (event.start_mark.line if event.start_mark is not None else 0) + first_line
            if isinstance(event, yaml.AliasEvent):
                return f"line {line}: YAML aliases (*name) are not allowed"
            if not isinstance(event, (yaml.NodeEvent, yaml.CollectionEndEvent)):
                continue
            if getattr(event, "anchor", None) is not None:
                return f"line {line}: YAML anchors (&name) are not allowed"
            tag = getattr(event, "tag", None)
            if tag is not None and tag not in ALLOWED_TAGS:
                return f"line {line}: YAML tags other than the core ones are not allowed"
            if isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
                continue
            nodes += 1
            if nodes > max_nodes:
                return f"line {line}: more than {max_nodes:,} YAML nodes"
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > max_depth:
                    return f"line {line}: nested deeper than {max_depth} levels"
    except yaml.YAMLError:
        return None  # the caller's load reports it, with its own wording
    return None


def compose_documents(
    text: str,
    where: str,
    *,
    max_depth: int = limits.MAX_YAML_DEPTH,
    max_nodes: int = limits.MAX_YAML_NODES,
    fast: bool = True,
) -> tuple[list[yaml.Node], list[Any]]:
    """Parse ``text`` into its documents' nodes and their Python values (bounded).

    Read by libyaml when it is there and the text passes the checks on the C parser's
    events (:func:`_fast_compose`); otherwise, and for every error, by the bounded
    pure-Python loader.

    Args:
        text: the YAML text.
        where: what to name in errors (a path as the user knows it).
        max_depth: deepest nesting allowed.
        max_nodes: most nodes allowed over all documents.
        fast: try libyaml first (False: the pure-Python loader only).

    Returns:
        The non-empty documents' root nodes and, in the same order, their values.

    Raises:
        YamlRefused: an alias, anchor, foreign tag, too deep or too many nodes; or
            invalid YAML (``<where>:<line>: invalid YAML: <problem>``).
    """
    quick = _fast_compose(text, max_depth=max_depth, max_nodes=max_nodes) if fast else None
    if quick is not None:
        return quick
    loader = _BoundedLoader(text, where, max_depth, max_nodes)
    try:
        nodes, values = _documents(loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else 1
        raise YamlRefused(f"{where}:{line}: invalid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise YamlRefused(f"{where}:1: invalid YAML: {type(exc).__name__}") from None
    finally:
        loader.dispose()
    return nodes, values


_SLOW = object()


def _fast_compose(
    text: str, *, max_depth: int, max_nodes: int
) -> tuple[list[yaml.Node], list[Any]] | None:
    """:func:`compose_documents` by libyaml (``CSafeLoader``), or None: go the slow way.

    Only for a text that :func:`check_events` accepts with the C parser (the same
    refusals and bounds); the nodes carry the same line marks and the values are built by
    the same safe constructor. Anything else, invalid YAML included, goes the bounded
    pure-Python way, whose errors name the line.
    """
    loader_class = getattr(yaml, "CSafeLoader", None)
    if loader_class is None:
        return None
    refused = check_events(text, loader=loader_class, max_depth=max_depth, max_nodes=max_nodes)
    if refused is not None:
        return None
    loader = loader_class(text)
    try:
        return _documents(loader)
    except yaml.YAMLError:
        return None
    finally:
        loader.dispose()


def _documents(loader: Any) -> tuple[list[yaml.Node], list[Any]]:
    """A loader's non-empty documents: their root nodes, then their values."""
    nodes: list[yaml.Node] = []
    while loader.check_node():
        node = loader.get_node()
        if node is not None:
            nodes.append(node)
    return nodes, [loader.construct_document(node) for node in nodes]


def _fast_load(text: str) -> Any:
    """The text's value read by libyaml (``CSafeLoader``), or ``_SLOW``.

    Only for a text that :func:`check_events` accepts with the C parser (the same refusals)
    and that holds at most one document; anything else, invalid YAML included, goes the
    slow way, whose errors name the line. The value is the one the pure-Python loader
    builds (the same safe constructor), several times faster on large files.
    """
    loader = getattr(yaml, "CSafeLoader", None)
    if loader is None or check_events(text, loader=loader) is not None:
        return _SLOW
    try:
        documents = list(yaml.load_all(text, Loader=loader))
    except yaml.YAMLError:
        return _SLOW
    if len(documents) > 1:
        return _SLOW
    return documents[0] if documents else None


def load_text(text: str, where: str) -> Any:
    """The value of a one-document YAML text (None when empty), bounded as above.

    Read by libyaml when it is there and the text passes the checks on the C parser's
    events; otherwise, and for every error, by the bounded pure-Python loader.

    Raises:
        YamlRefused: see :func:`compose_documents`; or more than one document.
    """
    fast = _fast_load(text)
    if fast is not _SLOW:
        return fast
    nodes, values = compose_documents(text, where)
    if len(nodes) > 1:
        raise YamlRefused(f"{where}:{nodes[1].start_mark.line + 1}: only one YAML document")
    return values[0] if values else None


def read_bounded(path: Path, where: str, max_bytes: int) -> str:
    """Read a UTF-8 file of at most ``max_bytes`` bytes (size checked before reading).

    Raises:
        InputError: the file cannot be read, is too large or is not UTF-8.
    """
    try:
        size = path.stat().st_size
        limits.check_file_size(size, max_bytes, what="the file", where=where)
        with path.open("rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(f"{where}: cannot read: {exc.strerror or exc}") from None
    limits.check_file_size(len(data), max_bytes, what="the file", where=where)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{where}: not UTF-8 text (byte {exc.start})") from None


def load_file(
    path: Path, where: str | None = None, max_bytes: int = limits.MAX_CONFIG_FILE_BYTES
) -> Any:
    """:func:`load_text` of a file read with :func:`read_bounded`."""
    shown = where or str(path)
    return load_text(read_bounded(path, shown, max_bytes), shown)
