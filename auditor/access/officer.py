"""Access-checked services for officers and admins: what the dashboard's staff pages call.

Every function takes the signed-in :class:`~auditor.access.accounts.Actor` first and enforces
authorisation itself, whatever ids the caller passes. This module holds the officer's
store-wide reads: the overview, memory search, the audit log and its verification, rule
statistics. Its siblings hold the rest of the officer's work: the review queue (server-side
filters, sorting and paging) and a finding's detail in :mod:`auditor.access.officer_findings`,
actions on findings (one by one or in bulk, each through
:func:`auditor.scan.findings.apply_review` or the lifecycle, so history is never rewritten
silently) in :mod:`auditor.access.officer_actions`. The same package holds the rest:
account management in :mod:`auditor.access.admin`, a user's own data in
:mod:`auditor.access.user`, previews and a memory's findings in :mod:`auditor.access.review`,
erasure in :mod:`auditor.access.erasure`, all through the one policy of
:mod:`auditor.access.guard`.

Before anything else each call re-reads the actor's account: an actor whose account is
gone, disabled, or no longer has that role or subject is refused, so a stale dashboard
session (or an ``Actor`` built by hand) gets nothing. Every refusal raises
:class:`~auditor.errors.AccessDenied` and appends an ``access.denied`` audit event; the
message names only what the caller asked for. A user asking for a memory of another
subject, or for one that does not exist, gets the same refusal (no existence oracle); the
audit event tells the two apart.

Audit events: every change (lifecycle and finding events, ``finding.escalated``,
``finding.action_failed``), every export (``subject.exported``), every search that shows
memory text to an officer (``memory.searched``, with the ids shown and never the query),
every opening of a finding's evidence (``finding.viewed``), every queue page that shows
redacted snippets (``finding.listed``, the finding ids shown), every account change and
every refusal. Aggregate reads (overview, rule statistics, the audit log itself) and a
user reading their own memories are not recorded.

A dashboard session passes its :class:`~auditor.access.officer_findings.ViewLog` to
:func:`~auditor.access.officer_findings.review_queue` and
:func:`~auditor.access.officer_findings.finding_detail`: a script rerun that shows the same
thing again (a key press that only moves the cursor, a typed note, a preview) is then not
recorded again; what the session is shown next, when it differs, is. The access check runs
on every call either way.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, case, func, select
from sqlalchemy.orm import Session

from auditor.access.accounts import Actor
from auditor.access.guard import (
    ADMIN_ROLES,
    MAX_BULK,
    MAX_PAGE_SIZE,
    OFFICER_ROLES,
    USER_ROLES,
    Denied,
    Page,
    digest,
    guard,
    paging,
    require_role,
)
from auditor.access.readers import memory_to_dict
from auditor.errors import InputError
from auditor.lifecycle import audit_log
from auditor.lifecycle import machine as lifecycle
from auditor.records import STATUSES as MEMORY_STATUSES
from auditor.rulepack.pack import SEVERITY_RANK, RulePack, load_pack
from auditor.sources.writeback import display_status
from auditor.store.db import Database
from auditor.store.models import AuditEvent, Finding, FindingStatus, Memory, ScanRun
from auditor.store.types import iso_utc, utcnow
from auditor.vocab import SCAN_ACTOR

__all__ = [
    "ADMIN_ROLES",
    "Denied",
    "MAX_BULK",
    "MAX_PAGE_SIZE",
    "OFFICER_ROLES",
    "USER_ROLES",
    "Page",
    "audit_log_page",
    "display_status",
    "memory_search",
    "overview",
    "rule_stats",
    "verify_audit_log",
    "guard",
    "require_role",
]

_CLOSED = (
    FindingStatus.RESOLVED.value,
    FindingStatus.DISMISSED.value,
    FindingStatus.SUPPRESSED.value,
)


def _day(column: Any, dialect: str) -> Any:
    """A column's UTC calendar day as ``YYYY-MM-DD`` text (SQLite stores UTC wall time)."""
    if dialect == "postgresql":
        return func.to_char(func.timezone("UTC", column), "YYYY-MM-DD")
    return func.strftime("%Y-%m-%d", column)


# -- officer: overview --------------------------------------------------------------------


def overview(db: Database, actor: Actor, *, days: int = 30, scans: int = 20) -> dict[str, Any]:
    """The officers' front page.

    Args:
        db: the store.
        actor: an officer or admin.
        days: how many days back ``by_day`` goes (1-366).
        scans: how many recent scans ``scans`` lists (1-200).

    Returns:
        ``by_day`` (findings first seen per UTC day, category and severity), ``open``
        (open + acknowledged findings in all, by severity and category), ``by_status``
        (every finding by status), ``scans`` (newest first: id, mode, status, start, end,
        duration, memories scanned, new findings, errors) and ``oldest_untriaged`` (the
        oldest open finding, or None).

    Raises:
        AccessDenied: the actor is not an officer or admin.
        InputError: ``days`` or ``scans`` out of range.
    """
    if not 1 <= days <= 366:
        raise InputError("days must be between 1 and 366")
    if not 1 <= scans <= 200:
        raise InputError("scans must be between 1 and 200")
    now = utcnow()
    with guard(db, actor, "overview"), db.session() as session:
        require_role(session, actor, OFFICER_ROLES, "overview")
        by_day = _findings_by_day(session, db.dialect, now, days)
        open_counts = _open_counts(session)
        by_status = {
            str(s): int(n)
            for s, n in session.execute(
                select(Finding.status, func.count()).group_by(Finding.status)
            )
        }
        recent = _recent_scans(session, scans)
        oldest = _oldest_untriaged(session, now)
        return {
            "generated_at": iso_utc(now),
            "window_days": days,
            "by_day": by_day,
            "open": open_counts,
            "by_status": dict(sorted(by_status.items())),
            "scans": recent,
            "oldest_untriaged": oldest,
        }


def _findings_by_day(
    session: Session, dialect: str, now: datetime, days: int
) -> list[dict[str, Any]]:
    """Findings first seen per UTC day, category and severity, over the last ``days`` days."""
    day = _day(Finding.first_seen, dialect)
    since = (now - timedelta(days=days - 1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return [
        {"day": str(d), "category": c, "severity": s, "count": int(n)}
        for d, c, s, n in session.execute(
            select(day, Finding.category, Finding.severity, func.count())
            .where(Finding.first_seen >= since)
            .group_by(day, Finding.category, Finding.severity)
            .order_by(day, Finding.category, Finding.severity)
        )
    ]


def _open_counts(session: Session) -> dict[str, Any]:
    """Open + acknowledged findings: the total, by severity (most severe first), by category."""
    open_statuses = (FindingStatus.OPEN.value, FindingStatus.ACKNOWLEDGED.value)
    open_rows = session.execute(
        select(Finding.severity, Finding.category, func.count())
        .where(Finding.status.in_(open_statuses))
        .group_by(Finding.severity, Finding.category)
    ).all()
    by_severity: dict[str, int] = {}
    by_category: dict[str, int] = {}
    for severity, category, n in open_rows:
        by_severity[severity] = by_severity.get(severity, 0) + int(n)
        by_category[category] = by_category.get(category, 0) + int(n)
    return {
        "total": sum(by_severity.values()),
        "by_severity": dict(
            sorted(by_severity.items(), key=lambda kv: -SEVERITY_RANK.get(kv[0], -1))
        ),
        "by_category": dict(sorted(by_category.items())),
    }


def _recent_scans(session: Session, scans: int) -> list[dict[str, Any]]:
    """The ``scans`` most recent scan runs, newest first."""
    runs = session.scalars(
        select(ScanRun).order_by(ScanRun.started_at.desc(), ScanRun.id.desc()).limit(scans)
    ).all()
    return [
        {
            "id": r.id,
            "mode": r.mode,
            "status": r.status,
            "started_at": iso_utc(r.started_at),
            "finished_at": iso_utc(r.finished_at),
            "duration_s": r.duration_s,
            "memories_scanned": (r.counts or {}).get("memories_scanned"),
            "findings_new": (r.counts or {}).get("findings_new"),
            "error_count": (r.counts or {}).get("error_count"),
        }
        for r in runs
    ]


def _oldest_untriaged(session: Session, now: datetime) -> dict[str, Any] | None:
    """The oldest open finding, with its age in days (None: there is none)."""
    oldest = session.scalars(
        select(Finding)
        .where(Finding.status == FindingStatus.OPEN.value)
        .order_by(Finding.first_seen, Finding.finding_id)
        .limit(1)
    ).first()
    if oldest is None:
        return None
    return {
        "finding_id": oldest.finding_id,
        "rule_id": oldest.rule_id,
        "category": oldest.category,
        "severity": oldest.severity,
        "first_seen": iso_utc(oldest.first_seen),
        "age_days": (now - oldest.first_seen).days,
    }


# -- officer: search, audit log, rules ----------------------------------------------------


def memory_search(
    db: Database,
    actor: Actor,
    *,
    subject: str | None = None,
    text: str | None = None,
    category: str | None = None,
    status: str | None = None,
    namespace: str | None = None,
    page: int = 1,
    page_size: int = 50,
    memory_id: str | None = None,
) -> Page:
    """Find memories (with their text), newest change first; recorded in the audit log.

    ``text`` matches anywhere in the fact, case-insensitively, as a bound LIKE parameter
    with ``%`` and ``_`` escaped (they match themselves). The ``memory.searched`` event
    lists the ids shown and a digest of the subject, never the query text.

    Args:
        db: the store.
        actor: an officer or admin.
        subject: only this subject.
        text: only facts containing it.
        category: only this category.
        status: only this status (None: every status).
        namespace: only this namespace.
        page: the page number, from 1.
        page_size: rows per page (capped at :data:`MAX_PAGE_SIZE`).
        memory_id: only this memory (a link ``?memory=ID`` from a finding).

    Returns:
        A :class:`Page` of memories with the canonical fields.

    Raises:
        AccessDenied: the actor is not an officer or admin.
        InputError: an unknown status, a bad page.
    """
    if status is not None and status not in MEMORY_STATUSES:
        raise InputError(f"unknown status {status!r}; expected one of {', '.join(MEMORY_STATUSES)}")
    page, size, offset = paging(page, page_size)
    in_python = bool(text) and db.cipher is not None  # encrypted facts: SQL cannot LIKE them
    conds = _memory_conditions(
        subject=subject,
        sql_text=None if in_python else text,
        category=category,
        status=status,
        namespace=namespace,
        memory_id=memory_id,
    )
    with guard(db, actor, "memory_search"), db.session() as session:
        require_role(session, actor, OFFICER_ROLES, "memory_search")
        if in_python:
            total, found = _search_encrypted(session, str(text), conds, size, offset)
        else:
            total, found = _search_sql(session, conds, size, offset)
        rows = [memory_to_dict(m) for m in found]
    _record_search(
        db,
        actor,
        rows,
        total,
        subject=subject,
        text=text,
        category=category,
        status=status,
        namespace=namespace,
        page=page,
    )
    return Page(rows, total, page, size)


def _memory_conditions(
    *,
    subject: str | None,
    sql_text: str | None,
    category: str | None,
    status: str | None,
    namespace: str | None,
    memory_id: str | None,
) -> list[ColumnElement[bool]]:
    """The WHERE conditions of a memory search over :class:`Memory` (all bound parameters).

    ``sql_text`` is matched in SQL (None or empty: not at all; encrypted facts are searched
    in Python instead).
    """
    conds: list[ColumnElement[bool]] = []
    if subject is not None:
        conds.append(Memory.subject == subject)
    if sql_text:
        conds.append(Memory.fact.icontains(sql_text, autoescape=True))
    if category is not None:
        conds.append(Memory.category == category)
    if status is not None:
        conds.append(Memory.status == status)
    if namespace is not None:
        conds.append(Memory.namespace == namespace)
    if memory_id is not None:
        conds.append(Memory.memory_id == str(memory_id)[:128])
    return conds


def _search_encrypted(
    session: Session, text: str, conds: list[ColumnElement[bool]], size: int, offset: int
) -> tuple[int, list[Memory]]:
    """The total and one page of a text search over encrypted facts (decrypted in Python)."""
    from auditor.store.crypto_search import search_fact_ids

    order = (Memory.changed_at.desc(), Memory.memory_id.desc())
    ids = search_fact_ids(session, text, conds, order)
    total, shown = len(ids), ids[offset : offset + size]
    loaded = session.scalars(select(Memory).where(Memory.memory_id.in_(shown)))
    by_id = {m.memory_id: m for m in loaded}
    return total, [by_id[i] for i in shown if i in by_id]


def _search_sql(
    session: Session, conds: list[ColumnElement[bool]], size: int, offset: int
) -> tuple[int, list[Memory]]:
    """The total and one page of a memory search done in SQL, newest change first."""
    total = int(session.scalar(select(func.count()).select_from(Memory).where(*conds)) or 0)
    found = list(
        session.scalars(
            select(Memory)
            .where(*conds)
            .order_by(Memory.changed_at.desc(), Memory.memory_id.desc())
            .limit(size)
            .offset(offset)
        ).all()
    )
    return total, found


def _record_search(
    db: Database,
    actor: Actor,
    rows: list[dict[str, Any]],
    total: int,
    *,
    subject: str | None,
    text: str | None,
    category: str | None,
    status: str | None,
    namespace: str | None,
    page: int,
) -> None:
    """Append ``memory.searched``: the ids shown, a digest of the subject, never the text."""
    with db.write() as session:  # the record of who read what, in a short write
        audit_log.append(
            session,
            actor=actor.username,
            action="memory.searched",
            target_type="memory",
            target_ids=[r["memory_id"] for r in rows],
            details={
                "subject_digest": digest(db, subject) if subject is not None else None,
                "has_text_query": bool(text),
                "category": category,
                "status": status,
                "namespace_given": namespace is not None,
                "page": page,
                "shown": len(rows),
                "total": total,
            },
            key=lifecycle.audit_key(db.settings),
        )


def audit_log_page(
    db: Database,
    actor: Actor,
    *,
    page: int = 1,
    page_size: int = 50,
    action: str | None = None,
    by: str | None = None,
) -> Page:
    """One page of the audit log, newest first.

    Args:
        db: the store.
        actor: an officer or admin.
        page: the page number, from 1.
        page_size: rows per page (capped at :data:`MAX_PAGE_SIZE`).
        action: only actions starting with this (``auth.``, ``memory.quarantined``); the
            text is matched literally.
        by: only events of this actor.

    Returns:
        A :class:`Page` of events: seq, event id, time, actor, action, target type and
        ids, details, hash.

    Raises:
        AccessDenied: the actor is not an officer or admin.
        InputError: a bad page.
    """
    page, size, offset = paging(page, page_size)
    conds: list[ColumnElement[bool]] = []
    if action:
        conds.append(AuditEvent.action.startswith(action, autoescape=True))
    if by:
        conds.append(AuditEvent.actor == by)
    with guard(db, actor, "audit_log_page"), db.session() as session:
        require_role(session, actor, OFFICER_ROLES, "audit_log_page")
        total = int(session.scalar(select(func.count()).select_from(AuditEvent).where(*conds)) or 0)
        events = session.scalars(
            select(AuditEvent)
            .where(*conds)
            .order_by(AuditEvent.seq.desc())
            .limit(size)
            .offset(offset)
        ).all()
        rows = [
            {
                "seq": e.seq,
                "event_id": e.event_id,
                "ts": iso_utc(e.ts),
                "actor": e.actor,
                "action": e.action,
                "target_type": e.target_type,
                "target_ids": list(e.target_ids),
                "details": dict(e.details),
                "hash": e.hash,
            }
            for e in events
        ]
    return Page(rows, total, page, size)


def verify_audit_log(db: Database, actor: Actor) -> dict[str, Any]:
    """Check the audit log's hash chain.

    Returns:
        ``ok``, ``checked`` (events verified), and for a broken chain ``first_bad_seq``,
        ``first_bad_event_id`` and ``reason``.

    Raises:
        AccessDenied: the actor is not an officer or admin.
    """
    with guard(db, actor, "verify_audit_log"), db.session() as session:
        require_role(session, actor, OFFICER_ROLES, "verify_audit_log")
        result = audit_log.verify(session, key=lifecycle.audit_key(db.settings))
    return {
        "ok": result.ok,
        "checked": result.checked,
        "first_bad_seq": result.first_bad_seq,
        "first_bad_event_id": result.first_bad_event_id,
        "reason": result.reason,
    }


def rule_stats(db: Database, actor: Actor, pack: RulePack | None = None) -> list[dict[str, Any]]:
    """For every rule of the pack: its status and severity, hits, and false-positive rate.

    ``reviewed`` counts findings a person decided (resolved, dismissed or suppressed by
    someone other than the scanner; the scanner's own resolutions and consent-allowed
    suppressions are not reviews). ``false_positives`` counts the dismissed and the
    person-suppressed ones; ``false_positive_rate`` is ``false_positives / reviewed`` (None
    before any review).

    Args:
        db: the store.
        actor: an officer or admin.
        pack: the rule pack (default: the configured pack).

    Returns:
        One row per rule, in pack order: id, title, status, severity, category, action,
        ``hits`` (every finding), ``open`` (open + acknowledged), ``by_status``,
        ``reviewed``, ``false_positives``, ``false_positive_rate``.

    Raises:
        AccessDenied: the actor is not an officer or admin.
        RuleError: the configured pack does not load (when no pack is given).
    """
    with guard(db, actor, "rule_stats"), db.session() as session:
        require_role(session, actor, OFFICER_ROLES, "rule_stats")
        by_scanner = case((Finding.resolved_by == SCAN_ACTOR, 1), else_=0)
        rows = session.execute(
            select(Finding.rule_id, Finding.status, by_scanner, func.count()).group_by(
                Finding.rule_id, Finding.status, by_scanner
            )
        ).all()
    rules = (pack or load_pack(db.settings.rules_dir, lint=False)).rules
    stats: dict[str, dict[str, Any]] = {}
    for rule_id, status, scanner, n in rows:
        s = stats.setdefault(rule_id, {"by_status": {}, "reviewed": 0, "false_positives": 0})
        s["by_status"][status] = s["by_status"].get(status, 0) + int(n)
        if status in _CLOSED and not scanner:
            s["reviewed"] += int(n)
            if status != FindingStatus.RESOLVED.value:
                s["false_positives"] += int(n)
    out = []
    for rule in rules:
        s = stats.get(rule.id, {"by_status": {}, "reviewed": 0, "false_positives": 0})
        by_status = dict(sorted(s["by_status"].items()))
        reviewed = s["reviewed"]
        out.append(
            {
                "id": rule.id,
                "title": rule.title,
                "status": rule.status,
                "severity": rule.severity,
                "category": rule.category,
                "action": rule.action,
                "hits": sum(by_status.values()),
                "open": by_status.get("open", 0) + by_status.get("acknowledged", 0),
                "by_status": by_status,
                "reviewed": reviewed,
                "false_positives": s["false_positives"],
                "false_positive_rate": round(s["false_positives"] / reviewed, 4)
                if reviewed
                else None,
            }
        )
    return out
