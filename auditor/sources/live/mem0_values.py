"""mem0's values as the mem0 connector reads them, and the snapshot it reads them into.

Shared by the connector (:mod:`auditor.sources.live.mem0`), the store it reads
(:mod:`auditor.sources.live.mem0_store`) and its erasure (:mod:`auditor.sources.live.mem0_erasure`):

* the places: ``HISTORY`` and ``MESSAGES`` (``extra.retained_in`` of the text mem0 keeps in
  its history database), ``QUARANTINE_SUFFIX`` and ``QUARANTINED_MESSAGES`` (where memaudit
  moves what it quarantines), ``_ENTITIES_SUFFIX`` (mem0's entity collection);
* mem0's values read as memaudit's: :func:`_text`, :func:`_iso` (a timestamp),
  :func:`_expiry` (an ``expiration_date``), :func:`_source_type` (a role), :func:`_parse_scope`
  (a chat turn's session scope), :func:`_int_option` (a whole-number option) and
  :func:`_short` (an id shortened for a location);
* what a pull reads, in memory: :class:`_Owner` (mem0's entity ids of an item),
  :class:`_HistoryRow`, :class:`_Version` (a distinct text of a memory), :class:`_Message`
  (a chat turn) and :class:`_Snapshot` (all of it, payloads without vectors).

The names with a leading underscore are the connector's internals, not an interface of the
package.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from auditor.errors import InputError
from auditor.sources.files.base import SourceItem

__all__ = [
    "HISTORY",
    "MESSAGES",
    "QUARANTINED_MESSAGES",
    "QUARANTINE_SUFFIX",
    "_ENTITIES_SUFFIX",
    "_SCOPE_KEYS",
    "_HistoryRow",
    "_Message",
    "_Owner",
    "_Snapshot",
    "_Version",
    "_expiry",
    "_int_option",
    "_iso",
    "_parse_scope",
    "_short",
    "_source_type",
    "_text",
]

#: ``extra.retained_in`` of text mem0 keeps in its history table / messages table.
HISTORY = "mem0.history"
MESSAGES = "mem0.messages"
#: The side collection quarantined points are moved to.
QUARANTINE_SUFFIX = "_memaudit_quarantine"
#: The table of the history database quarantined chat turns are moved to.
QUARANTINED_MESSAGES = "memaudit_quarantined_messages"
_ENTITIES_SUFFIX = "_entities"
_SCOPE_KEYS = ("agent_id", "run_id", "user_id")
_ROLE_SOURCE = {
    "user": "explicit_statement",
    "assistant": "inferred",
    "tool": "tool_output",
    "function": "tool_output",
}


# -- small helpers -------------------------------------------------------------------------------


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def _iso(value: Any) -> str | None:
    """An ISO timestamp as given, when it parses (naive ones are UTC to memaudit)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return None
    return value


def _expiry(value: Any, today: date) -> tuple[str | None, bool, bool]:
    """(expires_at, expired, invalid) of a mem0 ``expiration_date`` (YYYY-MM-DD).

    mem0 hides a memory once ``expiration_date < today`` (UTC): it is valid through that
    day, so it expires at the start of the next one.
    """
    if value is None or value == "":
        return None, False, False
    try:
        day = date.fromisoformat(str(value))
    except ValueError:
        return None, False, True
    end = datetime(day.year, day.month, day.day, tzinfo=UTC) + timedelta(days=1)
    return end.isoformat(), day < today, False


def _source_type(role: Any, memory_type: Any = None) -> str:
    if memory_type == "procedural_memory":
        return "inferred"
    if role is None:
        return "inferred"  # extracted by mem0's LLM (add with infer=True)
    return _ROLE_SOURCE.get(str(role), "import")


def _unescape_scope(value: str) -> str:
    return value.replace("%3D", "=").replace("%26", "&").replace("%25", "%")


def _parse_scope(scope: Any) -> dict[str, str]:
    """mem0's session scope (``agent_id=a&run_id=r&user_id=u``, %-escaped) as a dict."""
    out: dict[str, str] = {}
    if not isinstance(scope, str):
        return out
    for part in scope.split("&"):
        key, sep, value = part.partition("=")
        if sep and key in _SCOPE_KEYS and value:
            out[key] = _unescape_scope(value)
    return out


def _int_option(source: str, name: str, value: Any, default: int) -> int:
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise InputError(f"source {source!r}: option {name} must be a whole number") from None
    if number < 1:
        raise InputError(f"source {source!r}: option {name} must be at least 1")
    return number


def _short(ident: str) -> str:
    return ident[:8] + ("…" if len(ident) > 8 else "")


@dataclass(frozen=True)
class _Owner:
    """Whose a mem0 item is: mem0's entity ids."""

    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None

    @classmethod
    def of(cls, payload: dict[str, Any]) -> _Owner:
        return cls(
            _text(payload.get("user_id")) or None,
            _text(payload.get("agent_id")) or None,
            _text(payload.get("run_id")) or None,
        )

    def __bool__(self) -> bool:
        return bool(self.user_id or self.agent_id or self.run_id)


@dataclass
class _HistoryRow:
    row_id: str
    memory_id: str
    old: str | None
    new: str | None
    event: str
    created_at: str | None
    updated_at: str | None
    actor_id: str | None
    role: str | None


@dataclass
class _Version:
    external_id: str
    text: str
    since: str | None
    until: str | None = None
    role: str | None = None
    actor_id: str | None = None


@dataclass
class _Message:
    row_id: str
    scope: dict[str, str]
    role: str | None
    content: str | None
    name: str | None
    created_at: str | None
    quarantined: bool = False


@dataclass
class _Snapshot:
    """Everything a pull reads, in memory (payloads without vectors)."""

    points: dict[str, dict[str, Any]] = field(default_factory=dict)
    quarantined: dict[str, dict[str, Any]] = field(default_factory=dict)
    entities: dict[str, dict[str, Any]] = field(default_factory=dict)
    history: dict[str, list[_HistoryRow]] = field(default_factory=dict)
    messages: list[_Message] = field(default_factory=list)
    errors: list[SourceItem] = field(default_factory=list)
    read_via: str = "files"
