"""Append-only, hash-chained audit events (tamper-evident).

Each event's hash covers its sequence number, id, time, actor, action, targets, details
and the previous event's hash. Appenders lock the single ``audit_head`` row, so concurrent
writers (threads, processes, daemon replicas) extend one chain in a total order. The head
also records the last sequence number and hash, so deleting events at the tail is caught
too. With ``MEMAUDIT_AUDIT_HMAC_KEY`` set the chain uses HMAC-SHA256, so someone who can
write to the database cannot rebuild a forged chain without the key.

Details never hold memory text or personal data: :func:`append` refuses such keys, and
callers pass ids, counts, field names and subject digests. Free text that slips through
(a reviewer's note naming a person, an actor who is the subject) can be **redacted** by an
erasure without breaking the chain: :func:`redact` first verifies the whole chain, then
rewrites the fields of the affected events and appends an ``audit.redacted`` event that
carries, per redacted event, a *witness*: the sha256 of the redacted row including its
(unchanged) ``hash`` and ``prev_hash``. :func:`verify` accepts an event whose recomputed
hash no longer matches only when a later ``audit.redacted`` event holds a witness equal to
the row as it is now. The links are untouched (every later event still points at the
original hash), the witness is itself covered by the chain, and changing a redacted row
afterwards breaks its witness: the log stays tamper-evident, and shows what was redacted,
when and by whom.
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
    "REDACTION_ACTION",
    "Redaction",
    "VerifyResult",
    "Pending",
    "append",
    "append_chunked",
    "append_many",
    "compute_hash",
    "event_hash",
    "iter_events",
    "redact",
    "row_witness",
    "verify",
]

GENESIS_HASH = "0" * 64
#: The action of the events that record redactions (and carry their witnesses).
REDACTION_ACTION = "audit.redacted"
_WITNESSES_PER_EVENT = 1000
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


@dataclass(frozen=True)
class Pending:
    """An event to append (see :func:`append_many`): what :func:`append` takes, as data."""

    actor: str
    action: str
    target_type: str
    target_ids: tuple[str, ...] = ()
    details: dict[str, Any] | None = None


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
    pending = Pending(actor, action, target_type, tuple(str(t) for t in target_ids), details)
    return append_many(session, [pending], key=key)[0]


def append_many(
    session: Session, events: Iterable[Pending], *, key: bytes | None = None
) -> list[AuditEvent]:
    """Append events in order, as :func:`append` one after another would: one lock of the
    head, one flush (a batch of a scan's quarantines costs one round of statements).

    Raises:
        ValueError: an event's details carry a forbidden key (nothing is appended).
    """
    todo = [(e, dict(e.details or {})) for e in events]
    for _event, details in todo:
        _check_details(details)
    if not todo:
        return []
    head = session.execute(
        select(AuditHead).where(AuditHead.id == 1).with_for_update()
    ).scalar_one_or_none()
    if head is None:
        raise AuditChainError(
            "the audit log's head row is missing (the schema is incomplete or the log was "
            "tampered with); run `memaudit audit-log verify`"
        )
    out: list[AuditEvent] = []
    for pending, details in todo:
        event = AuditEvent(
            seq=head.last_seq + 1,
            event_id=str(ULID()),
            ts=utcnow(),
            actor=pending.actor,
            action=pending.action,
            target_type=pending.target_type,
            target_ids=[str(t) for t in pending.target_ids],
            details=details,
            prev_hash=head.last_hash,
        )
        event.hash = event_hash(event, key)
        session.add(event)
        head.last_seq = event.seq
        head.last_hash = event.hash
        out.append(event)
    session.flush()
    return out


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
        for row in rows:  # only the events: a caller's pending work in the session stays
            session.expunge(row)


@dataclass(frozen=True)
class VerifyResult:
    """Outcome of :func:`verify`: ``ok``, how many events were checked, the first bad one."""

    ok: bool
    checked: int
    first_bad_seq: int | None = None
    first_bad_event_id: str | None = None
    reason: str | None = None
    redacted: int = 0  # events accepted through a redaction witness


def verify(session: Session, key: bytes | None = None) -> VerifyResult:
    """Walk the chain and name the first event that does not verify.

    Detects a changed event (its hash no longer matches), a deleted event (a gap in the
    sequence, or a broken link), reordered events (broken links) and a truncated tail
    (the head records a later event than the log holds). An event redacted by
    :func:`redact` verifies through the witness a later ``audit.redacted`` event holds.

    Args:
        session: any session (read-only is enough).
        key: the HMAC key, if the chain is keyed.

    Returns:
        The outcome; ``redacted`` counts the events accepted through a witness.
    """
    witnesses = _witnesses(session)
    expected_prev = GENESIS_HASH
    expected_seq = 1
    checked = 0
    redacted = 0
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
            witness = witnesses.get(ev.seq)
            if witness is None or witness[0] <= ev.seq or witness[1] != row_witness(ev):
                return VerifyResult(
                    False, checked, ev.seq, ev.event_id, "content changed: hash does not match"
                )
            redacted += 1
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
            redacted,
        )
    return VerifyResult(True, checked, redacted=redacted)


def count(session: Session) -> int:
    """Number of events in the log."""
    return int(session.execute(select(func.count()).select_from(AuditEvent)).scalar_one())


def row_witness(event: AuditEvent) -> str:
    """sha256 of an event row as stored: every field, its ``hash`` and ``prev_hash`` too.

    Args:
        event: the (redacted) event.

    Returns:
        The hex digest a redaction records, so that the redacted row stays checkable.
    """
    payload = canonical_json(
        {
            "seq": event.seq,
            "event_id": event.event_id,
            "ts": event.ts.isoformat(timespec="microseconds"),
            "actor": event.actor,
            "action": event.action,
            "target_type": event.target_type,
            "target_ids": list(event.target_ids),
            "details": dict(event.details),
            "prev_hash": event.prev_hash,
            "hash": event.hash,
        }
    ).encode("utf-8")
    return hashlib.sha256(payload).hexdigest()


def _witnesses(session: Session) -> dict[int, tuple[int, str]]:
    """Redacted seq -> (seq of the redaction event, witness); the latest redaction wins."""
    found: dict[int, tuple[int, str]] = {}
    for seq, details in session.execute(
        select(AuditEvent.seq, AuditEvent.details)
        .where(AuditEvent.action == REDACTION_ACTION)
        .order_by(AuditEvent.seq)
    ):
        entries = details.get("witnesses") if isinstance(details, dict) else None
        if not isinstance(entries, dict):
            continue  # a malformed redaction event fails its own hash check
        for target, witness in entries.items():
            if isinstance(witness, str) and str(target).isdigit():
                found[int(target)] = (int(seq), witness)
    return found


@dataclass(frozen=True)
class Redaction:
    """New values for the fields of one event; ``None`` keeps a field as it is."""

    actor: str | None = None
    target_ids: list[str] | None = None
    details: dict[str, Any] | None = None


def redact(
    session: Session,
    redactions: dict[int, Redaction],
    *,
    actor: str,
    details: dict[str, Any],
    key: bytes | None = None,
) -> list[AuditEvent]:
    """Rewrite fields of events (an erasure removing personal data) and record witnesses.

    The whole chain is verified first: a redaction never hides an earlier break. Each
    redacted event keeps its ``hash`` and ``prev_hash``; one ``audit.redacted`` event per
    1,000 redacted events records their witnesses (see the module docstring).

    Args:
        session: a write session (the caller's transaction).
        redactions: seq -> the new field values.
        actor: who redacts (recorded on the ``audit.redacted`` events).
        details: ids and counts to record with the redaction (e.g. the erasure request).
        key: the HMAC key, if the chain is keyed.

    Returns:
        The ``audit.redacted`` events appended (none when ``redactions`` is empty).

    Raises:
        AuditChainError: the chain does not verify (nothing is redacted then), or an event
            to redact does not exist.
        ValueError: ``details`` carry a forbidden key.
    """
    if not redactions:
        return []
    session.flush()
    result = verify(session, key)
    if not result.ok:
        raise AuditChainError(
            f"the audit log does not verify (event {result.first_bad_seq}: {result.reason}); "
            "events are not redacted until it is repaired"
        )
    witnesses: dict[str, str] = {}
    for seq in sorted(redactions):
        change = redactions[seq]
        event = session.execute(
            select(AuditEvent).where(AuditEvent.seq == seq)
        ).scalar_one_or_none()
        if event is None:
            raise AuditChainError(f"cannot redact audit event {seq}: it does not exist")
        if change.actor is not None:
            event.actor = change.actor
        if change.target_ids is not None:
            event.target_ids = list(change.target_ids)
        if change.details is not None:
            event.details = dict(change.details)
        witnesses[str(seq)] = row_witness(event)
    session.flush()
    appended = []
    items = list(witnesses.items())
    for start in range(0, len(items), _WITNESSES_PER_EVENT):
        chunk = dict(items[start : start + _WITNESSES_PER_EVENT])
        appended.append(
            append(
                session,
                actor=actor,
                action=REDACTION_ACTION,
                target_type="audit_event",
                target_ids=list(chunk),
                details={**details, "count": len(chunk), "witnesses": chunk},
                key=key,
            )
        )
    return appended
