"""Append-only, hash-chained audit events (tamper-evident).

Each event's hash covers its sequence number, id, time, actor, action, targets, details
and the previous event's hash. Appenders lock the single ``audit_head`` row, so concurrent
writers (threads, processes, daemon replicas) extend one chain in a total order. The head
also records the last sequence number and hash, so deleting events at the tail is caught
too. With ``MEMAUDIT_AUDIT_HMAC_KEY`` set the chain uses HMAC-SHA256, so someone who can
write to the database cannot rebuild a forged chain without the key.

Details never hold memory text or personal data: :func:`append` refuses such keys, and
callers pass ids, counts, field names and subject digests.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session
from ulid import ULID

from auditor.errors import AuditChainError
from auditor.hashing import canonical_json
from auditor.store.models import AuditEvent, AuditHead
from auditor.store.types import utcnow

__all__ = [
    "GENESIS_HASH",
    "VerifyResult",
    "append",
    "append_chunked",
    "compute_hash",
    "event_hash",
    "iter_events",
    "verify",
]

GENESIS_HASH = "0" * 64
_FORBIDDEN_DETAIL_KEYS = frozenset(
    {"fact", "text", "content", "value", "values", "subject", "email", "name", "snippet"}
)


def compute_hash(
    *,
    seq: int,
    event_id: str,
    ts: datetime,
    actor: str,
    action: str,
    target_type: str,
    target_ids: list[str],
    details: dict[str, Any],
    prev_hash: str,
    key: bytes | None = None,
) -> str:
    """The hash of one event given the previous event's hash."""
    payload = canonical_json(
        {
            "seq": seq,
            "event_id": event_id,
            "ts": ts.isoformat(timespec="microseconds"),
            "actor": actor,
            "action": action,
            "target_type": target_type,
            "target_ids": list(target_ids),
            "details": details,
            "prev_hash": prev_hash,
        }
    ).encode("utf-8")
    if key:
        return hmac.new(key, payload, hashlib.sha256).hexdigest()
    return hashlib.sha256(payload).hexdigest()


def event_hash(event: AuditEvent, key: bytes | None = None) -> str:
    """The hash an event should carry, from its own fields and ``prev_hash``."""
    return compute_hash(
        seq=event.seq,
        event_id=event.event_id,
        ts=event.ts,
        actor=event.actor,
        action=event.action,
        target_type=event.target_type,
        target_ids=list(event.target_ids),
        details=dict(event.details),
        prev_hash=event.prev_hash,
        key=key,
    )


def _check_details(details: dict[str, Any], path: str = "details") -> None:
    for name, value in details.items():
        if name.lower() in _FORBIDDEN_DETAIL_KEYS:
            raise ValueError(
                f"{path}.{name}: audit events must not carry memory text or personal data"
            )
        if isinstance(value, dict):
            _check_details(value, f"{path}.{name}")


def append(
    session: Session,
    *,
    actor: str,
    action: str,
    target_type: str,
    target_ids: Iterable[str] = (),
    details: dict[str, Any] | None = None,
    key: bytes | None = None,
) -> AuditEvent:
    """Append one event to the chain inside the caller's transaction.

    Args:
        session: a write session; the event commits or rolls back with the caller's work.
        actor: who did it (a user name, ``memaudit``, ``import``, ``daemon``).
        action: snake-case dotted verb, e.g. ``memory.quarantined``.
        target_type: ``memory``, ``finding``, ``subject``, ``import`` ...
        target_ids: the ids acted on.
        details: ids, counts, reasons; never memory text or personal data.
        key: the HMAC key, if the chain is keyed.

    Raises:
        ValueError: details carry a forbidden key (memory text or personal data).
    """
    details = dict(details or {})
    _check_details(details)
    head = session.execute(
        select(AuditHead).where(AuditHead.id == 1).with_for_update()
    ).scalar_one_or_none()
    if head is None:
        raise AuditChainError(
            "the audit log's head row is missing (the schema is incomplete or the log was "
            "tampered with); run `memaudit audit-log verify`"
        )
    event = AuditEvent(
        seq=head.last_seq + 1,
        event_id=str(ULID()),
        ts=utcnow(),
        actor=actor,
        action=action,
        target_type=target_type,
        target_ids=[str(t) for t in target_ids],
        details=details,
        prev_hash=head.last_hash,
    )
    event.hash = event_hash(event, key)
    session.add(event)
    head.last_seq = event.seq
    head.last_hash = event.hash
    session.flush()
    return event


def append_chunked(
    session: Session,
    *,
    actor: str,
    action: str,
    target_type: str,
    target_ids: list[str],
    details: dict[str, Any],
    key: bytes | None = None,
    size: int = 1000,
) -> None:
    """Append one event per ``size`` targets, each with the ``details`` and its ``count``."""
    for start in range(0, len(target_ids), size):
        chunk = target_ids[start : start + size]
        append(
            session,
            actor=actor,
            action=action,
            target_type=target_type,
            target_ids=chunk,
            details={**details, "count": len(chunk)},
            key=key,
        )


def iter_events(session: Session, batch: int = 5000) -> Iterator[AuditEvent]:
    """Every event in sequence order, read in batches (bounded memory)."""
    last = 0
    while True:
        rows = (
            session.execute(
                select(AuditEvent)
                .where(AuditEvent.seq > last)
                .order_by(AuditEvent.seq)
                .limit(batch)
            )
            .scalars()
            .all()
        )
        if not rows:
            return
        yield from rows
        last = rows[-1].seq
        session.expunge_all()


@dataclass(frozen=True)
class VerifyResult:
    """Outcome of :func:`verify`: ``ok``, how many events were checked, the first bad one."""

    ok: bool
    checked: int
    first_bad_seq: int | None = None
    first_bad_event_id: str | None = None
    reason: str | None = None


def verify(session: Session, key: bytes | None = None) -> VerifyResult:
    """Walk the chain and name the first event that does not verify.

    Detects a changed event (its hash no longer matches), a deleted event (a gap in the
    sequence, or a broken link), reordered events (broken links) and a truncated tail
    (the head records a later event than the log holds).
    """
    expected_prev = GENESIS_HASH
    expected_seq = 1
    checked = 0
    for ev in iter_events(session):
        if ev.seq != expected_seq:
            return VerifyResult(
                False,
                checked,
                ev.seq,
                ev.event_id,
                f"sequence gap: expected event {expected_seq}, found {ev.seq} "
                f"(events {expected_seq}..{ev.seq - 1} are missing)",
            )
        if ev.prev_hash != expected_prev:
            return VerifyResult(
                False,
                checked,
                ev.seq,
                ev.event_id,
                "link broken: prev_hash does not match the previous event's hash "
                "(an event before it was changed, removed or reordered)",
            )
        recomputed = event_hash(ev, key)
        if recomputed != ev.hash:
            return VerifyResult(
                False, checked, ev.seq, ev.event_id, "content changed: hash does not match"
            )
        expected_prev = ev.hash
        expected_seq += 1
        checked += 1
    head = session.execute(select(AuditHead).where(AuditHead.id == 1)).scalar_one_or_none()
    if head is not None and (head.last_seq != checked or head.last_hash != expected_prev):
        return VerifyResult(
            False,
            checked,
            checked + 1 if head.last_seq > checked else head.last_seq,
            None,
            f"tail mismatch: the head records event {head.last_seq} but the log ends at "
            f"{checked} (events were removed from the end, or the head was changed)",
        )
    return VerifyResult(True, checked)


def count(session: Session) -> int:
    """Number of events in the log."""
    return int(session.execute(select(func.count()).select_from(AuditEvent)).scalar_one())
