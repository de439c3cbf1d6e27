"""Where a memory of a write-back source stands between memaudit's decision and the source.

memaudit decides (a reviewer or a rule quarantines, a reviewer restores); the write-back
outbox (:mod:`auditor.sources.outbox`) carries the decision into the source; the next sync
(:mod:`auditor.sources.reconcile`) reads back what the source holds. Until the source holds
what memaudit decided, the memory carries ``extra.write_back``::

    {"action": "quarantine", "state": "failed", "since": "2026-12-01T10:00:00+00:00",
     "attempts": 5, "label": "held in memaudit, still live in the source"}

``state`` is ``pending`` (queued or being retried), ``failed`` (gave up after the retries;
``memaudit sources actions --retry ID`` puts it back) or ``drift`` (a sync found the source
serving the item although memaudit had carried, or tried to carry, the decision). The flag
is dropped when the source is seen holding the decided state. It holds no personal data.

Listings show it through :func:`display_status` (``quarantined (held in memaudit, still
live in the source)``); JSON output has it in ``extra.write_back``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from auditor.store.types import utcnow

__all__ = [
    "KEY",
    "LABELS",
    "clear_write_back",
    "display_status",
    "mark_write_back",
    "source_state_after",
    "write_back_label",
]

KEY = "write_back"
#: What a memory whose decision has not reached its source is, per action.
LABELS = {
    "quarantine": "held in memaudit, still live in the source",
    "restore": "restored in memaudit, still withheld by the source",
}
#: ``extra.source_status`` the source reports once it holds the action's result.
_AFTER = {"quarantine": "quarantined", "restore": "live"}


class _HasExtra(Protocol):
    extra: dict[str, Any]


def source_state_after(action: str) -> str | None:
    """The ``source_status`` a source reports once ``action`` reached it."""
    return _AFTER.get(action)


def mark_write_back(memory: _HasExtra, action: str, state: str, *, attempts: int = 0) -> None:
    """Flag ``memory`` (its ``extra``) as not yet held by its source in ``action``'s state."""
    if action not in LABELS:
        return
    extra = dict(memory.extra or {})
    found = extra.get(KEY)
    old: dict[str, Any] = found if isinstance(found, dict) else {}
    since = old.get("since") if old.get("action") == action else None
    flag = {
        "action": action,
        "state": state,
        "since": since or utcnow().isoformat(),
        "attempts": int(attempts),
        "label": LABELS[action],
    }
    if old == flag:
        return
    extra[KEY] = flag
    memory.extra = extra


def clear_write_back(memory: _HasExtra, *, source_status: str | None = None) -> bool:
    """Drop the flag (the source holds the decision); optionally record what it holds.

    Returns:
        Whether anything changed.
    """
    extra = dict(memory.extra or {})
    changed = extra.pop(KEY, None) is not None
    if source_status is not None and extra.get("source_status") not in (source_status, "gone"):
        extra["source_status"] = source_status
        changed = True
    if changed:
        memory.extra = extra
    return changed


def write_back_label(extra: Mapping[str, Any] | None) -> str | None:
    """``"held in memaudit, still live in the source (failed)"``, or None when in step."""
    flag = (extra or {}).get(KEY)
    if not isinstance(flag, dict) or flag.get("action") not in LABELS:
        return None
    return f"{LABELS[str(flag['action'])]} ({flag.get('state', 'pending')})"


def display_status(status: str, extra: Mapping[str, Any] | None) -> str:
    """A memory's status as listings show it: the status, plus the write-back state."""
    label = write_back_label(extra)
    return f"{status} ({label})" if label else status
