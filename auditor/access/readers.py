"""Read services over the store, shared by the CLI and the dashboard (which never builds SQL).

Listings stream with keyset pagination, so a JSON listing of millions of memories runs in
bounded memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from auditor.errors import InputError
from auditor.lifecycle.machine import chain_of
from auditor.records import STATUSES
from auditor.store.db import Database
from auditor.store.models import (
    AuditEvent,
    Consent,
    Finding,
    FindingMemory,
    ImportRun,
    Memory,
)
from auditor.store.types import iso_utc, utcnow

__all__ = [
    "MEMORY_FIELDS",
    "MemoryFilter",
    "count_memories",
    "export_subject",
    "iter_memories",
    "memory_detail",
    "memory_to_dict",
    "store_summary",
]

#: Canonical field order of a memory in JSON and CSV output.
MEMORY_FIELDS: tuple[str, ...] = (
    "memory_id",
    "subject",
    "namespace",
    "kind",
    "category",
    "fact",
    "confidence",
    "source",
    "trust_tier",
    "status",
    "supersedes",
    "created_at",
    "updated_at",
    "expires_at",
    "deleted_at",
    "access_count",
    "last_accessed_at",
    "embedding_ref",
    "content_hash",
    "version",
    "origin",
    "external_id",
    "extra",
)


def memory_to_dict(m: Memory) -> dict[str, Any]:
    """A memory as a JSON-ready dict with the canonical fields."""
    return {
        "memory_id": m.memory_id,
        "subject": m.subject,
        "namespace": m.namespace,
        "kind": m.kind,
        "category": m.category,
        "fact": m.fact,
        "confidence": m.confidence,
        "source": {
            "type": m.source_type,
            "session_id": m.source_session_id,
            "turn": m.source_turn,
            "uri": m.source_uri,
        },
        "trust_tier": m.trust_tier,
        "status": m.status,
        "supersedes": m.supersedes,
        "created_at": iso_utc(m.created_at),
        "updated_at": iso_utc(m.updated_at),
        "expires_at": iso_utc(m.expires_at),
        "deleted_at": iso_utc(m.deleted_at),
        "access_count": m.access_count,
        "last_accessed_at": iso_utc(m.last_accessed_at),
        "embedding_ref": m.embedding_ref,
        "content_hash": m.content_hash,
        "version": m.version,
        "origin": m.origin,
        "external_id": m.external_id,
        "extra": dict(m.extra or {}),
    }


@dataclass(frozen=True)
class MemoryFilter:
    """Which memories a listing shows. ``status=None`` means every status."""

    subject: str | None = None
    status: str | None = "active"
    namespace: str | None = None
    category: str | None = None

    def __post_init__(self) -> None:
        if self.status is not None and self.status not in STATUSES:
            raise InputError(
                f"unknown status {self.status!r}; expected one of {', '.join(STATUSES)} or all"
            )

    def apply(self, query: Select[Any]) -> Select[Any]:
        """Add this filter's conditions to a query over :class:`Memory`."""
        if self.subject is not None:
            query = query.where(Memory.subject == self.subject)
        if self.status is not None:
            query = query.where(Memory.status == self.status)
        if self.namespace is not None:
            query = query.where(Memory.namespace == self.namespace)
        if self.category is not None:
            query = query.where(Memory.category == self.category)
        return query


def count_memories(db: Database, flt: MemoryFilter) -> int:
    """How many memories match."""
    with db.session() as session:
        return int(session.scalar(flt.apply(select(func.count()).select_from(Memory))) or 0)


def iter_memories(
    db: Database, flt: MemoryFilter, limit: int | None = None, page: int = 2000
) -> Iterator[Memory]:
    """Matching memories in ``memory_id`` order, streamed page by page."""
    if limit is not None and limit < 0:
        raise InputError("--limit must be 0 or more")
    after: str | None = None
    left = limit
    while left is None or left > 0:
        size = page if left is None else min(page, left)
        with db.session() as session:
            query = flt.apply(select(Memory)).order_by(Memory.memory_id).limit(size)
            if after is not None:
                query = query.where(Memory.memory_id > after)
            rows = list(session.scalars(query))
        if not rows:
            return
        yield from rows
        after = rows[-1].memory_id
        if left is not None:
            left -= len(rows)
        if len(rows) < size:
            return


def _findings_for(session: Session, memory_ids: list[str]) -> list[dict[str, Any]]:
    if not memory_ids:
        return []
    rows = session.execute(
        select(Finding, FindingMemory.memory_id)
        .join(FindingMemory, FindingMemory.finding_id == Finding.finding_id)
        .where(FindingMemory.memory_id.in_(memory_ids))
        .order_by(Finding.first_seen)
    ).all()
    return [
        {
            "finding_id": f.finding_id,
            "memory_id": mid,
            "rule_id": f.rule_id,
            "category": f.category,
            "severity": f.severity,
            "status": f.status,
            "evidence": f.evidence,
            "first_seen": iso_utc(f.first_seen),
            "last_seen": iso_utc(f.last_seen),
            "resolution": f.resolution,
            "resolved_at": iso_utc(f.resolved_at),
        }
        for f, mid in rows
    ]


def memory_detail(db: Database, memory_id: str) -> dict[str, Any]:
    """One memory with its provenance, its supersede chain and its findings."""
    with db.session() as session:
        chain = chain_of(session, memory_id)
        memory = chain.memory
        run = session.get(ImportRun, memory.import_run_id) if memory.import_run_id else None
        return {
            "memory": memory_to_dict(memory),
            "provenance": {
                "source": memory_to_dict(memory)["source"],
                "trust_tier": memory.trust_tier,
                "origin": memory.origin,
                "external_id": memory.external_id,
                "import_run": None
                if run is None
                else {
                    "id": run.id,
                    "format": run.source_format,
                    "location": run.location,
                    "sha256": run.sha256,
                    "finished_at": iso_utc(run.finished_at),
                },
            },
            "chain": {
                "older": [
                    {
                        "memory_id": m.memory_id,
                        "status": m.status,
                        "trust_tier": m.trust_tier,
                        "created_at": iso_utc(m.created_at),
                    }
                    for m in chain.older
                ],
                "newer": [
                    {
                        "memory_id": m.memory_id,
                        "status": m.status,
                        "trust_tier": m.trust_tier,
                        "created_at": iso_utc(m.created_at),
                        "supersedes": m.supersedes,
                    }
                    for m in chain.newer
                ],
                "dangling_link": chain.dangling,
                "cycle": chain.cycle,
            },
            "findings": _findings_for(session, [memory_id]),
        }


def export_subject(db: Database, subject: str) -> dict[str, Any]:
    """Everything memaudit holds about one subject (the GDPR access right).

    Every status is included (soft-deleted, quarantined and superseded memories too: they
    are still held), with consents and the findings on those memories.
    """
    if not subject:
        raise InputError("a subject is required")
    flt = MemoryFilter(subject=subject, status=None)
    memories = [memory_to_dict(m) for m in iter_memories(db, flt)]
    with db.session() as session:
        consents = [
            {
                "category": c.category,
                "granted_at": iso_utc(c.granted_at),
                "revoked_at": iso_utc(c.revoked_at),
                "source": c.source,
            }
            for c in session.scalars(
                select(Consent).where(Consent.subject == subject).order_by(Consent.granted_at)
            )
        ]
        findings: list[dict[str, Any]] = []
        ids = [m["memory_id"] for m in memories]
        for start in range(0, len(ids), 500):
            findings.extend(_findings_for(session, ids[start : start + 500]))
    return {
        "subject": subject,
        "exported_at": iso_utc(utcnow()),
        "counts": {
            "memories": len(memories),
            "by_status": _tally(m["status"] for m in memories),
            "consents": len(consents),
            "findings": len(findings),
        },
        "memories": memories,
        "consents": consents,
        "findings": findings,
    }


def _tally(values: Iterator[str] | Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items()))


def store_summary(db: Database, top_subjects: int = 15) -> dict[str, Any]:
    """Counts of the store by status, trust tier, category, kind and subject."""
    with db.session() as session:

        def grouped(column: Any) -> dict[str, int]:
            rows = session.execute(
                select(column, func.count()).group_by(column).order_by(func.count().desc())
            ).all()
            return {str(k): int(n) for k, n in rows}

        total = int(session.scalar(select(func.count()).select_from(Memory)) or 0)
        subjects = session.execute(
            select(Memory.subject, func.count())
            .group_by(Memory.subject)
            .order_by(func.count().desc(), Memory.subject)
            .limit(top_subjects)
        ).all()
        n_subjects = int(session.scalar(select(func.count(func.distinct(Memory.subject)))) or 0)
        return {
            "memories": total,
            "subjects": n_subjects,
            "by_status": grouped(Memory.status),
            "by_trust_tier": grouped(Memory.trust_tier),
            "by_category": grouped(Memory.category),
            "by_kind": grouped(Memory.kind),
            "by_namespace": grouped(Memory.namespace),
            "top_subjects": {str(s): int(n) for s, n in subjects},
            "audit_events": int(session.scalar(select(func.count()).select_from(AuditEvent)) or 0),
        }
