"""Executing an erasure as durable states, and resuming one that was interrupted.

An approved request moves through states stored in ``erasure_requests.status``, each
change committed before the work it announces (``docs/erasure.md``, "Crash-consistent
erasure")::

    approved --T1--> deleting --ledger, key, batches, T2--> deleted --sources, T3-->
    verifying --reclaim, search, T4--> executed (done)

* **T1** (``approved -> deleting``): a *provisional receipt* is stored on the request
  (status, digest, start, lease; ``verified: false``, verdict ``in progress``).
* **write-ahead**: the erasure ledger line (request id, digest, the memory ids about to
  go; no personal data) is appended and fsynced before anything is deleted, so a restore
  re-applies the erasure even if the process dies next, or the live store is lost.
* **crypto-shredding**: when a subject key store is configured, the subject's data key is
  destroyed first; every encrypted copy (WAL, replicas, backups) becomes unreadable.
* **batches**: memories are deleted ``_BATCH`` at a time, each batch with its findings and
  tombstones in its own short transaction (the progress is kept on the provisional
  receipt); **T2** deletes the rest of the subject's rows, redacts free text and the audit
  log and sets ``deleted``. The subject id stays on the request until T3, so a resumed run
  can still search for it.
* **T3** (``deleted -> verifying``): write-back sources are carried first; then the request
  drops the subject id (only its digest remains).
* **T4** (``verifying -> executed``): storage is reclaimed, everything is searched, and the
  final receipt replaces the provisional one.

:func:`auditor.erasure.queue.run_queue` (the daemon's ``erasure_queue`` job) executes
approved requests and resumes in-flight ones whose lease expired (their process is
presumed dead): ``deleting`` repeats the idempotent steps, ``deleted`` carries sources and verifies,
``verifying`` reclaims storage and closes the receipt. A resumed receipt is never
``verified`` unless it could search what a fresh one does: the identifying values die
with the process, so it says ``incomplete`` and why.

No lock is held across the erasure: the value collection, the source calls, storage
reclaim and verification run outside any transaction; each batch, T1-T4 hold the
database's write lock only for their own statements.

Tests inject crashes with :data:`crash_hook` (called with the name of each step boundary).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog
from sqlalchemy import Text, delete, func, insert, select, text, type_coerce
from sqlalchemy.orm import Session

from auditor.erasure import receipts as erasure_receipts
from auditor.erasure.common import (
    APPROVED,
    DELETED,
    DELETING,
    EXECUTED,
    LEDGER_FORMAT,
    RECEIPT_FORMAT,
    VERIFYING,
    Receipt,
    Verification,
    _chunks,
    _receipt_hash,
    _safe_name,
)
from auditor.erasure.execute import erase_in_session, purge_findings
from auditor.erasure.storage import append_ledger, keystore, ledger_path, reclaim_storage
from auditor.erasure.storage import verify_erasure as _verify
from auditor.erasure.subjects import held_counts, other_identifiers
from auditor.erasure.values import collect_values
from auditor.errors import InputError, NotFoundError
from auditor.hashing import canonical_json
from auditor.lifecycle import audit_log
from auditor.lifecycle.audit_key import audit_key
from auditor.sources import outbox as source_actions
from auditor.store.crypto import is_sealed
from auditor.store.db import Database
from auditor.store.models import ErasureRequest, Memory, SourceAction, Tombstone
from auditor.store.residue import Matcher
from auditor.store.types import iso_utc, utcnow

if TYPE_CHECKING:
    from auditor.judge.llm import Judge

__all__ = ["LEASE", "STEPS", "Progress", "crash_hook", "execute"]

log = structlog.get_logger(__name__)

#: Step boundaries, in order: :data:`crash_hook` is called with each name.
STEPS = ("deleting", "ledger", "key", "batch", "deleted", "sources", "verifying", "reclaimed")
#: Called at every step boundary with its name (tests kill the process there).
crash_hook: Callable[[str], None] | None = None
#: Memories deleted per transaction.
_BATCH = 2000
#: How long an in-flight request belongs to the process running it (refreshed per step).
LEASE = timedelta(minutes=15)
#: Subjects of rows whose owner a source lost (``mem0-unattributed:<source>``).
_UNOWNED = re.compile(r"^[a-z0-9_.-]*unattributed:", re.IGNORECASE)

Progress = Callable[[str], None]


def _step(name: str) -> None:
    if crash_hook is not None:
        crash_hook(name)


@dataclass
class _Run:
    """What one execution of a request knows (values in memory only)."""

    request_id: int
    subject: str | None
    digest: str
    actor: str
    executed_by: str
    started: datetime
    requested_by: str = ""
    requested_at: datetime | None = None
    user_initiated: bool = False
    approved_by: str = ""
    values: set[str] = field(default_factory=set)
    short: set[str] = field(default_factory=set)
    values_read: bool = False  # the values were read from the store (a resume may not)
    value_stats: dict[str, Any] = field(default_factory=dict)
    held_before: dict[str, int] = field(default_factory=dict)
    source_items: dict[str, int] = field(default_factory=dict)
    unowned: dict[str, int] = field(default_factory=dict)
    memory_ids: list[str] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    ledger: str = "not configured"
    data_key: str | None = None
    resumed_from: str | None = None
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)
    source_rows: list[int] = field(default_factory=list)
    progress: Progress | None = None

    def say(self, message: str) -> None:
        if self.progress is not None:
            self.progress(f"erasure {self.request_id}: {message}")


# -- the provisional receipt ----------------------------------------------------------------


def _provisional(run: _Run, state: str) -> dict[str, Any]:
    """The receipt an in-flight request holds: what is known so far, never ``verified``."""
    data: dict[str, Any] = {
        "format": RECEIPT_FORMAT,
        "request_id": run.request_id,
        "status": state,
        "provisional": True,
        "subject_digest": run.digest,
        "started_at": iso_utc(run.started),
        "lease_until": iso_utc(utcnow() + LEASE),
        "ledger": run.ledger,
        "data_key": run.data_key,
        "progress": json.loads(canonical_json(run.counts)),
        "held_before": dict(run.held_before),
        "resumed_from": run.resumed_from,
        "verified": False,
        "verdict": "in progress",
    }
    data["receipt_sha256"] = _receipt_hash(data)
    return data


def _move(session: Session, run: _Run, expect: str, state: str) -> ErasureRequest:
    """Lock the request row, check it is in ``expect``, move it to ``state``."""
    req = session.execute(
        select(ErasureRequest).where(ErasureRequest.id == run.request_id).with_for_update()
    ).scalar_one_or_none()
    if req is None:
        raise NotFoundError(f"no erasure request with id {run.request_id}")
    if req.status != expect:  # another process (the daemon, a second CLI) was first
        raise InputError(f"erasure request {run.request_id} is {req.status} already")
    req.status = state
    req.receipt = _provisional(run, state)
    return req


# -- preparing ------------------------------------------------------------------------------


def _source_context(session: Session, subject: str) -> tuple[dict[str, int], dict[str, int]]:
    """(source name -> the subject's items from it, unowned subject -> rows) before a delete."""
    items: Counter[str] = Counter()
    for extra in session.scalars(select(Memory.extra).where(Memory.subject == subject)):
        name = extra.get("source_name") if isinstance(extra, dict) else None
        if isinstance(name, str) and name:
            items[name] += 1
    unowned = {
        str(s): int(n)
        for s, n in session.execute(
            select(Memory.subject, func.count())
            .where(Memory.subject.contains("unattributed:", autoescape=True))
            .group_by(Memory.subject)
        )
        if s != subject and _UNOWNED.match(str(s))
    }
    return dict(items), unowned


def _key_alive(db: Database, subject: str) -> bool:
    """Whether the subject's facts can be read: no encryption, the key is there, or none of
    the subject's facts is sealed (a store that turned encryption on before
    ``encrypt-store`` sealed its rows holds them in clear, with no key to look for)."""
    try:
        store = keystore(db)
        if store is None or store.exists(subject):
            return True
    except Exception:  # noqa: BLE001 - unknown: do not try to read sealed text
        return False
    with db.session() as session:
        facts = session.execute(
            select(type_coerce(Memory.fact, Text)).where(Memory.subject == subject)
        ).scalars()
        return not any(is_sealed(f) for f in facts)


def _prepare(db: Database, run: _Run, req: ErasureRequest, *, values: bool) -> None:
    """Fill ``run`` with the request's facts and, unless resuming past them, the values."""
    subject = run.subject or ""
    run.requested_by = _safe_name(
        req.requested_by, subject, run.digest, is_subject=req.user_initiated
    )
    run.requested_at, run.user_initiated = req.requested_at, req.user_initiated
    run.approved_by = _safe_name(req.decided_by, subject, run.digest)
    run.value_stats = {
        "searched": 0,
        "short_searched": 0,
        "too_short_to_search": 0,
        "shared_with_other_subjects": 0,
        "pii_detector": "not run: resumed after the values were deleted",
    }
    if run.subject is None:
        return
    with db.session() as session:
        if values and _key_alive(db, run.subject):
            run.values, run.short, run.value_stats = collect_values(
                session, run.subject, db.settings
            )
            run.values_read = True
        held = held_counts(session, run.subject, besides_request=run.request_id)
        run.held_before = run.held_before or held
        items, run.unowned = _source_context(session, run.subject)
        run.source_items = run.source_items or items
        run.memory_ids = sorted(
            session.scalars(select(Memory.memory_id).where(Memory.subject == run.subject))
        )


# -- deleting -------------------------------------------------------------------------------


def _write_ahead(db: Database, run: _Run) -> None:
    """Append the ledger line before anything is deleted (fsynced)."""
    path = ledger_path(db)
    if path is None:
        run.ledger = "not configured"
        return
    with db.session() as session:
        done = session.scalars(
            select(Tombstone.memory_id).where(
                Tombstone.request_id == run.request_id, Tombstone.memory_id.is_not(None)
            )
        )
        ids = sorted({*run.memory_ids, *(m for m in done if m)})
    try:
        append_ledger(
            path,
            {
                "format": LEDGER_FORMAT,
                "request_id": run.request_id,
                "subject_digest": run.digest,
                "executed_at": iso_utc(run.started),
                "stage": "write-ahead",
                "memory_ids": ids,
            },
        )
        run.ledger = "appended"  # before the delete (write-ahead)
    except OSError as exc:
        run.ledger = f"failed: {type(exc).__name__}"
        log.error("erasure_ledger_failed", request_id=run.request_id, error_type=type(exc).__name__)


def _destroy_key(db: Database, run: _Run) -> None:
    """Crypto-shredding: destroy the subject's data key before the rows go."""
    if run.subject is None:
        return
    try:
        store = keystore(db)
        if store is None:
            return
        from auditor.store.crypto import cipher_of

        cipher = cipher_of(db.engine.dialect)
        gone = store.destroy(run.subject)
        if cipher is not None:  # this process's caches must forget it too
            cipher.forget(run.subject)
            gone = bool(cipher.keystore.destroy(run.subject)) or gone
        where = store.describe()
        if gone:
            run.data_key = f"data key destroyed in {where}"
        elif run.data_key is None and run.resumed_from is not None:
            run.data_key = (
                f"no data key left in {where} (destroyed before the interruption, or none held)"
            )
        elif run.data_key is None:
            run.data_key = f"no data key held in {where}"
    except Exception as exc:  # noqa: BLE001 - verification reports a key that survived
        run.data_key = f"destroy failed: {type(exc).__name__}"
        log.error("erasure_key_destroy_failed", request_id=run.request_id)


def _add_counts(total: dict[str, Any], part: dict[str, Any]) -> None:
    for name, value in part.items():
        if isinstance(value, bool):
            total[name] = value
        elif isinstance(value, int):
            total[name] = int(total.get(name, 0)) + value
        elif isinstance(value, dict) and all(isinstance(v, int) for v in value.values()):
            merged = Counter(total.get(name) or {})
            merged.update(value)
            total[name] = dict(sorted(merged.items()))
        else:
            total[name] = value


def _delete_batches(db: Database, run: _Run, matcher: Matcher) -> None:
    """Delete memories ``_BATCH`` at a time while more than a batch is left."""
    assert run.subject is not None
    total = len(run.memory_ids)
    while True:
        with db.write() as session:
            ids_status = session.execute(
                select(Memory.memory_id, Memory.status)
                .where(Memory.subject == run.subject)
                .order_by(Memory.memory_id)
                .limit(_BATCH + 1)
            ).all()
            if len(ids_status) <= _BATCH:
                return
            batch = ids_status[:_BATCH]
            ids = [m for m, _s in batch]
            part: dict[str, Any] = {
                "memories": len(ids),
                "memories_by_status": dict(Counter(s for _m, s in batch)),
            }
            secure = session.get_bind().dialect.name == "sqlite"
            if secure:
                session.execute(text("PRAGMA secure_delete = ON"))
            purge_findings(session, set(ids), set(), matcher, part)
            now = utcnow()
            known: set[str | None] = set()
            for chunk in _chunks(ids):
                session.execute(delete(Memory).where(Memory.memory_id.in_(chunk)))
                known.update(
                    session.scalars(
                        select(Tombstone.memory_id).where(Tombstone.memory_id.in_(chunk))
                    )
                )
            fresh = [mid for mid in ids if mid not in known]
            part["tombstones"] = len(fresh)
            if fresh:
                session.execute(
                    insert(Tombstone),
                    [
                        {
                            "kind": "memory",
                            "memory_id": mid,
                            "subject_digest": run.digest,
                            "erased_at": now,
                            "request_id": run.request_id,
                        }
                        for mid in fresh
                    ],
                )
            _add_counts(run.counts, part)
            _move(session, run, DELETING, DELETING)  # progress on the provisional receipt
            if secure:
                session.execute(text("PRAGMA secure_delete = OFF"))
        done = int(run.counts.get("memories", 0))
        run.say(f"deleted {done} of {max(total, done)} memories")
        _step("batch")


def _delete(db: Database, run: _Run) -> None:
    """Everything of the ``deleting`` state: ledger, key, batches, then T2."""
    assert run.subject is not None
    subject = run.subject
    _write_ahead(db, run)
    _step("ledger")
    _destroy_key(db, run)
    _step("key")
    with db.session() as session:
        others = other_identifiers(session, subject, [subject, *run.values])
    matcher = Matcher([subject, *run.values], exclude=others)
    run.say(f"deleting {len(run.memory_ids)} memories")
    _delete_batches(db, run, matcher)
    with db.write() as session:
        _move(session, run, DELETING, DELETING)
        outcome = erase_in_session(
            session,
            db.settings,
            subject,
            digest=run.digest,
            request_id=run.request_id,
            actor=run.actor,
            matcher=Matcher([subject, *run.values]),
        )
        batched = dict(run.counts)
        _add_counts(run.counts, outcome.counts)
        run.counts["tombstones"] = int(batched.get("tombstones", 0)) + int(
            outcome.counts.get("tombstones", 0)
        )
        run.notes.extend(outcome.notes)
        # live sources with write-back: queued here (same transaction), carried next
        run.source_rows = source_actions.queue_erasure(
            session,
            db.settings,
            subject,
            digest=run.digest,
            request_id=run.request_id,
            memory_ids=sorted({*run.memory_ids, *outcome.memory_ids}),
        )
        req = session.get(ErasureRequest, run.request_id)
        assert req is not None
        req.receipt = _provisional(run, DELETED)  # erase_in_session set the state
    log.info(
        "erasure_deleted",
        request_id=run.request_id,
        memories=run.counts.get("memories", 0),
        findings_deleted=run.counts.get("findings_deleted", 0),
        audit_events_redacted=run.counts.get("audit_events_redacted", 0),
    )
    run.say(f"deleted: {run.counts.get('memories', 0)} memories")


# -- after the delete -----------------------------------------------------------------------


def _carry_sources(db: Database, run: _Run) -> None:
    """Carry the erasure into write-back sources (queued in T2), then T3."""
    rows = run.source_rows
    if run.resumed_from is not None:  # the queued rows of this request that still wait
        with db.session() as session:
            rows = list(
                session.scalars(
                    select(SourceAction.id).where(
                        SourceAction.erasure_request_id == run.request_id,
                        SourceAction.action == "erase",
                        SourceAction.status == source_actions.PENDING,
                    )
                )
            )
        run.source_rows = rows
    if rows:
        run.say(f"erasing in {len(rows)} source(s)")
        run.sources = source_actions.execute_erasures(db, rows, sorted(run.values))
    _step("sources")
    with db.write() as session:
        req = _move(session, run, DELETED, VERIFYING)
        req.subject = None  # only the digest stays; verification must not find it here


def _clear_judge(judge: Judge | None) -> str:
    """Empty the judge's verdict cache and drop the pairs it deferred to a batch (they may
    hold erased facts; a later scan defers what still exists again)."""
    if judge is None:
        return (
            "not held by this process; the daemon empties its verdict cache at its next "
            "erasure_queue run"
        )
    dropped = judge.clear_cache()
    take = getattr(judge, "take_deferred", None)
    deferred = len(take()) if callable(take) else 0
    return f"cleared ({dropped} verdicts, {deferred} deferred pairs)"


def _read_only_sources(db: Database, items: dict[str, int], carried: set[str]) -> dict[str, int]:
    """Sources the erasure was not carried into -> the subject's items they held."""
    from auditor.sources.registry import list_sources

    out = {name: n for name, n in items.items() if name not in carried}
    try:
        configured = list_sources(db)
    except Exception as exc:  # noqa: BLE001 - the receipt says what it can
        log.warning("erasure_sources_unlisted", error_type=type(exc).__name__)
        configured = []
    for info in configured:
        if info.enabled and info.config.name not in carried:
            out.setdefault(info.config.name, 0)
    return out


def _interrupted_verification(run: _Run) -> Verification:
    """What a run resumed after the subject id was cleared can say: nothing was searched."""
    return Verification(
        ok=False,
        subject_digest=run.digest,
        unsearchable=(
            "verification was interrupted after the request dropped the subject id; run "
            "`memaudit verify-erasure SUBJECT` to search for it",
        ),
    )


def _search(db: Database, run: _Run, log_paths: Sequence[Path]) -> Verification:
    """Search every table and file for the subject (nothing, once the request dropped it)."""
    if run.subject is not None:
        run.say("verifying: searching every table and file")
        return _verify(
            db, run.subject, values=run.values, short_values=run.short, log_paths=log_paths
        )
    return _interrupted_verification(run)


def _receipt_notes(run: _Run) -> list[str]:
    """The receipt's notes: the delete's, and what a resumed run could not search for."""
    notes = list(run.notes)
    # not run.values: they are cleared once searched, before the receipt is written
    if run.resumed_from is not None and not run.values_read:
        notes.append(
            f"resumed after an interruption in state {run.resumed_from}: the identifying "
            "values were gone with the interrupted process, so only the subject id could be "
            "searched for"
        )
    return notes


def _final_receipt(
    db: Database,
    run: _Run,
    *,
    storage: dict[str, Any],
    verification: Verification,
    chain: audit_log.VerifyResult,
    key: bytes | None,
    judge: Judge | None,
) -> Receipt:
    """The final receipt, hashed over exactly what is stored (empties the judge's cache)."""
    notes = _receipt_notes(run)
    subject = run.subject or ""
    data: dict[str, Any] = {
        "format": RECEIPT_FORMAT,
        "request_id": run.request_id,
        "status": EXECUTED,
        "subject_digest": run.digest,
        "digest_keyed": key is not None,
        "requested_by": run.requested_by,
        "requested_at": iso_utc(run.requested_at),
        "user_initiated": run.user_initiated,
        "approved_by": run.approved_by,
        "executed_by": _safe_name(run.executed_by, subject, run.digest),
        "started_at": iso_utc(run.started),
        "finished_at": iso_utc(utcnow()),
        "counts": run.counts,
        "storage": storage,
        "caches": {"judge": _clear_judge(judge)},
        "ledger": run.ledger,
        **({"data_key": run.data_key} if run.data_key is not None else {}),
        **({"resumed_from": run.resumed_from} if run.resumed_from is not None else {}),
        "notes": notes,
        "verification": {**verification.as_dict(), "values": run.value_stats},
        **({"sources": run.sources} if run.source_rows else {}),
        "audit_chain": {
            "ok": chain.ok,
            "checked": chain.checked,
            "redacted_events": chain.redacted,
            "first_bad_seq": chain.first_bad_seq,
        },
        "held_before": run.held_before,
        **erasure_receipts.assess(
            erasure_receipts.ReceiptFacts(
                dialect=db.dialect,
                counts=run.counts,
                hits=verification.hits,
                searched=verification.searched,
                files=list(verification.files),
                unsearchable=verification.unsearchable,
                value_stats=run.value_stats,
                held_before=run.held_before,
                sources=run.sources if run.source_rows else {},
                read_only_sources=_read_only_sources(db, run.source_items, set(run.sources)),
                unowned=run.unowned,
                min_value_chars=db.settings.erasure_min_value_chars,
                chain_ok=chain.ok,
            )
        ),
    }
    data = json.loads(canonical_json(data))  # exactly what is stored and hashed
    data["receipt_sha256"] = _receipt_hash(data)
    return Receipt(data)


def _store_receipt(
    db: Database, run: _Run, receipt: Receipt, *, chain: audit_log.VerifyResult, key: bytes | None
) -> None:
    """T4: ``verifying -> executed``, the final receipt on the request, its audit event."""
    subject = run.subject or ""
    with db.write() as session:
        req = _move(session, run, VERIFYING, EXECUTED)
        req.receipt = receipt.as_dict()
        req.subject = None
        audit_log.append(
            session,
            actor=_safe_name(run.executed_by, subject, run.digest),
            action="erasure.receipt",
            target_type="erasure_request",
            target_ids=[str(run.request_id)],
            details={
                "subject_digest": run.digest,
                "receipt_sha256": receipt.sha256,
                "verified": receipt.ok,
                "verdict": receipt.verdict,
                "chain_ok": chain.ok,
            },
            key=key,
        )


def _finish(db: Database, run: _Run, *, log_paths: Sequence[Path], judge: Judge | None) -> Receipt:
    """The ``verifying`` state: reclaim storage, search, store the final receipt (T4)."""
    run.say("reclaiming storage")
    storage = reclaim_storage(db)
    _step("reclaimed")
    verification = _search(db, run, log_paths)
    run.values, run.short = set(), set()  # the values live no longer than the verification
    key = audit_key(db.settings)
    with db.session() as session:
        chain = audit_log.verify(session, key=key)
    receipt = _final_receipt(
        db, run, storage=storage, verification=verification, chain=chain, key=key, judge=judge
    )
    _store_receipt(db, run, receipt, chain=chain, key=key)
    log.info(
        "erasure_finished",
        request_id=run.request_id,
        verified=receipt.ok,
        verdict=receipt.verdict,
        chain_ok=chain.ok,
        receipt_sha256=receipt.sha256[:16],
    )
    run.say(f"done: {receipt.verdict}")
    return receipt


def _drive(
    db: Database, run: _Run, state: str, *, log_paths: Sequence[Path], judge: Judge | None
) -> Receipt:
    """Run the states from ``state`` to the end."""
    if state == DELETING:
        _delete(db, run)
        _step("deleted")
        state = DELETED
    if state == DELETED:
        _carry_sources(db, run)
        _step("verifying")
    return _finish(db, run, log_paths=log_paths, judge=judge)


# -- entry points ---------------------------------------------------------------------------


def execute(
    db: Database,
    request_id: int,
    subject: str,
    digest: str,
    *,
    actor: str,
    executed_by: str,
    log_paths: Sequence[Path] = (),
    judge: Judge | None = None,
    progress: Progress | None = None,
) -> Receipt:
    """Execute an approved request from its first state (``approved -> deleting``).

    Args:
        db: the store.
        request_id: the approved request.
        subject: its subject id.
        digest: its subject digest.
        actor: the officer responsible.
        executed_by: the process that runs it.
        log_paths: log files the verification searches too.
        judge: this process's LLM judge (its verdict cache is emptied).
        progress: called with a line per step (the CLI prints them).

    Returns:
        The final receipt.

    Raises:
        InputError: the request is no longer approved (another process took it).
    """
    run = _Run(request_id, subject, digest, actor, executed_by, utcnow(), progress=progress)
    with db.session() as session:
        req = session.get(ErasureRequest, request_id)
        if req is None:
            raise NotFoundError(f"no erasure request with id {request_id}")
        run.say("collecting the values to search for")
        _prepare(db, run, req, values=True)
    with db.write() as session:
        _move(session, run, APPROVED, DELETING)
    _step("deleting")
    return _drive(db, run, DELETING, log_paths=log_paths, judge=judge)
