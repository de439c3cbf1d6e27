"""The delete itself: every row of one subject, in the caller's transaction.

:func:`erase_in_session` deletes the subject's memories (every status), consents and
accounts, the findings about its memories only (shared findings lose the erased link,
span, snippet and hash), redacts free text that names the subject or holds one of its
values, moves scan cursors, redacts the subject's own audit events
(:mod:`auditor.erasure.audit_redaction`) and writes tombstones. Used by an erasure's ``deleting``
step (:mod:`auditor.erasure.states`) and by a restore re-applying erasures
(:mod:`auditor.erasure.backup`).

Cost: linear in the subject's rows and the size of the tables searched: deletes and link
reads go by chunks of 500 ids in Core statements (no ORM objects per row), and free text
is searched in one pass per column with the values' automaton
(:func:`auditor.store.residue.matching_rows`).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, insert, or_, select, text, update
from sqlalchemy.orm import Session

from auditor.config import Settings
from auditor.erasure.audit_redaction import AuditScope, redact_subject_events
from auditor.erasure.common import DELETED, EXECUTED, _chunks, _safe_name, subject_label
from auditor.erasure.subjects import other_identifiers
from auditor.lifecycle import audit_log
from auditor.lifecycle.audit_key import audit_key
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
from auditor.store.residue import REDACTED, Matcher, matching_rows, redact_json
from auditor.store.types import utcnow

__all__ = ["Outcome", "erase_in_session", "purge_findings"]

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


@dataclass
class Outcome:
    """What a delete did: counts (no personal data), the erased memory ids, notes."""

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


def _prior_candidates(session: Session, prior: set[str]) -> set[str]:
    """Findings whose evidence names memories purged earlier (their links are gone)."""
    found: set[str] = set()
    matcher = Matcher(prior)
    for (fid,), evidence in matching_rows(session, [Finding.finding_id], Finding.evidence, matcher):
        try:
            parsed = json.loads(evidence) if isinstance(evidence, str) else evidence
        except ValueError:
            parsed = None
        if _evidence_mentions(parsed, prior):
            found.add(str(fid))
    return found


def purge_findings(
    session: Session, ids: set[str], prior: set[str], matcher: Matcher, counts: dict[str, Any]
) -> None:
    """Delete the findings about erased memories only; strip the shared ones.

    Batched: links are read and deleted by chunks of ids (one statement per 500 findings),
    and only findings shared with another subject's memory are rewritten one by one.
    """
    erased = ids | prior
    candidates: set[str] = set()
    for chunk in _chunks(sorted(ids)):
        candidates.update(
            session.scalars(
                select(FindingMemory.finding_id).where(FindingMemory.memory_id.in_(chunk))
            )
        )
    if prior:  # memories purged earlier: their links are gone, their evidence may remain
        candidates |= _prior_candidates(session, prior)
    links_of: dict[str, list[str]] = {fid: [] for fid in candidates}
    ordered = sorted(candidates)
    for chunk in _chunks(ordered):
        for fid, mid in session.execute(
            select(FindingMemory.finding_id, FindingMemory.memory_id).where(
                FindingMemory.finding_id.in_(chunk)
            )
        ):
            links_of[str(fid)].append(str(mid))
    whole = [fid for fid in ordered if not [m for m in links_of[fid] if m not in erased]]
    shared = [fid for fid in ordered if fid not in set(whole)]
    links = sum(len(links_of[fid]) for fid in whole)
    for chunk in _chunks(whole):
        session.execute(delete(FindingMemory).where(FindingMemory.finding_id.in_(chunk)))
        session.execute(delete(Finding).where(Finding.finding_id.in_(chunk)))
    for fid in shared:
        gone = [m for m in links_of[fid] if m in erased]
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
    counts["findings_deleted"] = len(whole)
    counts["findings_updated"] = len(shared)
    counts["finding_links_deleted"] = links


def _redact_free_text(session: Session, matcher: Matcher, counts: dict[str, Any]) -> None:
    """Replace matching free text in memaudit's own tables by ``[erased]`` (one pass each)."""
    redacted: dict[str, int] = {}
    for table_name, column_name in _FREE_TEXT:
        model_table = Base.metadata.tables[table_name]
        pk = list(model_table.primary_key.columns)
        col = model_table.c[column_name]
        hits: dict[tuple[Any, ...], Any] = {}
        for key_values, _text in list(matching_rows(session, pk, col, matcher)):
            value = session.execute(
                select(col).where(*[c == v for c, v in zip(pk, key_values, strict=True)])
            ).scalar_one()
            new, changed = redact_json(value, matcher)
            if changed:
                hits[key_values] = new
        for key_values, new in hits.items():
            where = [c == v for c, v in zip(pk, key_values, strict=True)]
            session.execute(update(model_table).where(*where).values({col.name: new}))
        if hits:
            redacted[f"{model_table.name}.{col.name}"] = len(hits)
    counts["rows_redacted"] = redacted


def _move_cursors(session: Session, subject: str, counts: dict[str, Any]) -> None:
    """A shard cursor naming the subject moves to the subject before it (same resume point).

    A cursor inside the subject (``subject\x1flast id``, a big subject scanned in windows:
    see :mod:`auditor.scan.scanner`) moves too: the subject's memories are gone, so resuming after
    the subject before it scans nothing twice and misses nothing.
    """
    before = session.scalar(select(func.max(Memory.subject)).where(Memory.subject < subject))
    names_it = or_(
        ScanShard.cursor == subject,
        ScanShard.cursor.startswith(subject + "\x1f", autoescape=True),
    )
    result = session.execute(update(ScanShard).where(names_it).values(cursor=before or ""))
    counts["scan_cursors_moved"] = int(getattr(result, "rowcount", 0) or 0)


def _subject_memories(session: Session, subject: str, outcome: Outcome) -> list[str]:
    """The subject's memory ids (every status), counted on ``outcome``."""
    counts = outcome.counts
    rows = session.execute(
        select(Memory.memory_id, Memory.status).where(Memory.subject == subject)
    ).all()
    ids = sorted(mid for mid, _status in rows)
    outcome.memory_ids = ids
    counts["memories"] = len(ids)
    counts["memories_by_status"] = dict(sorted(Counter(s for _m, s in rows).items()))
    return ids


def _prior_memories(session: Session, digest: str, ids: list[str]) -> set[str]:
    """Ids of the subject's memories purged earlier (memory tombstones), besides ``ids``."""
    prior_rows = set(
        session.scalars(
            select(Tombstone.memory_id).where(
                Tombstone.subject_digest == digest,
                Tombstone.kind == "memory",
                Tombstone.memory_id.is_not(None),
            )
        )
    )
    return {p for p in prior_rows if p is not None} - set(ids)


def _delete_rows(session: Session, subject: str, ids: list[str], counts: dict[str, Any]) -> None:
    """Delete the subject's memories (by chunks), consents and accounts."""
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


def _close_other_requests(
    session: Session,
    subject: str,
    request_id: int | None,
    now: datetime,
    counts: dict[str, Any],
) -> None:
    """Close the subject's other erasure requests as executed with this one."""
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


def _redact_audit(
    session: Session,
    settings: Settings,
    scope: AuditScope,
    *,
    actor: str,
    request_id: int | None,
    outcome: Outcome,
) -> None:
    """Redact the subject's own audit events; count them and keep the notes."""
    redacted, notes = redact_subject_events(
        session,
        scope,
        actor=_safe_name(actor, scope.subject, scope.digest),
        details={"erasure_request": request_id, "subject_digest": scope.digest},
        key=audit_key(settings),
    )
    outcome.counts["audit_events_redacted"] = redacted
    outcome.notes.extend(notes)


def _write_tombstones(
    session: Session,
    ids: list[str],
    *,
    digest: str,
    now: datetime,
    request_id: int | None,
    counts: dict[str, Any],
) -> None:
    """A memory tombstone per erased memory without one, and the subject's tombstone."""
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


def _mark_request_deleted(
    session: Session,
    request_id: int | None,
    subject: str,
    *,
    digest: str,
    now: datetime,
    matcher: Matcher,
) -> None:
    """The erasure's own request: ``deleted``, its requester and reason redacted."""
    if request_id is not None:
        req = session.get(ErasureRequest, request_id)
        if req is not None:
            req.status = DELETED  # the subject id stays until verification starts
            req.executed_at = now
            req.requested_by = _safe_name(
                req.requested_by, subject, digest, is_subject=req.user_initiated
            )
            if req.reason and matcher.search(req.reason):
                req.reason = REDACTED


def _log_erasure(
    session: Session,
    settings: Settings,
    subject: str,
    *,
    digest: str,
    request_id: int | None,
    actor: str,
    action: str,
    counts: dict[str, Any],
) -> None:
    """The erasure's audit event (``action``), with the integer counts."""
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


def erase_in_session(
    session: Session,
    settings: Settings,
    subject: str,
    *,
    digest: str,
    request_id: int | None,
    actor: str,
    matcher: Matcher,
    action: str = "erasure.executed",
) -> Outcome:
    """Delete and redact everything of one subject inside the caller's transaction.

    Used by :func:`erase_subject` and by :mod:`auditor.erasure.backup` (re-applying erasures to a
    restored backup, ``action="erasure.reapplied"``). ``matcher`` holds the subject id and
    its identifying values.
    """
    outcome = Outcome()
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
    ids = _subject_memories(session, subject, outcome)
    prior = _prior_memories(session, digest, ids)
    purge_findings(session, set(ids), prior, matcher, counts)
    _delete_rows(session, subject, ids, counts)
    _close_other_requests(session, subject, request_id, now, counts)
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
    _redact_audit(session, settings, scope, actor=actor, request_id=request_id, outcome=outcome)
    _write_tombstones(session, ids, digest=digest, now=now, request_id=request_id, counts=counts)
    _mark_request_deleted(session, request_id, subject, digest=digest, now=now, matcher=matcher)
    _log_erasure(
        session,
        settings,
        subject,
        digest=digest,
        request_id=request_id,
        actor=actor,
        action=action,
        counts=counts,
    )
    session.flush()
    if secure:
        session.execute(text("PRAGMA secure_delete = OFF"))
    return outcome
