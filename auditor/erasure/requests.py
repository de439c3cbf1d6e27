"""Right to erasure: requests, approval, execution, verification, receipts, tombstones.

An erasure is a **hard delete of every copy** of one subject's data (``docs/erasure.md``):

* memories in every status, the subject's consents, dashboard accounts bound to it;
* findings: a finding about the subject's memories only is deleted with its links; a
  finding shared with another subject's memory keeps that memory and loses the erased
  memory's link, span, snippet and content hash;
* free text elsewhere that names the subject or holds one of its identifying values (an
  import run's location and errors, scan errors, watermarks, review notes, erasure
  requests) is replaced by ``[erased]``; a scan shard's resume cursor that names the
  subject moves to the subject before it;
* the audit log keeps ids and hashes. An event whose actor, targets or details hold the
  subject or its values is redacted through :func:`auditor.lifecycle.audit_log.redact`, so the hash
  chain still verifies (a later ``audit.redacted`` event holds a witness of each row);
* tombstones: one per erased memory id and one for the subject (its salted digest, see
  :func:`auditor.hashing.subject_digest`): imports refuse them, restores re-apply them;
* storage: SQLite deletes with ``secure_delete``, then ``VACUUM``, rebuilds FTS indexes,
  truncates the WAL and refreshes planner statistics; PostgreSQL runs ``VACUUM ANALYZE``
  (which frees dead rows for reuse but does not promise to overwrite them: see the docs);
* caches: the LLM judge's verdict cache (keyed by content) is emptied.

Verification then searches **every** table and column of the database by reflection
(tables memaudit does not own included), planner statistics, the SQLite file and its WAL
(free pages included) and any log files given, for the subject id and for the distinct
identifying values its memories held (facts and the PII spans the PII detector finds).
Those values are collected just before the delete and kept in memory only, never stored
or logged. The receipt holds no personal data: the subject digest, counts per store, time,
actors, the verification result and its own hash (``receipt_sha256``); it is stored on the
request and recorded in the audit log.

Requests made by the subject (a dashboard user) wait for an officer's approval when
``erasure_requires_approval`` is set; the daemon's ``erasure_queue`` job executes approved
requests and resumes interrupted ones. An officer's own request runs at once.

This module holds the requests (record, approve, reject, list, receipts) and the public
API. The work is split by step: :mod:`auditor.erasure.values` (what to search for),
:mod:`auditor.erasure.states` (the durable states: write-ahead ledger, provisional
receipt, batches, resume), :mod:`auditor.erasure.execute` (the delete),
:mod:`auditor.erasure.storage` (storage reclaim, verification, ledger),
:mod:`auditor.erasure.common` (states, receipt), :mod:`auditor.erasure.scratch`
(temporary copies of backups and restores).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog
from sqlalchemy import select
from sqlalchemy.orm import Session

from auditor import limits
from auditor.erasure import states as erasure_states
from auditor.erasure.common import (
    APPROVED,
    DELETED,
    DELETING,
    EXECUTED,
    IN_FLIGHT,
    KIND_SHORT,
    KIND_SUBJECT,
    KIND_VALUE,
    LEDGER_FORMAT,
    PENDING,
    RECEIPT_FORMAT,
    REJECTED,
    STATUSES,
    VERIFYING,
    Receipt,
    Verification,
    _clean_reason,
    _digest,
    _receipt_hash,
    _require,
    _safe_name,
    subject_label,
    verify_receipt,
)
from auditor.erasure.states import Progress
from auditor.erasure.storage import ledger_path, read_ledger, reclaim_storage, verify_erasure
from auditor.erasure.subjects import check_subject_form, resolve_subject
from auditor.errors import InputError, NotFoundError
from auditor.hashing import subject_digest
from auditor.lifecycle import audit_log
from auditor.lifecycle.audit_key import audit_key
from auditor.store.db import Database
from auditor.store.models import ErasureRequest, Principal
from auditor.store.types import iso_utc, utcnow

if TYPE_CHECKING:
    from auditor.judge.llm import Judge

__all__ = [
    "APPROVED",
    "DELETED",
    "DELETING",
    "EXECUTED",
    "IN_FLIGHT",
    "KIND_SHORT",
    "KIND_SUBJECT",
    "KIND_VALUE",
    "LEDGER_FORMAT",
    "PENDING",
    "RECEIPT_FORMAT",
    "REJECTED",
    "STATUSES",
    "VERIFYING",
    "Receipt",
    "Verification",
    "approve_erasure",
    "erase_subject",
    "get_receipt",
    "ledger_path",
    "list_requests",
    "read_ledger",
    "reclaim_storage",
    "reject_erasure",
    "request_erasure",
    "subject_label",
    "verify_erasure",
    "verify_receipt",
]

log = structlog.get_logger(__name__)

# -- requests ---------------------------------------------------------------------------


def request_erasure(
    db: Database,
    subject: str,
    *,
    requested_by: str,
    reason: str | None = None,
    user_initiated: bool = False,
    log_paths: Sequence[Path] = (),
) -> int:
    """Record an erasure request; execute it now unless it must wait for approval.

    A request made by the subject (``user_initiated``) waits (status ``pending``) when
    ``erasure_requires_approval`` is set; any other request is executed at once.

    Args:
        db: the store.
        subject: the subject to erase, e.g. ``user:42``.
        requested_by: who asks (an officer, or the user's account name).
        reason: why (kept, scrubbed; no personal data please).
        user_initiated: the subject asked for it themselves.
        log_paths: log files the verification searches too (immediate execution only).

    Returns:
        The request id; :func:`get_receipt` gives the receipt once executed.

    Raises:
        InputError: no subject or no requester; a subject that is not ``<kind>:<id>`` or
            that the store never held (the nearest existing subjects are offered).
    """
    limits.check_note(reason, db.settings, what="the reason", where="erasure request")
    subject = resolve_subject(db, subject).subject  # form, then known (near matches)
    requested_by = _require(requested_by, "a requester (--by WHO)")
    settings = db.settings
    digest = _digest(settings, subject)
    if user_initiated:
        # the requester is the subject: their account name is identifying data that the
        # erasure removes, so it is never written (request, receipt, audit log)
        requested_by = subject_label(digest)
    waits = user_initiated and settings.erasure_requires_approval
    request_id = _record_request(
        db, subject, digest, requested_by, reason, user_initiated=user_initiated, waits=waits
    )
    log.info("erasure_requested", request_id=request_id, awaits_approval=waits)
    if not waits:
        erase_subject(db, subject, actor=requested_by, request_id=request_id, log_paths=log_paths)
    return request_id


def _load_request(session: Session, request_id: int) -> ErasureRequest:
    req = session.get(ErasureRequest, request_id)
    if req is None:
        raise NotFoundError(f"no erasure request with id {request_id}")
    return req


def approve_erasure(
    db: Database,
    request_id: int,
    *,
    actor: str,
    execute: bool = False,
    log_paths: Sequence[Path] = (),
    progress: Progress | None = None,
) -> Receipt | None:
    """An officer approves a pending request (the daemon's ``erasure_queue`` executes it).

    Args:
        db: the store.
        request_id: the pending request.
        actor: the approving officer; not the requester (four eyes).
        execute: execute it now instead of leaving it to the daemon.
        log_paths: log files the verification searches too (``execute`` only).
        progress: called with one line per step (``execute`` only).

    Returns:
        The receipt when ``execute``, else None.

    Raises:
        NotFoundError: no such request.
        InputError: the request is not pending, or the approver is its requester.
    """
    actor = _require(actor, "an approver (--by WHO)")
    with db.write() as session:
        req = _load_request(session, request_id)
        if req.status != PENDING:
            raise InputError(
                f"erasure request {request_id} is {req.status}; only a pending request can be "
                "approved"
            )
        subject_account = (
            req.user_initiated
            and req.subject is not None
            and session.scalar(
                select(Principal.id).where(
                    Principal.username == actor, Principal.subject == req.subject
                )
            )
            is not None
        )
        if actor == req.requested_by or subject_account:
            raise InputError(
                f"erasure request {request_id}: its requester cannot approve it; another "
                "officer must"
            )
        req.status = APPROVED
        req.decided_by, req.decided_at = actor, utcnow()
        subject = req.subject or ""
        audit_log.append(
            session,
            actor=_safe_name(actor, subject, req.subject_digest),
            action="erasure.approved",
            target_type="erasure_request",
            target_ids=[str(request_id)],
            details={"subject_digest": req.subject_digest},
            key=audit_key(db.settings),
        )
    log.info("erasure_approved", request_id=request_id)
    if not execute:
        return None
    return erase_subject(
        db, subject, actor=actor, request_id=request_id, log_paths=log_paths, progress=progress
    )


def reject_erasure(db: Database, request_id: int, *, actor: str, reason: str | None = None) -> None:
    """An officer rejects a waiting request; its subject id is cleared from the row.

    Args:
        db: the store.
        request_id: a pending or approved request.
        actor: the officer.
        reason: why (kept on the receipt field, scrubbed).

    Raises:
        NotFoundError: no such request.
        InputError: the request was already executed or rejected.
    """
    limits.check_note(reason, db.settings, what="the reason", where=f"erasure request {request_id}")
    actor = _require(actor, "an officer (--by WHO)")
    with db.write() as session:
        req = _load_request(session, request_id)
        if req.status not in (PENDING, APPROVED):
            raise InputError(
                f"erasure request {request_id} is {req.status}; only a waiting request can be "
                "rejected"
            )
        subject = req.subject or ""
        digest = req.subject_digest
        req.status = REJECTED
        req.decided_by, req.decided_at = actor, utcnow()
        req.requested_by = _safe_name(
            req.requested_by, subject, digest, is_subject=req.user_initiated
        )
        req.subject = None
        req.receipt = {
            "format": RECEIPT_FORMAT,
            "request_id": request_id,
            "status": REJECTED,
            "subject_digest": digest,
            "rejected_by": _safe_name(actor, subject, digest),
            "rejected_at": iso_utc(req.decided_at),
            "reason": _clean_reason(reason, subject),
        }
        req.receipt["receipt_sha256"] = _receipt_hash(req.receipt)
        audit_log.append(
            session,
            actor=_safe_name(actor, subject, digest),
            action="erasure.rejected",
            target_type="erasure_request",
            target_ids=[str(request_id)],
            details={"subject_digest": digest},
            key=audit_key(db.settings),
        )
    log.info("erasure_rejected", request_id=request_id)


def list_requests(
    db: Database, status: str | None = None, *, include_subject: bool = False
) -> list[dict[str, Any]]:
    """Erasure requests, newest first.

    Args:
        db: the store.
        status: only this status (None: all).
        include_subject: also give the subject id of waiting requests (for the officer
            deciding them); executed and rejected requests no longer hold one.

    Returns:
        One dict per request (no receipt body: see :func:`get_receipt`).

    Raises:
        InputError: unknown status.
    """
    if status is not None and status not in STATUSES:
        raise InputError(
            f"unknown erasure status {status!r}; expected one of {', '.join(STATUSES)}"
        )
    with db.session() as session:
        q = select(ErasureRequest).order_by(ErasureRequest.id.desc())
        if status is not None:
            q = q.where(ErasureRequest.status == status)
        out = []
        for req in session.scalars(q):
            row: dict[str, Any] = {
                "request_id": req.id,
                "status": req.status,
                "subject_digest": req.subject_digest,
                "requested_by": req.requested_by,
                "requested_at": iso_utc(req.requested_at),
                "user_initiated": req.user_initiated,
                "decided_by": req.decided_by,
                "decided_at": iso_utc(req.decided_at),
                "executed_at": iso_utc(req.executed_at),
                "verified": (req.receipt or {}).get("verification", {}).get("ok"),
                "receipt_sha256": (req.receipt or {}).get("receipt_sha256"),
            }
            if include_subject:
                row["subject"] = req.subject
            out.append(row)
    return out


def get_receipt(db: Database, request_id: int) -> dict[str, Any]:
    """The stored receipt of an executed (or rejected) request.

    Args:
        db: the store.
        request_id: the request.

    Returns:
        The receipt as a dict (``receipt_sha256`` included).

    Raises:
        NotFoundError: no such request.
        InputError: the request has no receipt yet (it waits, or its execution did not
            finish: run ``memaudit verify-erasure``).
    """
    with db.session() as session:
        req = _load_request(session, request_id)
        if not req.receipt:
            raise InputError(f"erasure request {request_id} is {req.status} and has no receipt yet")
        return copy.deepcopy(dict(req.receipt))


# -- execution ----------------------------------------------------------------------------


def erase_subject(
    db: Database,
    subject: str,
    *,
    actor: str,
    request_id: int | None = None,
    reason: str | None = None,
    log_paths: Sequence[Path] = (),
    judge: Judge | None = None,
    executed_by: str | None = None,
    progress: Progress | None = None,
) -> Receipt:
    """Erase every copy of a subject's data, verify, and store the receipt.

    Args:
        db: the store.
        subject: the subject id.
        actor: the officer responsible (the approver of a request).
        request_id: an approved request to execute; None records a new request by
            ``actor`` (an officer's own erasure, approved at once).
        reason: why (a new request only; scrubbed).
        log_paths: log files the verification searches too.
        judge: this process's LLM judge, whose verdict cache is emptied.
        executed_by: the process that runs it (default ``actor``), e.g. the daemon.
        progress: called with one line per step (``memaudit erase`` prints them).

    Returns:
        The receipt (also stored on the request: :func:`get_receipt`).

    Raises:
        InputError: no subject or actor; the request is not approved or is about another
            subject.
        NotFoundError: no such request.
        StoreError: the database failed; the request stays in the state it reached and
            ``erasure_queue`` resumes it (see :mod:`auditor.erasure.states`).
    """
    # a new request must name a subject id; a stored request runs as it was recorded (a
    # request recorded before subjects were checked must not stop the queue)
    limits.check_note(reason, db.settings, what="the reason", where="erasure")
    subject = check_subject_form(subject) if request_id is None else _require(subject, "a subject")
    actor = _require(actor, "an actor (--by WHO)")
    settings = db.settings
    key = audit_key(settings)
    digest = subject_digest(subject, key)
    if request_id is None:
        resolve_subject(db, subject)  # an unknown subject is refused, near matches offered
        # an officer's own erasure: recorded approved at once
        request_id = _record_request(
            db, subject, digest, actor, reason, user_initiated=False, waits=False
        )
    else:
        _check_approved(db, request_id, digest)
    return erasure_states.execute(
        db,
        request_id,
        subject,
        digest,
        actor=actor,
        executed_by=executed_by or actor,
        log_paths=log_paths,
        judge=judge,
        progress=progress,
    )


def _record_request(
    db: Database,
    subject: str,
    digest: str,
    requested_by: str,
    reason: str | None,
    *,
    user_initiated: bool,
    waits: bool,
) -> int:
    """Store a request (approved at once unless it ``waits``) and its audit entry; its id."""
    now = utcnow()
    with db.write() as session:
        req = ErasureRequest(
            subject_digest=digest,
            subject=subject,
            requested_by=requested_by,
            requested_at=now,
            status=PENDING if waits else APPROVED,
            reason=_clean_reason(reason, subject),
            user_initiated=user_initiated,
            receipt={},
        )
        if not waits:
            req.decided_by, req.decided_at = requested_by, now
        session.add(req)
        session.flush()
        request_id = req.id
        audit_log.append(
            session,
            actor=_safe_name(requested_by, subject, digest, is_subject=user_initiated),
            action="erasure.requested",
            target_type="erasure_request",
            target_ids=[str(request_id)],
            details={
                "subject_digest": digest,
                "user_initiated": user_initiated,
                "awaits_approval": waits,
            },
            key=audit_key(db.settings),
        )
    return request_id


def _check_approved(db: Database, request_id: int, digest: str) -> None:
    """Refuse a request that is not approved, or is about another subject than ``digest``."""
    with db.session() as session:
        req = _load_request(session, request_id)
        if req.status != APPROVED:
            raise InputError(
                f"erasure request {request_id} is {req.status}; only an approved request "
                "can be executed"
            )
        if req.subject_digest != digest:
            raise InputError(f"erasure request {request_id} is about another subject")
