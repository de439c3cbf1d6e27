"""What a scan run reads: its selection, the shard of a subject, the windows of a big one.

* :class:`_Selection`: a full run reads every memory; an incremental one reads what
  :func:`_changed_filter` matches, the memories written since the watermark (``changed_at``)
  and those whose ``expires_at`` passed since then.
* :func:`shard_of`: the shard a subject belongs to, a stable hash of the subject.
* :class:`_Window`: one window of a subject too big to be scanned whole (see
  :mod:`auditor.scan.scanner`).
* ``_VIEW_COLUMNS`` and :func:`_consents`: the memory columns a batch reads into
  :class:`~auditor.detectors.base.MemoryView` and the consents of its subjects.
* :func:`_read_batch`: what one batch of subjects (or one window) reads: its rows, the
  memories changed since the watermark, its consents; :func:`_batch_focus` narrows the
  evaluation to a window's chunk.

The names with a leading underscore are the scanner's internals (:mod:`auditor.scan.scanner`),
not an interface of the package.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Row, or_, select
from sqlalchemy.orm import Session

from auditor.store.models import Consent, Memory

__all__ = [
    "_VIEW_COLUMNS",
    "_Selection",
    "_Window",
    "_batch_focus",
    "_changed_filter",
    "_consents",
    "_read_batch",
    "shard_of",
]

#: Columns read into :class:`MemoryView` (memory_id first).
_VIEW_COLUMNS = (
    "memory_id",
    "subject",
    "fact",
    "trust_tier",
    "namespace",
    "kind",
    "category",
    "source_type",
    "source_uri",
    "status",
    "supersedes",
    "created_at",
    "updated_at",
    "expires_at",
    "confidence",
    "content_hash",
    "origin",
    "access_count",
    "extra",
)


def shard_of(subject: str, shards: int) -> int:
    """The shard a subject belongs to: a stable hash of the subject, modulo ``shards``."""
    digest = hashlib.blake2b(subject.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % shards


@dataclass
class _Selection:
    """Which memories a run scans: all of them (``full``), or those changed since ``since``;
    ``now`` is the scan time."""

    full: bool
    since: datetime | None
    now: datetime


def _changed_filter(sel: _Selection) -> Any:
    assert sel.since is not None
    return or_(
        Memory.changed_at > sel.since,
        (Memory.expires_at > sel.since) & (Memory.expires_at <= sel.now),
    )


class _Window:
    """One window of a big subject: ``ids`` loaded (the overlap, then the chunk), in
    memory-id order; ``chunk`` the memories this window evaluates; ``first``: no overlap."""

    __slots__ = ("chunk", "first", "ids")

    def __init__(self, ids: list[str], chunk: list[str], first: bool) -> None:
        self.ids = ids
        self.chunk = frozenset(chunk)
        self.first = first


def _consents(
    session: Session, subjects: Iterable[str], now: datetime
) -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for subject, category, revoked in session.execute(
        select(Consent.subject, Consent.category, Consent.revoked_at).where(
            Consent.subject.in_(list(subjects))
        )
    ):
        if revoked is None or revoked > now:
            out[subject].add(category)
    return {k: frozenset(v) for k, v in out.items()}


def _read_batch(
    session: Session, subjects: Sequence[str], sel: _Selection, window: _Window | None
) -> tuple[list[Row[Any]], set[str] | None, dict[str, frozenset[str]]]:
    """A batch's memory rows, the ids changed since the watermark (None: a full run) and
    its subjects' consents. With ``window``, only the window's memories are read."""
    columns = [getattr(Memory, name) for name in _VIEW_COLUMNS]
    # plain rows, not ORM objects: the scan only reads, and this is its hottest query
    rows: list[Row[Any]]
    if window is None:
        rows = list(
            session.execute(
                select(*columns)
                .where(Memory.subject.in_(subjects))
                .order_by(Memory.subject, Memory.memory_id)
            ).all()
        )
    else:
        rows = []
        for start in range(0, len(window.ids), 500):
            part = window.ids[start : start + 500]
            rows += session.execute(
                select(*columns).where(Memory.memory_id.in_(part)).order_by(Memory.memory_id)
            ).all()
    changed_ids: set[str] | None = None
    if not sel.full:
        changed_ids = set(
            session.scalars(
                select(Memory.memory_id).where(Memory.subject.in_(subjects), _changed_filter(sel))
            )
        )
    return rows, changed_ids, _consents(session, subjects, sel.now)


def _batch_focus(
    changed_ids: set[str] | None, window: _Window | None
) -> tuple[frozenset[str] | None, set[str] | None]:
    """What a batch evaluates: ``(focus, changed_ids)``, the pairs' focus of the subject
    rules and the memories the memory rules run on (None: all of them)."""
    focus: frozenset[str] | None = None if changed_ids is None else frozenset(changed_ids)
    if window is not None:
        if focus is not None:
            focus = focus & window.chunk
        elif not window.first:
            focus = window.chunk  # pairs inside the overlap were the last window's
        if changed_ids is not None:
            changed_ids &= window.chunk
        else:
            changed_ids = set(window.chunk)
    return focus, changed_ids
