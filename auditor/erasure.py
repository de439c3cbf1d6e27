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
  subject or its values is redacted through :func:`auditor.audit_log.redact`, so the hash
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
requests. An officer's own request runs at once.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog
from sqlalchemy import (
    Text,
    cast,
    column,
    delete,
    func,
    insert,
    select,
    table,
    text,
    update,
)
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from auditor import audit_log, erasure_receipts, source_actions
from auditor.config import Settings
from auditor.erasure_audit import AuditScope, redact_subject_events
from auditor.erasure_subjects import (
    check_subject_form,
    held_counts,
    other_identifiers,
    resolve_subject,
)
from auditor.errors import InputError, NotFoundError
from auditor.hashing import canonical_json, normalise_fact, subject_digest
from auditor.lifecycle import audit_key
from auditor.logging import scrub
from auditor.residue import (
    REDACTED,
    Hit,
    Matcher,
    redact_json,
    search_database,
    search_file,
)
from auditor.store.db import Database
from auditor.store.models import (
    Base,
    Consent,
    ErasureRequest,
    Finding,
    FindingMemory,
    Memory,
    Principal,
    ScanShard,
    Tombstone,
)
from auditor.store.types import utcnow

if TYPE_CHECKING:
    from auditor.judge import Judge

__all__ = [
    "APPROVED",
    "EXECUTED",
    "KIND_SHORT",
    "KIND_SUBJECT",
    "KIND_VALUE",
    "PENDING",
    "RECEIPT_FORMAT",
    "REJECTED",
    "Receipt",
    "Verification",
    "approve_erasure",
    "erase_subject",
    "get_receipt",
    "ledger_path",
    "list_requests",
    "read_ledger",
    "reject_erasure",
    "request_erasure",
    "run_queue",
    "subject_label",
    "verify_erasure",
    "verify_receipt",
]

log = structlog.get_logger(__name__)

PENDING = "pending"
APPROVED = "approved"
REJECTED = "rejected"
EXECUTED = "executed"
STATUSES = (PENDING, APPROVED, REJECTED, EXECUTED)

RECEIPT_FORMAT = "memaudit-erasure-receipt/1"
LEDGER_FORMAT = "memaudit-erasure-ledger/1"
KIND_SUBJECT = "subject id"
KIND_VALUE = "identifying value"
KIND_SHORT = erasure_receipts.KIND_SHORT

#: Lines of a multi-line fact searched on their own when at least this long.
_LINE_MIN_CHARS = 16
#: Values shorter than this cannot be searched at all (they match everything).
_SHORT_MIN_CHARS = 3
#: Subjects of rows whose owner a source lost (``mem0-unattributed:<source>``).
_UNOWNED = re.compile(r"^[a-z0-9_.-]*unattributed:", re.IGNORECASE)
_ID_CHUNK = 500
_CHECKPOINT_TRIES = 10

#: Columns of memaudit's tables that may hold free text naming a subject; an erasure
#: redacts matches in them. Verification searches everything else too (and fails loudly).
_FREE_TEXT: tuple[tuple[str, str], ...] = (
    ("import_runs", "location"),
    ("import_runs", "errors"),
    ("import_runs", "actor"),
    ("scan_runs", "errors"),
    ("source_watermarks", "position"),
    ("source_watermarks", "details"),
    ("findings", "evidence"),
    ("findings", "resolution"),
    ("findings", "assignee"),
    ("findings", "resolved_by"),
    ("erasure_requests", "requested_by"),
    ("erasure_requests", "reason"),
    ("erasure_requests", "decided_by"),
    ("source_actions", "error"),
)


# -- small helpers ----------------------------------------------------------------------


def _require(value: str | None, what: str) -> str:
    if value is None or not value.strip():
        raise InputError(f"{what} is required")
    return value.strip()


def _digest(settings: Settings, subject: str) -> str:
    return subject_digest(subject, audit_key(settings))


def subject_label(digest: str) -> str:
    """How an erased subject is named where a name is needed: ``subject#`` + 16 hex digits.

    Args:
        digest: the subject digest.

    Returns:
        The label (no personal data).
    """
    return f"subject#{digest[:16]}"


def _safe_name(name: str | None, subject: str, digest: str, *, is_subject: bool = False) -> str:
    """A requester or actor as it may be recorded: the subject's label if it names them."""
    if name is None:
        return ""
    if is_subject or name == subject or Matcher([subject]).search(name):
        return subject_label(digest)
    return name


def _clean_reason(reason: str | None, subject: str) -> str | None:
    if reason is None or not reason.strip():
        return None
    cleaned = scrub(reason.strip())[:500]
    redacted, _changed = redact_json(cleaned, Matcher([subject]))
    return str(redacted)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def _chunks(items: Sequence[str], size: int = _ID_CHUNK) -> Iterable[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


# -- results ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Verification:
    """What a search for a subject's data found: places and counts, never values.

    Attributes:
        ok: nothing was found and everything could be searched (a short value matched as
            a whole token is listed in ``hits`` but does not make it false: the receipt
            reports it as something that *may* hold the subject).
        subject_digest: the salted digest of the subject.
        hits: places holding the subject id or one of its identifying values.
        searched: what was searched: tables, columns, files, values.
        unsearchable: places that could not be searched (they make ``ok`` false).
    """

    ok: bool
    subject_digest: str
    hits: tuple[Hit, ...] = ()
    searched: dict[str, int] = field(default_factory=dict)
    unsearchable: tuple[str, ...] = ()
    files: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (no personal data)."""
        return {
            "ok": self.ok,
            "subject_digest": self.subject_digest,
            "hits": [h.as_dict() for h in self.hits],
            "searched": dict(self.searched),
            "unsearchable": list(self.unsearchable),
            "files": list(self.files),
        }


@dataclass(frozen=True)
class Receipt:
    """The proof of one erasure: JSON without personal data, hashed over its content.

    Attributes:
        data: the receipt, ``receipt_sha256`` included (see :func:`verify_receipt`).
    """

    data: dict[str, Any]

    @property
    def request_id(self) -> int:
        """The erasure request the receipt belongs to."""
        return int(self.data["request_id"])

    @property
    def ok(self) -> bool:
        """Whether the receipt is ``verified``: nothing found in any store, nothing that may
        still hold the subject, and the audit chain verifies (see
        :mod:`auditor.erasure_receipts`)."""
        if "verified" in self.data:
            return bool(self.data["verified"])
        sources = self.data.get("sources") or {}
        return bool(
            self.data["verification"]["ok"]
            and self.data["audit_chain"]["ok"]
            and all(s.get("verified") for s in sources.values())
        )

    @property
    def verdict(self) -> str:
        """``verified``, ``not verified``, ``incomplete`` or ``nothing held``."""
        default = erasure_receipts.VERDICT_VERIFIED if self.ok else "not verified"
        return str(self.data.get("verdict", default))

    @property
    def nothing_held(self) -> bool:
        """Nothing of the subject was held (erased before) and nothing was found."""
        return self.verdict == erasure_receipts.VERDICT_NOTHING_HELD

    @property
    def sha256(self) -> str:
        """The receipt's own hash."""
        return str(self.data["receipt_sha256"])

    def as_dict(self) -> dict[str, Any]:
        """A deep copy of the receipt."""
        return copy.deepcopy(self.data)

    def to_json(self) -> str:
        """The receipt as indented JSON."""
        return json.dumps(self.data, ensure_ascii=False, indent=2, sort_keys=True)


def _receipt_hash(data: dict[str, Any]) -> str:
    body = {k: v for k, v in data.items() if k != "receipt_sha256"}
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def verify_receipt(data: dict[str, Any]) -> bool:
    """Whether a receipt's ``receipt_sha256`` matches its content.

    Args:
        data: a receipt as printed or downloaded.

    Returns:
        True when the hash over the canonical JSON of the rest matches.
    """
    return isinstance(data.get("receipt_sha256"), str) and data["receipt_sha256"] == _receipt_hash(
        data
    )


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
    subject = resolve_subject(db, subject).subject  # form, then known (near matches)
    requested_by = _require(requested_by, "a requester (--by WHO)")
    settings = db.settings
    digest = _digest(settings, subject)
    if user_initiated:
        # the requester is the subject: their account name is identifying data that the
        # erasure removes, so it is never written (request, receipt, audit log)
        requested_by = subject_label(digest)
    waits = user_initiated and settings.erasure_requires_approval
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
            key=audit_key(settings),
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
) -> Receipt | None:
    """An officer approves a pending request (the daemon's ``erasure_queue`` executes it).

    Args:
        db: the store.
        request_id: the pending request.
        actor: the approving officer; not the requester (four eyes).
        execute: execute it now instead of leaving it to the daemon.
        log_paths: log files the verification searches too (``execute`` only).

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
    return erase_subject(db, subject, actor=actor, request_id=request_id, log_paths=log_paths)


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
            "rejected_at": _iso(req.decided_at),
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
                "requested_at": _iso(req.requested_at),
                "user_initiated": req.user_initiated,
                "decided_by": req.decided_by,
                "decided_at": _iso(req.decided_at),
                "executed_at": _iso(req.executed_at),
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


# -- identifying values -------------------------------------------------------------------

_PII_LOCK = threading.Lock()
_PII: dict[str, Any] = {}


def _pii_spans(facts: Sequence[str], settings: Settings) -> tuple[set[str], str]:
    """PII values in ``facts`` (memory only). Returns (values, detector status)."""
    from auditor.detectors.base import DetectContext, MemoryView

    try:
        with _PII_LOCK:
            detector = _PII.get("detector")
            if detector is None:
                from auditor.detectors.pii import PiiDetector

                detector = _PII["detector"] = PiiDetector()
    except Exception as exc:  # noqa: BLE001 - facts are still searched without the spans
        log.warning("erasure_pii_detector_unavailable", error_type=type(exc).__name__)
        return set(), "unavailable"
    ctx = DetectContext(now=utcnow(), settings=settings)
    values: set[str] = set()
    status = "ok"
    for n, fact in enumerate(facts):
        view = MemoryView(memory_id=f"erasure-{n}", subject="-", fact=fact, trust_tier="user")
        try:
            detections = detector.analyze(view, ctx)
        except Exception as exc:  # noqa: BLE001 - one bad text must not stop the erasure
            log.warning("erasure_pii_failed", error_type=type(exc).__name__)
            status = "partial"
            continue
        for d in detections:
            for sp in d.spans:
                values.add(fact[sp.start : sp.end].strip())
    return values, status


def _identifying_values(
    session: Session, subject: str, settings: Settings
) -> tuple[set[str], dict[str, Any]]:
    """The values to search for, without the short ones (:func:`_collect_values`).

    Used where only values at least ``erasure_min_value_chars`` long are searched (a
    restore re-applying an erasure, :mod:`auditor.backup`).
    """
    values, _short, stats = _collect_values(session, subject, settings)
    return values, stats


def _collect_values(
    session: Session, subject: str, settings: Settings
) -> tuple[set[str], set[str], dict[str, Any]]:
    """The distinct values the subject's data held, to search for after the delete.

    Facts (as stored and normalised; long lines of multi-line facts on their own), PII
    spans in them, and the names of dashboard accounts bound to the subject. Values shorter
    than ``erasure_min_value_chars`` (a short name, ``alice``) are not dropped: they are
    searched as whole tokens and a match is reported as something that *may* be the
    subject's (it may be unrelated text); values under 3 characters cannot be searched and
    are counted. Values another subject's memories also hold (they legitimately remain) are
    left out. Kept in memory only.

    Returns:
        (values, short values, statistics without values).
    """
    facts = sorted(set(session.scalars(select(Memory.fact).where(Memory.subject == subject))))
    accounts = session.execute(
        select(Principal.username, Principal.display_name, Principal.email).where(
            Principal.subject == subject
        )
    ).all()
    values: set[str] = set()
    for fact in facts:
        values.update((fact, normalise_fact(fact)))
        lines = [ln.strip() for ln in fact.splitlines()]
        if len(lines) > 1:
            values.update(ln for ln in lines if len(ln) >= _LINE_MIN_CHARS)
    pii, pii_status = _pii_spans(facts, settings)
    values.update(pii)
    for account in accounts:
        values.update(str(v) for v in account if v)
    values = {v.strip() for v in values if v.strip() and v.strip() != subject}
    minimum = settings.erasure_min_value_chars
    tiny = {v for v in values if len(v) < _SHORT_MIN_CHARS}
    short = {v for v in values if _SHORT_MIN_CHARS <= len(v) < minimum}
    values -= tiny | short
    shared = _shared_values(session, subject, values)
    shared_short = _shared_values(session, subject, short)
    return (
        values - shared,
        short - shared_short,
        {
            "searched": len(values - shared),
            "short_searched": len(short - shared_short),
            "too_short_to_search": len(tiny),
            "shared_with_other_subjects": len(shared) + len(shared_short),
            "pii_detector": pii_status,
        },
    )


def _shared_values(session: Session, subject: str, values: set[str]) -> set[str]:
    """Values that other subjects' memories hold too (not the erased subject's alone)."""
    if not values:
        return set()
    matcher = Matcher(values)
    candidates: set[str] = set()
    for condition in matcher.conditions(cast(Memory.fact, Text)):
        candidates.update(
            session.scalars(select(Memory.fact).where(Memory.subject != subject, condition))
        )
    if not candidates:
        return set()
    return {v for v in values if any(Matcher([v]).search(fact) for fact in candidates)}


@dataclass
class _Outcome:
    counts: dict[str, Any] = field(default_factory=dict)
    memory_ids: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _strip_evidence(evidence: dict[str, Any], erased: set[str]) -> dict[str, Any]:
    """A finding's evidence without anything about the erased memories."""
    out = dict(evidence)
    for key in ("snippets", "content_hashes"):
        part = out.get(key)
        if isinstance(part, dict):
            out[key] = {k: v for k, v in part.items() if k not in erased}
    spans = out.get("spans")
    if isinstance(spans, list):
        out["spans"] = [
            s for s in spans if not (isinstance(s, dict) and s.get("memory_id") in erased)
        ]
    return out


def _evidence_mentions(evidence: Any, ids: set[str]) -> bool:
    if not isinstance(evidence, dict):
        return False
    for key in ("snippets", "content_hashes"):
        part = evidence.get(key)
        if isinstance(part, dict) and ids.intersection(part):
            return True
    spans = evidence.get("spans")
    return isinstance(spans, list) and any(
        isinstance(s, dict) and s.get("memory_id") in ids for s in spans
    )


def _purge_findings(
    session: Session, ids: set[str], prior: set[str], matcher: Matcher, counts: dict[str, Any]
) -> None:
    """Delete the findings about erased memories only; strip the shared ones."""
    erased = ids | prior
    candidates: set[str] = set()
    for chunk in _chunks(sorted(ids)):
        candidates.update(
            session.scalars(
                select(FindingMemory.finding_id).where(FindingMemory.memory_id.in_(chunk))
            )
        )
    if prior:  # memories purged earlier: their links are gone, their evidence may remain
        ids_matcher = Matcher(prior)
        expr = cast(Finding.evidence, Text)
        for condition in ids_matcher.conditions(expr):
            for fid, evidence in session.execute(
                select(Finding.finding_id, Finding.evidence).where(condition)
            ):
                if _evidence_mentions(evidence, prior):
                    candidates.add(fid)
    deleted = updated = links = 0
    for fid in sorted(candidates):
        linked = list(
            session.scalars(select(FindingMemory.memory_id).where(FindingMemory.finding_id == fid))
        )
        remaining = [m for m in linked if m not in erased]
        if not remaining:
            links += len(linked)
            session.execute(delete(FindingMemory).where(FindingMemory.finding_id == fid))
            session.execute(delete(Finding).where(Finding.finding_id == fid))
            deleted += 1
            continue
        gone = [m for m in linked if m in erased]
        if gone:
            session.execute(
                delete(FindingMemory).where(
                    FindingMemory.finding_id == fid, FindingMemory.memory_id.in_(gone)
                )
            )
            links += len(gone)
        evidence = session.scalar(select(Finding.evidence).where(Finding.finding_id == fid))
        stripped, _ = redact_json(_strip_evidence(dict(evidence or {}), erased), matcher)
        session.execute(update(Finding).where(Finding.finding_id == fid).values(evidence=stripped))
        updated += 1
    counts["findings_deleted"] = deleted
    counts["findings_updated"] = updated
    counts["finding_links_deleted"] = links


def _redact_free_text(session: Session, matcher: Matcher, counts: dict[str, Any]) -> None:
    """Replace matching free text in memaudit's own tables by ``[erased]``."""
    redacted: dict[str, int] = {}
    for table_name, column_name in _FREE_TEXT:
        model_table = Base.metadata.tables[table_name]
        pk = list(model_table.primary_key.columns)
        col = model_table.c[column_name]
        hits: dict[tuple[Any, ...], Any] = {}
        for condition in matcher.conditions(cast(col, Text)):
            for row in session.execute(select(*pk, col).where(condition)):
                value = row[-1]
                new, changed = redact_json(value, matcher)
                if changed:
                    hits[tuple(row[:-1])] = new
        for key_values, new in hits.items():
            where = [c == v for c, v in zip(pk, key_values, strict=True)]
            session.execute(update(model_table).where(*where).values({col.name: new}))
        if hits:
            redacted[f"{model_table.name}.{col.name}"] = len(hits)
    counts["rows_redacted"] = redacted


def _move_cursors(session: Session, subject: str, counts: dict[str, Any]) -> None:
    """A shard cursor naming the subject moves to the subject before it (same resume point)."""
    before = session.scalar(select(func.max(Memory.subject)).where(Memory.subject < subject))
    result = session.execute(
        update(ScanShard).where(ScanShard.cursor == subject).values(cursor=before or "")
    )
    counts["scan_cursors_moved"] = int(getattr(result, "rowcount", 0) or 0)


def _erase_in_session(
    session: Session,
    settings: Settings,
    subject: str,
    *,
    digest: str,
    request_id: int | None,
    actor: str,
    matcher: Matcher,
    action: str = "erasure.executed",
) -> _Outcome:
    """Delete and redact everything of one subject inside the caller's transaction.

    Used by :func:`erase_subject` and by :mod:`auditor.backup` (re-applying erasures to a
    restored backup, ``action="erasure.reapplied"``). ``matcher`` holds the subject id and
    its identifying values.
    """
    outcome = _Outcome()
    counts = outcome.counts
    now = utcnow()
    excluded = other_identifiers(session, subject, matcher.needles)
    matcher = Matcher(matcher.needles, exclude=excluded)
    id_matcher = Matcher([subject], exclude=excluded)
    usernames = frozenset(
        session.scalars(select(Principal.username).where(Principal.subject == subject))
    )
    secure = session.get_bind().dialect.name == "sqlite"
    if secure:  # overwrite deleted content in the pages too (free pages keep no text)
        session.execute(text("PRAGMA secure_delete = ON"))
    rows = session.execute(
        select(Memory.memory_id, Memory.status).where(Memory.subject == subject)
    ).all()
    ids = sorted(mid for mid, _status in rows)
    outcome.memory_ids = ids
    counts["memories"] = len(ids)
    counts["memories_by_status"] = dict(sorted(Counter(s for _m, s in rows).items()))
    prior_rows = set(
        session.scalars(
            select(Tombstone.memory_id).where(
                Tombstone.subject_digest == digest,
                Tombstone.kind == "memory",
                Tombstone.memory_id.is_not(None),
            )
        )
    )
    prior = {p for p in prior_rows if p is not None} - set(ids)
    _purge_findings(session, set(ids), prior, matcher, counts)
    for chunk in _chunks(ids):
        session.execute(delete(Memory).where(Memory.memory_id.in_(chunk)))
    counts["consents"] = int(
        getattr(session.execute(delete(Consent).where(Consent.subject == subject)), "rowcount", 0)
        or 0
    )
    counts["principals"] = int(
        getattr(
            session.execute(delete(Principal).where(Principal.subject == subject)), "rowcount", 0
        )
        or 0
    )
    others = update(ErasureRequest).where(ErasureRequest.subject == subject)
    if request_id is not None:
        others = others.where(ErasureRequest.id != request_id)
    counts["other_requests_closed"] = int(
        getattr(
            session.execute(
                others.values(
                    status=EXECUTED,
                    executed_at=now,
                    subject=None,
                    receipt={"executed_with_request": request_id},
                )
            ),
            "rowcount",
            0,
        )
        or 0
    )
    _redact_free_text(session, matcher, counts)
    _move_cursors(session, subject, counts)
    scope = AuditScope(
        subject=subject,
        digest=digest,
        label=subject_label(digest),
        usernames=usernames,
        memory_ids=frozenset(ids) | frozenset(prior),
        id_matcher=id_matcher,
        # the subject's own events: its values, and its account names however short
        matcher=Matcher([*matcher.needles, *usernames], exclude=excluded),
    )
    redacted, notes = redact_subject_events(
        session,
        scope,
        actor=_safe_name(actor, subject, digest),
        details={"erasure_request": request_id, "subject_digest": digest},
        key=audit_key(settings),
    )
    counts["audit_events_redacted"] = redacted
    outcome.notes.extend(notes)
    known: set[str | None] = set()
    for chunk in _chunks(ids):
        known.update(
            session.scalars(select(Tombstone.memory_id).where(Tombstone.memory_id.in_(chunk)))
        )
    fresh = [mid for mid in ids if mid not in known]
    if fresh:
        session.execute(
            insert(Tombstone),
            [
                {
                    "kind": "memory",
                    "memory_id": mid,
                    "subject_digest": digest,
                    "erased_at": now,
                    "request_id": request_id,
                }
                for mid in fresh
            ],
        )
    has_subject_tombstone = session.scalar(
        select(Tombstone.id)
        .where(Tombstone.kind == "subject", Tombstone.subject_digest == digest)
        .limit(1)
    )
    if has_subject_tombstone is None:
        session.execute(
            insert(Tombstone).values(
                kind="subject",
                memory_id=None,
                subject_digest=digest,
                erased_at=now,
                request_id=request_id,
            )
        )
    counts["tombstones"] = len(fresh) + (1 if has_subject_tombstone is None else 0)
    if request_id is not None:
        req = session.get(ErasureRequest, request_id)
        if req is not None:
            req.status = EXECUTED
            req.executed_at = now
            req.subject = None
            req.requested_by = _safe_name(
                req.requested_by, subject, digest, is_subject=req.user_initiated
            )
            if req.reason and matcher.search(req.reason):
                req.reason = REDACTED
    flat = {k: v for k, v in counts.items() if isinstance(v, int)}
    audit_log.append(
        session,
        actor=_safe_name(actor, subject, digest),
        action=action,
        target_type="subject",
        target_ids=[digest],
        details={"erasure_request": request_id, "subject_digest": digest, **flat},
        key=audit_key(settings),
    )
    session.flush()
    if secure:
        session.execute(text("PRAGMA secure_delete = OFF"))
    return outcome


# -- storage ------------------------------------------------------------------------------


def _sqlite_file(db: Database) -> Path | None:
    database = db.url.database
    if db.dialect != "sqlite" or not database or database == ":memory:":
        return None
    return Path(database).expanduser().resolve()


def reclaim_storage(db: Database) -> dict[str, Any]:
    """Make deleted rows unrecoverable from the database files, as far as the engine allows.

    SQLite: rebuild every FTS index, ``VACUUM`` (when ``erasure_vacuum``), truncate the WAL,
    refresh planner statistics if there are any. PostgreSQL: ``VACUUM ANALYZE`` memaudit's
    tables (``ANALYZE`` only, when ``erasure_vacuum`` is off), so planner statistics stop
    sampling erased values; dead row versions are freed for reuse, not overwritten.

    Args:
        db: the store (no transaction of this process may be open on it).

    Returns:
        What was done (no personal data).
    """
    vacuum = db.settings.erasure_vacuum
    done: dict[str, Any] = {"dialect": db.dialect, "vacuum": "skipped"}
    if db.dialect == "postgresql":
        preparer = db.engine.dialect.identifier_preparer
        verb = "VACUUM (ANALYZE) " if vacuum else "ANALYZE "
        with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            for tbl in Base.metadata.sorted_tables:
                conn.exec_driver_sql(verb + preparer.format_table(tbl))
        done["vacuum"] = "VACUUM ANALYZE" if vacuum else "skipped"
        done["statistics"] = "refreshed"
        return done
    fts: list[str] = []
    with db.engine.connect() as conn:
        for name, sql in conn.execute(
            text("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql LIKE :p"),
            {"p": "CREATE VIRTUAL TABLE%"},
        ):
            if re.search(r"\busing\s+fts[345]\b", sql or "", re.IGNORECASE):
                fts.append(str(name))
        has_stats = (
            conn.execute(
                text("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :n"),
                {"n": "sqlite_stat1"},
            ).first()
            is not None
        )
        conn.rollback()
    rebuilt = 0
    for name in fts:
        try:
            with db.engine.begin() as conn:
                conn.execute(insert(table(name, column(name))).values({name: "rebuild"}))
            rebuilt += 1
        except SQLAlchemyError as exc:
            log.warning("erasure_fts_rebuild_failed", table=name, error_type=type(exc).__name__)
    done["fts_rebuilt"] = rebuilt
    raw = db.engine.raw_connection()
    try:
        sqlite_conn: Any = raw.driver_connection
        if has_stats:
            sqlite_conn.execute("ANALYZE")
            done["statistics"] = "refreshed"
        if vacuum:
            sqlite_conn.execute("VACUUM")
            done["vacuum"] = "VACUUM"
        status = "busy"
        for _attempt in range(_CHECKPOINT_TRIES):
            busy, _log_frames, _moved = sqlite_conn.execute(
                "PRAGMA wal_checkpoint(TRUNCATE)"
            ).fetchone()
            if not busy:
                status = "truncated"
                break
            time.sleep(0.1)
        done["wal_checkpoint"] = status
    finally:
        raw.close()
    return done


# -- verification -------------------------------------------------------------------------


def verify_erasure(
    db: Database,
    subject: str,
    *,
    values: Iterable[str] | None = None,
    short_values: Iterable[str] | None = None,
    log_paths: Sequence[Path] = (),
) -> Verification:
    """Search everywhere for the subject id and its identifying values.

    Every table and every text, JSON and binary column (by reflection, so tables memaudit
    does not own are searched too), planner statistics, on SQLite the database file and its
    WAL (free pages included), and the log files given. Occurrences inside other people's
    identifiers (``user:ines.duarte-2`` when verifying ``user:ines.duarte``) do not count.

    Args:
        db: the store.
        subject: the subject id (callers taking it from a person resolve it first:
            :func:`auditor.erasure_subjects.resolve_subject`).
        values: identifying values to look for too (memory only; :func:`erase_subject`
            passes the ones it collected before the delete).
        short_values: values shorter than ``erasure_min_value_chars``, matched as whole
            tokens (reported as ``KIND_SHORT``: they may be unrelated text).
        log_paths: log files to search.

    Returns:
        The verification: places and counts, never the values found.

    Raises:
        InputError: no subject.
    """
    subject = _require(subject, "a subject")
    value_list = sorted({v for v in (values or ()) if v and v != subject})
    short_list = sorted({v for v in (short_values or ()) if v and v != subject})
    with db.session() as session:
        others = other_identifiers(session, subject, [subject, *value_list, *short_list])
    matchers = {
        KIND_SUBJECT: Matcher([subject], exclude=others),
        KIND_VALUE: Matcher(value_list, exclude=others),
        KIND_SHORT: Matcher(short_list, exclude=others),
    }
    with db.engine.connect() as conn:
        report = search_database(conn, matchers)
        conn.rollback()
    files = []
    db_file = _sqlite_file(db)
    if db_file is not None:
        files = [p for p in (db_file, Path(f"{db_file}-wal")) if p.exists()]
    names = [f"file {p.name}" for p in files]
    for path in files:
        for kind, matcher in matchers.items():
            try:
                report.add(f"file {path.name}", kind, search_file(path, matcher))
            except OSError as exc:
                report.unsearchable.append(f"file {path.name}: {type(exc).__name__}")
    report.files += len(files)
    for path in log_paths:
        path = Path(path)
        if not path.is_file():
            report.unsearchable.append(f"log {path}: not a readable file")
            continue
        report.files += 1
        names.append(f"log {path}")
        for kind, matcher in matchers.items():
            try:
                report.add(f"log {path}", kind, search_file(path, matcher))
            except OSError as exc:
                report.unsearchable.append(f"log {path}: {type(exc).__name__}")
    digest = _digest(db.settings, subject)
    definite = [h for h in report.hits if h.kind != KIND_SHORT]  # short: "may hold"
    result = Verification(
        ok=not definite and not report.unsearchable,
        subject_digest=digest,
        hits=tuple(report.hits),
        searched={
            "tables": report.tables,
            "columns": report.columns,
            "files": report.files,
            "values": len(value_list) + len(short_list),
        },
        unsearchable=tuple(report.unsearchable),
        files=tuple(names),
    )
    log.info(
        "erasure_verified",
        subject_digest=digest[:16],
        ok=result.ok,
        places=len(result.hits),
        tables=report.tables,
    )
    return result


# -- execution ----------------------------------------------------------------------------


def ledger_path(db: Database) -> Path | None:
    """Where executed erasures are appended: ``erasure_ledger_path``, or beside a SQLite file.

    Args:
        db: the store.

    Returns:
        The ledger file, or None (PostgreSQL without ``erasure_ledger_path``).
    """
    if db.settings.erasure_ledger_path is not None:
        return Path(db.settings.erasure_ledger_path)
    db_file = _sqlite_file(db)
    return Path(f"{db_file}.erasures.jsonl") if db_file is not None else None


def _append_ledger(path: Path, entry: dict[str, Any]) -> None:
    line = (canonical_json(entry) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def read_ledger(path: Path) -> list[dict[str, Any]]:
    """The entries of an erasure ledger file (digests and memory ids, no personal data).

    Args:
        path: the ledger.

    Returns:
        Its entries, oldest first.

    Raises:
        InputError: the file cannot be read or a line is not a ledger entry (named by line).
    """
    entries = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"erasure ledger {path}: cannot read it ({type(exc).__name__})") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            raise InputError(f"erasure ledger {path} line {n}: not JSON") from None
        if (
            not isinstance(entry, dict)
            or entry.get("format") != LEDGER_FORMAT
            or not isinstance(entry.get("subject_digest"), str)
            or not isinstance(entry.get("memory_ids", []), list)
        ):
            raise InputError(f"erasure ledger {path} line {n}: not a ledger entry")
        entries.append(entry)
    return entries


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


def _read_only_sources(db: Database, items: dict[str, int], carried: set[str]) -> dict[str, int]:
    """Sources the erasure was not carried into -> the subject's items they held."""
    from auditor.source_registry import list_sources

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

    Returns:
        The receipt (also stored on the request: :func:`get_receipt`).

    Raises:
        InputError: no subject or actor; the request is not approved or is about another
            subject.
        NotFoundError: no such request.
        StoreError: the database failed (nothing of the delete is kept then).
    """
    # a new request must name a subject id; a stored request runs as it was recorded (a
    # request recorded before subjects were checked must not stop the queue)
    subject = check_subject_form(subject) if request_id is None else _require(subject, "a subject")
    actor = _require(actor, "an actor (--by WHO)")
    settings = db.settings
    key = audit_key(settings)
    digest = subject_digest(subject, key)
    started = utcnow()
    if request_id is None:
        resolve_subject(db, subject)  # an unknown subject is refused, near matches offered
        with db.write() as session:
            req = ErasureRequest(
                subject_digest=digest,
                subject=subject,
                requested_by=actor,
                requested_at=started,
                status=APPROVED,
                decided_by=actor,
                decided_at=started,
                reason=_clean_reason(reason, subject),
                receipt={},
            )
            session.add(req)
            session.flush()
            request_id = req.id
            audit_log.append(
                session,
                actor=_safe_name(actor, subject, digest),
                action="erasure.requested",
                target_type="erasure_request",
                target_ids=[str(request_id)],
                details={
                    "subject_digest": digest,
                    "user_initiated": False,
                    "awaits_approval": False,
                },
                key=key,
            )
    else:
        with db.session() as session:
            req = _load_request(session, request_id)
            if req.status != APPROVED:
                raise InputError(
                    f"erasure request {request_id} is {req.status}; only an approved request "
                    "can be executed"
                )
            if req.subject_digest != digest:
                raise InputError(f"erasure request {request_id} is about another subject")
    with db.session() as session:
        req = _load_request(session, request_id)
        requested_by = _safe_name(req.requested_by, subject, digest, is_subject=req.user_initiated)
        requested_at, user_initiated = req.requested_at, req.user_initiated
        approved_by = _safe_name(req.decided_by, subject, digest)
    with db.session() as session:
        values, short, value_stats = _collect_values(session, subject, settings)
        held_before = held_counts(session, subject, besides_request=request_id)
        source_items, unowned = _source_context(session, subject)
    matcher = Matcher([subject, *values])
    with db.write() as session:
        status = session.execute(
            select(ErasureRequest.status).where(ErasureRequest.id == request_id).with_for_update()
        ).scalar_one()
        if status != APPROVED:  # another process (the daemon, a second CLI) was first
            raise InputError(f"erasure request {request_id} is {status} already")
        outcome = _erase_in_session(
            session,
            settings,
            subject,
            digest=digest,
            request_id=request_id,
            actor=actor,
            matcher=matcher,
        )
        # live sources with write-back: queued here (same transaction), carried below
        source_rows = source_actions.queue_erasure(
            session,
            settings,
            subject,
            digest=digest,
            request_id=request_id,
            memory_ids=outcome.memory_ids,
        )
    log.info(
        "erasure_deleted",
        request_id=request_id,
        memories=outcome.counts["memories"],
        findings_deleted=outcome.counts["findings_deleted"],
        audit_events_redacted=outcome.counts["audit_events_redacted"],
    )
    sources = source_actions.execute_erasures(db, source_rows, sorted(values))
    storage = reclaim_storage(db)
    verification = verify_erasure(
        db, subject, values=values, short_values=short, log_paths=log_paths
    )
    del values, short, matcher  # the identifying values live no longer than the verification
    with db.session() as session:
        chain = audit_log.verify(session, key=key)
    path = ledger_path(db)
    ledger = "not configured"
    if path is not None:
        try:
            _append_ledger(
                path,
                {
                    "format": LEDGER_FORMAT,
                    "request_id": request_id,
                    "subject_digest": digest,
                    "executed_at": _iso(started),
                    "memory_ids": outcome.memory_ids,
                },
            )
            ledger = "appended"
        except OSError as exc:
            ledger = f"failed: {type(exc).__name__}"
            log.error("erasure_ledger_failed", request_id=request_id, error_type=type(exc).__name__)
    data: dict[str, Any] = {
        "format": RECEIPT_FORMAT,
        "request_id": request_id,
        "status": EXECUTED,
        "subject_digest": digest,
        "digest_keyed": key is not None,
        "requested_by": requested_by,
        "requested_at": _iso(requested_at),
        "user_initiated": user_initiated,
        "approved_by": approved_by,
        "executed_by": _safe_name(executed_by or actor, subject, digest),
        "started_at": _iso(started),
        "finished_at": _iso(utcnow()),
        "counts": outcome.counts,
        "storage": storage,
        "caches": {"judge": _clear_judge(judge)},
        "ledger": ledger,
        "notes": outcome.notes,
        "verification": {**verification.as_dict(), "values": value_stats},
        **({"sources": sources} if source_rows else {}),
        "audit_chain": {
            "ok": chain.ok,
            "checked": chain.checked,
            "redacted_events": chain.redacted,
            "first_bad_seq": chain.first_bad_seq,
        },
        "held_before": held_before,
        **erasure_receipts.assess(
            erasure_receipts.ReceiptFacts(
                dialect=db.dialect,
                counts=outcome.counts,
                hits=verification.hits,
                searched=verification.searched,
                files=list(verification.files),
                unsearchable=verification.unsearchable,
                value_stats=value_stats,
                held_before=held_before,
                sources=sources if source_rows else {},
                read_only_sources=_read_only_sources(db, source_items, set(sources)),
                unowned=unowned,
                min_value_chars=settings.erasure_min_value_chars,
                chain_ok=chain.ok,
            )
        ),
    }
    data = json.loads(canonical_json(data))  # exactly what is stored and hashed
    data["receipt_sha256"] = _receipt_hash(data)
    receipt = Receipt(data)
    with db.write() as session:
        req = _load_request(session, request_id)
        req.receipt = receipt.as_dict()
        audit_log.append(
            session,
            actor=_safe_name(executed_by or actor, subject, digest),
            action="erasure.receipt",
            target_type="erasure_request",
            target_ids=[str(request_id)],
            details={
                "subject_digest": digest,
                "receipt_sha256": receipt.sha256,
                "verified": receipt.ok,
                "verdict": receipt.verdict,
                "chain_ok": chain.ok,
            },
            key=key,
        )
    log.info(
        "erasure_finished",
        request_id=request_id,
        verified=receipt.ok,
        verdict=receipt.verdict,
        chain_ok=chain.ok,
        receipt_sha256=receipt.sha256[:16],
    )
    return receipt


def run_queue(
    db: Database,
    *,
    actor: str,
    judge: Judge | None = None,
    should_stop: Callable[[], bool] | None = None,
    limit: int = 50,
) -> dict[str, Any]:
    """Execute approved requests (the daemon's ``erasure_queue`` job).

    Also empties ``judge``'s verdict cache when any erasure ran since it was last emptied
    (erasures made by other processes included: their verdicts may echo erased content).

    Args:
        db: the store.
        actor: who executes (recorded as ``executed_by``; the approver stays the actor).
        judge: the process's LLM judge, if any.
        should_stop: polled between requests.
        limit: most requests per run.

    Returns:
        Counts: executed, verification failures, verdicts dropped (no personal data).
    """
    with db.session() as session:
        waiting = session.execute(
            select(ErasureRequest.id, ErasureRequest.subject, ErasureRequest.decided_by)
            .where(ErasureRequest.status == APPROVED, ErasureRequest.subject.is_not(None))
            .order_by(ErasureRequest.id)
            .limit(limit)
        ).all()
    executed = failed = 0
    for request_id, subject, decided_by in waiting:
        if should_stop is not None and should_stop():
            break
        receipt = erase_subject(
            db,
            str(subject),
            actor=decided_by or actor,
            request_id=int(request_id),
            judge=judge,
            executed_by=actor,
        )
        executed += 1
        failed += 0 if receipt.ok or receipt.nothing_held else 1
    dropped = 0
    if judge is not None:
        with db.session() as session:
            latest = session.scalar(
                select(func.max(ErasureRequest.executed_at)).where(
                    ErasureRequest.status == EXECUTED
                )
            )
        if latest is not None and latest > judge.cache_cleared_at:
            dropped = judge.clear_cache()
            take = getattr(judge, "take_deferred", None)
            if callable(take):
                take()
    return {
        "waiting": len(waiting),
        "executed": executed,
        "verification_failed": failed,
        "judge_verdicts_dropped": dropped,
    }
