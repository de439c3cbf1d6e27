"""LangGraph store rows as the LangGraph connectors read them: external ids, namespaces,
timestamps, values, and the subject of a namespace.

Shared by the connectors (:mod:`auditor.sources.live.langgraph`) and their common base
(:mod:`auditor.sources.live.langgraph_base`); nothing here touches a database:

* external ids: :func:`item_external_id` (``<prefix>/<key>``, each part percent-encoded),
  :func:`vector_external_id` (the item's id + ``#<field name>``) and
  :func:`parse_external_id`; :func:`split_prefix` and :func:`join_namespace` between the
  ``prefix`` column and a namespace tuple;
* values: :func:`parse_time` (every timestamp form the stores write), :func:`memory_text`
  (the memory text of a value, option ``text_field``), ``_load_value`` (an item's JSON value,
  within the size limit), ``_iso``, ``_category`` and ``_number``;
* :class:`SubjectRule`: option ``subject_from``, the subject a namespace names;
* ``_Row`` (a ``store`` row as read), ``_location`` (where an item is, for messages: a
  digest of its id) and ``_parse_cursor`` (the time of a cursor the connector made).

The names with a leading underscore are the connectors' internals, not an interface of the
package.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, unquote

from auditor.errors import InputError
from auditor.sources.files._common import reject_constant

__all__ = [
    "TEXT_KEYS",
    "_CONTROL",
    "SubjectRule",
    "_Row",
    "_category",
    "_iso",
    "_load_value",
    "_location",
    "_number",
    "_parse_cursor",
    "item_external_id",
    "join_namespace",
    "memory_text",
    "parse_external_id",
    "parse_time",
    "split_prefix",
    "vector_external_id",
]

TEXT_KEYS = ("content", "text", "memory", "data")
#: Characters left as they are in an external id; ``/``, ``#`` and ``%`` are always encoded.
_ID_SAFE = "-_.:@~+=,!$&'()*;"
_SUBJECT = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,31}:\S")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


# -- ids and namespaces -----------------------------------------------------------------


def item_external_id(prefix: str, key: str) -> str:
    """The external id of a store item: ``<prefix>/<key>``, each part percent-encoded."""
    return f"{quote(prefix, safe=_ID_SAFE)}/{quote(key, safe=_ID_SAFE)}"


def vector_external_id(prefix: str, key: str, field_name: str) -> str:
    """The external id of one vector row: the item's id + ``#`` + the field name."""
    return f"{item_external_id(prefix, key)}#{quote(field_name, safe=_ID_SAFE)}"


def parse_external_id(external_id: str) -> tuple[str, str, str | None]:
    """(prefix, key, field name or None) of an external id made by this module.

    Raises:
        InputError: not such an id.
    """
    head, sep, field_part = external_id.partition("#")
    prefix, slash, key = head.partition("/")
    if not slash or not prefix or "/" in key:
        raise InputError("not a LangGraph store item id (expected '<namespace>/<key>')")
    return unquote(prefix), unquote(key), unquote(field_part) if sep else None


def split_prefix(prefix: str) -> tuple[str, ...]:
    """The namespace tuple of a ``prefix`` column value."""
    return tuple(prefix.split("."))


def join_namespace(namespace: Sequence[str]) -> str:
    """The ``prefix`` column value of a namespace tuple."""
    return ".".join(namespace)


# -- values -----------------------------------------------------------------------------


def parse_time(value: Any) -> datetime | None:
    """A timestamp as LangGraph stores write it, as an aware UTC datetime (None: unreadable).

    Accepts datetimes (PostgreSQL), ISO 8601 text with a space or ``T`` and with or
    without an offset (SQLite: ``2026-05-01 10:00:00.123456+00:00`` from Python's adapter,
    ``2026-05-01 10:00:00`` from ``DATETIME()``/``CURRENT_TIMESTAMP``; naive means UTC),
    and Unix seconds.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, int | float):
        if not math.isfinite(value) or not 0 < value < 1e11:
            return None
        return datetime.fromtimestamp(float(value), tz=UTC)
    if isinstance(value, bytes | bytearray | memoryview):
        try:
            value = bytes(value).decode("ascii")
        except UnicodeDecodeError:
            return None
    if not isinstance(value, str):
        return None
    raw = value.strip()
    if not raw or len(raw) > 64:
        return None
    if raw.endswith(("Z", "z")):
        raw = raw[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(raw)
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _text_at(value: Any, path: Sequence[str]) -> str | None:
    for part in path:
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    if isinstance(value, str) and value.strip():
        return value
    return None


def memory_text(value: Any, text_field: str | None) -> str:
    """The memory text of an item value (see the module docstring, ``text_field``)."""
    if text_field:
        found = _text_at(value, text_field.split("."))
        if found is not None:
            return found
    elif isinstance(value, Mapping):
        for key in TEXT_KEYS:
            found = _text_at(value, (key,))
            if found is not None:
                return found
            inner = value.get(key)
            if isinstance(inner, Mapping):
                for inner_key in TEXT_KEYS:
                    found = _text_at(inner, (inner_key,))
                    if found is not None:
                        return found
    if isinstance(value, str) and value.strip():
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _load_value(raw: Any, limit: int) -> Any:
    """The item's JSON value (SQLite: text; PostgreSQL: already decoded).

    Raises:
        ValueError: too large, not valid JSON (the message holds no content).
    """
    if isinstance(raw, bytes | bytearray | memoryview):
        raw = bytes(raw)
        if len(raw) > limit:
            raise ValueError(f"value is over the limit of {limit:,} bytes")
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"value is not valid UTF-8 (byte {exc.start + 1})") from None
    if isinstance(raw, str):
        if len(raw) > limit:  # characters >= bytes / 4; cheap first check
            raise ValueError(f"value is over the limit of {limit:,} bytes")
        try:
            return json.loads(raw, parse_constant=reject_constant)
        except json.JSONDecodeError as exc:
            raise ValueError(f"value is not valid JSON: {exc.msg} (column {exc.colno})") from None
        except RecursionError:
            raise ValueError("value is nested too deeply") from None
    return raw


# -- options ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SubjectRule:
    """How a subject derives from a namespace (``subject_from``)."""

    element: int | None = None
    prefix: str = "user:"

    @classmethod
    def parse(cls, source: str, raw: Any) -> SubjectRule:
        """The rule from the option value.

        Raises:
            InputError: a malformed option (the message names the source).
        """
        if raw is None:
            return cls()
        if isinstance(raw, bool):
            raise InputError(f"source {source!r}: subject_from must be an index or a table")
        if isinstance(raw, int):
            return cls(element=raw)
        if isinstance(raw, Mapping):
            unknown = set(raw) - {"element", "prefix"}
            if unknown:
                raise InputError(
                    f"source {source!r}: subject_from has unknown keys "
                    f"{', '.join(sorted(map(str, unknown)))} (known: element, prefix)"
                )
            element = raw.get("element")
            prefix = raw.get("prefix", "user:")
            if isinstance(element, bool) or not isinstance(element, int):
                raise InputError(f"source {source!r}: subject_from.element must be an integer")
            if not isinstance(prefix, str) or _CONTROL.search(prefix) or len(prefix) > 64:
                raise InputError(f"source {source!r}: subject_from.prefix must be short text")
            return cls(element=element, prefix=prefix)
        raise InputError(
            f"source {source!r}: subject_from must be an integer or "
            '{element = N, prefix = "user:"}'
        )

    def index(self, namespace: Sequence[str]) -> int | None:
        """Position of the subject element in ``namespace``, or None."""
        if self.element is None:
            for i, label in enumerate(namespace):
                if _SUBJECT.match(label) and label == label.strip():
                    return i
            return None
        i = self.element if self.element >= 0 else len(namespace) + self.element
        return i if 0 <= i < len(namespace) else None

    def subject(self, namespace: Sequence[str]) -> str | None:
        """The subject of ``namespace`` (None: the namespace names none)."""
        i = self.index(namespace)
        if i is None:
            return None
        label = namespace[i]
        subject = label if self.element is None else f"{self.prefix}{label}"
        if not _SUBJECT.match(subject) or subject != subject.strip() or len(subject) > 256:
            return None
        return subject


# -- rows and record fields ------------------------------------------------------------


@dataclass(frozen=True)
class _Row:
    prefix: str
    key: str
    value: Any
    created_at: Any
    updated_at: Any
    expires_at: Any
    ttl_minutes: Any
    vectors: int


def _location(what: str, external_id: str) -> str:
    """Where an item is, for messages: a digest of its id (namespaces and keys may name a
    person, and locations end up in import reports)."""
    digest = hashlib.sha256(external_id.encode("utf-8", errors="surrogatepass")).hexdigest()
    return f"langgraph {what} {digest[:16]}"


def _category(value: Any) -> str:
    if isinstance(value, Mapping):
        cat = value.get("category")
        if (
            isinstance(cat, str)
            and 0 < len(cat) <= 64
            and cat == cat.strip()
            and not _CONTROL.search(cat)
        ):
            return cat
    return "note"


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _parse_cursor(cursor: str | None) -> datetime | None:
    """The time of a cursor this module made; None (a full pull) for anything else, e.g. a
    cursor an erasure redacted."""
    if not cursor or not cursor.startswith("updated_at:"):
        return None
    return parse_time(cursor.partition(":")[2])
