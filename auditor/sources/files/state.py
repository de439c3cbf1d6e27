"""The structured hand-over note of SEEDS.md section 2 (``state.json``).

Every item of every section becomes one memory about the ``--subject``: the objective,
constraints, decisions, completed work, open questions, next actions and consulted sources.
An item's own ``source`` is kept as given (``state_item_source``, null when missing) so that a
detector can flag work marked completed without evidence.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from auditor.sources.files._common import (
    file_mtime_utc,
    read_json_document,
    render_value,
    show_name,
    spread,
    stable_id,
)
from auditor.sources.files.base import Source, SourceItem

__all__ = ["SECTIONS", "StateSource"]


@dataclass(frozen=True)
class _Section:
    category: str
    kind: str
    strings: bool  # whether a bare string is accepted as an item


#: JSON section -> (category, kind, strings accepted). "objective" is a single string.
SECTIONS: dict[str, _Section] = {
    "objective": _Section("objective", "semantic", True),
    "constraints": _Section("constraint", "semantic", True),
    "decisions": _Section("decision", "semantic", True),
    "completed": _Section("completed", "episodic", True),
    "open_questions": _Section("open_question", "procedural", True),
    "next_actions": _Section("next_action", "procedural", True),
    "sources": _Section("source", "procedural", False),
}


#: Top-level keys that describe the note itself rather than hold items.
_OWN_KEYS = frozenset({"subject", "namespace"})


class _ItemError(Exception):
    """One item has the wrong shape; the message names the problem, never the text."""


@dataclass(frozen=True)
class _Item:
    fact: str
    key: str  # what identifies the item within its section (decision id or text)
    item_source: str | None
    extra: dict[str, Any]


def _optional_text(item: dict[str, Any], name: str) -> str | None:
    value = item.get(name)
    if value is not None and not isinstance(value, str):
        raise _ItemError(f"'{name}' must be a string, got {type(value).__name__}")
    return value


def _required_text(item: dict[str, Any], name: str) -> str:
    value = _optional_text(item, name)
    if value is None:
        raise _ItemError(f"missing '{name}'")
    if not value.strip():
        raise _ItemError(f"'{name}' is empty")
    return value


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _parse_item(section: str, value: Any) -> _Item:
    """Check one item's shape and pull out its fields.

    Raises:
        _ItemError: naming what is wrong (never the item's text).
    """
    spec = SECTIONS[section]
    if isinstance(value, str):
        if not spec.strings:
            raise _ItemError("expected an object with 'path' and 'purpose', got a string")
        if not value.strip():
            raise _ItemError("empty text")
        value = {"text": value}
    elif not isinstance(value, dict):
        shape = "a string or an object with 'text'" if spec.strings else "an object with 'path'"
        raise _ItemError(f"expected {shape}, got {_type_name(value)}")

    item_source = _optional_text(value, "source")
    if section == "sources":
        path = _required_text(value, "path")
        purpose = _optional_text(value, "purpose")
        checked_at = value.get("checked_at")
        if checked_at is not None and not isinstance(checked_at, str):
            raise _ItemError(
                f"'checked_at' must be a date string or null, got {type(checked_at).__name__}"
            )
        fact = f"{path}: {purpose}" if purpose and purpose.strip() else path
        return _Item(fact, path, item_source, {"checked_at": checked_at, "state_path": path})

    text = _required_text(value, "text")
    if section != "decisions":
        return _Item(text, text, item_source, {})
    raw_id = value.get("id")
    if raw_id is not None and (isinstance(raw_id, bool) or not isinstance(raw_id, str | int)):
        raise _ItemError(f"'id' must be a string, got {type(raw_id).__name__}")
    decision_id = None if raw_id is None else str(raw_id)
    if decision_id is not None and not decision_id.strip():
        raise _ItemError("'id' is empty")
    status = value.get("status")
    if status is not None and not isinstance(status, str):
        raise _ItemError(f"'status' must be a string, got {type(status).__name__}")
    extra = {"decision_id": decision_id, "state_status": status}
    return _Item(text, decision_id if decision_id is not None else text, item_source, extra)


class StateSource(Source):
    """Reads a ``state.json`` hand-over note: one memory per item.

    Attributes:
        ignored_keys: unknown top-level keys, in file order (set by :meth:`items`).
    """

    format = "state"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ignored_keys: list[str] = []

    def items(self) -> Iterator[SourceItem]:
        """Yield one item per objective, constraint, decision, ... entry.

        Raises:
            InputError: no ``--subject``, or the file is unreadable, too big, not JSON, or not a
                JSON object.
        """
        pairs, size = read_json_document(
            self.path, self.settings, "with the state.json sections (objective, decisions, ...)"
        )
        doc = dict(pairs)  # duplicate top-level keys: the last one wins, as in any JSON reader
        # --subject / --namespace win; a note may name its own subject and namespace
        if self.subject is None and isinstance(doc.get("subject"), str):
            self.subject = doc["subject"]
        subject = self.require_subject()
        self.ignored_keys = [
            key for key in dict.fromkeys(doc) if key not in SECTIONS and key not in _OWN_KEYS
        ]
        own_namespace = doc.get("namespace") if isinstance(doc.get("namespace"), str) else None
        namespace = self.namespace or own_namespace or f"state:{self.path.stem}"
        stamp = file_mtime_utc(self.path)

        entries: list[tuple[str, str, Any]] = []  # (section, location, value)
        section_errors: list[tuple[str, str]] = []
        for section in SECTIONS:
            if section not in doc or doc[section] is None:
                continue
            value = doc[section]
            if section == "objective":
                entries.append((section, section, value))
            elif isinstance(value, list):
                entries.extend((section, f"{section}[{i}]", v) for i, v in enumerate(value))
            else:
                section_errors.append((section, f"expected a list, got {_type_name(value)}"))

        for where, reason in section_errors:
            yield SourceItem(where, error=reason)
        estimates = [len(render_value(value).encode("utf-8", "replace")) for _, _, value in entries]
        seen: dict[tuple[str, str], str] = {}
        for (section, where, value), consumed in zip(entries, spread(estimates, size), strict=True):
            if section == "objective" and not isinstance(value, str):
                yield SourceItem(
                    where, error=f"expected a string, got {_type_name(value)}", consumed=consumed
                )
                continue
            try:
                item = _parse_item(section, value)
            except _ItemError as exc:
                yield SourceItem(where, error=str(exc), consumed=consumed)
                continue
            first = seen.setdefault((section, item.key), where)
            if first != where:
                what = "decision id" if item.extra.get("decision_id") is not None else "item"
                shown = f" '{show_name(item.key)}'" if what == "decision id" else ""
                yield SourceItem(
                    where,
                    error=f"duplicate {what}{shown}: same as {first} (ids would collide)",
                    consumed=consumed,
                )
                continue
            if len(item.fact.encode("utf-8", "surrogatepass")) > self.settings.max_record_bytes:
                yield SourceItem(
                    where,
                    error=f"entry is over the limit of {self.settings.max_record_bytes:,} bytes",
                    consumed=consumed,
                )
                continue
            spec = SECTIONS[section]
            raw: dict[str, Any] = {
                "memory_id": stable_id("st_", namespace, subject, section, item.key),
                "subject": subject,
                "namespace": namespace,
                "kind": spec.kind,
                "category": spec.category,
                "fact": item.fact,
                "source": {
                    "type": "import",
                    "uri": item.item_source or f"state://{self.path.name}#{section}",
                },
                "created_at": stamp,
                "updated_at": stamp,
                "state_section": section,
                "state_item_source": item.item_source,
                **item.extra,
            }
            external_id = item.extra.get("decision_id") or where
            yield SourceItem(where, raw=raw, consumed=consumed, external_id=external_id)
