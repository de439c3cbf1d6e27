"""Write what a source yields into the store: streaming, batched, idempotent, loss-free.

* A bad item or record is reported with its location and skipped; the good ones are kept.
* Nothing already stored is deleted or blanked: a record is inserted, updated (when any
  imported field changed, with an audit event naming the changed fields) or left alone.
* The import mirrors the source faithfully, including what is already wrong in it
  (dangling or cyclic supersede links, forks, tier inversions, expired facts): the
  lifecycle invariants guard writes made through memaudit, not the mirror of a store.
* Statuses: a record's own ``status`` is kept as stated; a record without one is active,
  except that a record another record ``supersedes`` is superseded (re-derived after every
  import). A status set by a memaudit reviewer or action is never overridden by an import.
* A run killed before it could finish (``kill -9``) is closed as ``interrupted`` by the next
  import or daemon start (:mod:`auditor.sources.import_stale`); each run records its owner process.
* Limits (:mod:`auditor.limits`): a line or entry over ``max_record_bytes``, a fact over
  ``max_fact_bytes`` and names over the record's field limits are reported with their
  location and skipped; the rest of the file is imported.
* Erased memories (tombstones) are never re-imported, nor are memories about a subject
  that was erased (a subject tombstone holds its salted digest: see
  :mod:`auditor.erasure.requests`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import structlog
from sqlalchemy import Row, and_, insert, select, text, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from auditor.errors import RecordError
from auditor.hashing import subject_digest
from auditor.lifecycle import audit_log
from auditor.lifecycle.audit_key import audit_key
from auditor.records import MemoryRecord, parse_record
from auditor.sources.files.base import Source
from auditor.store.db import Database
from auditor.store.models import Consent, ImportRun, Memory, Tombstone
from auditor.store.types import iso_utc, utcnow

__all__ = ["ImportReport", "Importer"]

log = structlog.get_logger(__name__)

MAX_ERRORS_KEPT = 1000
_AUDIT_IDS_PER_EVENT = 1000
#: On PostgreSQL, refresh planner statistics after this many written rows: a bulk-loaded,
#: never-analysed table makes the batch look-ups (``memory_id IN (...)``) sequential scans.
_ANALYZE_EVERY = 20_000
_COMPARED = (
    "subject",
    "namespace",
    "kind",
    "category",
    "fact",
    "confidence",
    "source_type",
    "source_session_id",
    "source_turn",
    "source_uri",
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
    "extra",
)

Progress = Callable[[int], None]


@dataclass
class ImportReport:
    """What an import did. ``errors`` keeps the first 1,000 problems; ``skipped`` counts all."""

    run_id: int
    source_format: str
    location: str
    sha256: str | None = None
    read: int = 0
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    skipped: int = 0
    derived_superseded: int = 0
    derived_active: int = 0
    consents_added: int = 0
    duration_s: float = 0.0
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no record was skipped."""
        return self.skipped == 0

    def error(self, message: str) -> None:
        """Count one skipped item and keep its message (up to the cap)."""
        self.skipped += 1
        if len(self.errors) < MAX_ERRORS_KEPT:
            self.errors.append(message)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready summary."""
        return {
            "run_id": self.run_id,
            "format": self.source_format,
            "location": self.location,
            "sha256": self.sha256,
            "read": self.read,
            "inserted": self.inserted,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "skipped": self.skipped,
            "derived_superseded": self.derived_superseded,
            "derived_active": self.derived_active,
            "consents_added": self.consents_added,
            "duration_s": round(self.duration_s, 3),
            "errors": self.errors,
            "errors_truncated": self.skipped > len(self.errors),
        }


@dataclass
class _Pending:
    location: str
    record: MemoryRecord
    external_id: str | None


class Importer:
    """Imports sources into one store.

    Args:
        db: the store (its schema must be current).
        actor: recorded as the actor of every audit event.
    """

    def __init__(self, db: Database, actor: str = "import") -> None:
        self.db = db
        self.settings = db.settings
        self.actor = actor
        self._key = audit_key(self.settings)
        self._written_since_analyze = 0
        self._owner: dict[str, Any] = {}

    def run(self, source: Source, progress: Progress | None = None) -> ImportReport:
        """Import every item of ``source``.

        Args:
            source: the adapter to read.
            progress: called with the bytes consumed after each item (for a progress bar).

        Returns:
            The report; ``report.ok`` is False when records were skipped.

        Raises:
            InputError: the source as a whole cannot be read (nothing is written then,
                except the record of the failed run).
            StoreError: the database failed; batches already committed stay committed.
        """
        from auditor.processes import owner_record
        from auditor.sources.import_stale import reap_stale_imports

        started = time.perf_counter()
        reap_stale_imports(self.db, actor=self.actor)  # runs left `running` by a killed import
        self._owner = owner_record()
        with self.db.write() as session:
            run = ImportRun(
                source_format=source.format,
                location=source.location,
                actor=self.actor,
                counts={"owner": self._owner, "heartbeat": iso_utc(utcnow())},
            )
            session.add(run)
            session.flush()
            run_id = run.id
        report = ImportReport(run_id, source.format, source.location)
        log.info("import_started", run_id=run_id, format=source.format)
        status = "failed"
        try:
            self._read_all(run_id, source, report, progress)
            report.sha256 = source.sha256
            self._maybe_analyze(0, force=True)
            self._derive_chain_statuses(run_id, report)
            status = "completed" if report.ok else "completed_with_errors"
        finally:
            report.sha256 = source.sha256
            report.duration_s = time.perf_counter() - started
            self._finish(run_id, status, report)
            log.info(
                "import_finished",
                run_id=run_id,
                status=status,
                inserted=report.inserted,
                updated=report.updated,
                unchanged=report.unchanged,
                skipped=report.skipped,
                duration_s=round(report.duration_s, 3),
            )
        return report

    def _read_all(
        self, run_id: int, source: Source, report: ImportReport, progress: Progress | None
    ) -> None:
        """Read every item of ``source``, writing it in batches; bad items go to ``report``."""
        batch: dict[str, _Pending] = {}
        for item in source.items():
            if progress is not None and item.consumed:
                progress(item.consumed)
            if item.error is not None:
                report.read += 1
                report.error(f"{item.location}: {item.error}")
                continue
            if item.raw is None:  # blank line
                continue
            report.read += 1
            try:
                record = parse_record(item.raw, item.location, self.settings)
            except RecordError as exc:
                report.error(str(exc))
                continue
            earlier = batch.get(record.memory_id)
            if earlier is not None:
                report.error(
                    f"{item.location}: duplicate memory_id, first given at {earlier.location}"
                )
                continue
            batch[record.memory_id] = _Pending(item.location, record, item.external_id)
            if len(batch) >= self.settings.import_batch_size:
                self._write_batch(run_id, source.format, list(batch.values()), report)
                batch.clear()
        if batch:
            self._write_batch(run_id, source.format, list(batch.values()), report)

    # -- batches ------------------------------------------------------------------------

    def _write_batch(
        self, run_id: int, fmt: str, pending: list[_Pending], report: ImportReport
    ) -> None:
        try:
            self._write_batch_once(run_id, fmt, pending, report)
        except IntegrityError:
            # A concurrent writer created one of these ids between our read and our write:
            # fall back to one transaction per record so the rest of the batch is kept.
            log.warning("import_batch_conflict", run_id=run_id, size=len(pending))
            for one in pending:
                try:
                    self._write_batch_once(run_id, fmt, [one], report)
                except IntegrityError:
                    report.error(f"{one.location}: conflicts with a concurrent write; retry")

    def _write_batch_once(
        self,
        run_id: int,
        fmt: str,
        pending: list[_Pending],
        report: ImportReport,
    ) -> None:
        now = utcnow()
        counts = {"inserted": 0, "updated": 0, "unchanged": 0, "consents_added": 0}
        errors: list[str] = []
        with self.db.write() as session:
            existing, erased, erased_subjects = self._known(session, pending)
            inserts: list[dict[str, Any]] = []
            updates: dict[str, tuple[_Pending, dict[str, Any]]] = {}
            for p in pending:
                mid = p.record.memory_id
                if mid in erased:
                    errors.append(f"{p.location}: memory {mid} was erased; it is not re-imported")
                    continue
                if p.record.subject in erased_subjects:
                    erased.add(mid)  # its consents are not imported either
                    errors.append(
                        f"{p.location}: memory {mid} is about an erased subject; it is not "
                        "re-imported"
                    )
                    continue
                row = p.record.to_row(self.settings, now)
                row.update(origin=fmt, import_run_id=run_id, external_id=p.external_id)
                old = existing.get(mid)
                if old is None:
                    row["version"] = 1
                    inserts.append(row)
                elif old.import_run_id == run_id:
                    errors.append(
                        f"{p.location}: duplicate memory_id, given earlier in this import"
                    )
                elif old.record_hash == row["record_hash"]:
                    counts["unchanged"] += 1
                else:
                    updates[mid] = (p, row)
            if inserts:
                session.execute(insert(Memory), inserts)
                counts["inserted"] = len(inserts)
                audit_log.append_chunked(
                    session,
                    actor=self.actor,
                    action="memory.imported",
                    target_type="memory",
                    target_ids=[r["memory_id"] for r in inserts],
                    details={"import_run": run_id},
                    key=self._key,
                    size=_AUDIT_IDS_PER_EVENT,
                )
            if updates:
                counts["updated"] = self._apply_updates(session, run_id, updates)
            counts["consents_added"] = self._add_consents(session, pending, erased)
            session.execute(  # a sign of life for import_stale (a run of another host)
                update(ImportRun)
                .where(ImportRun.id == run_id)
                .values(counts={"owner": self._owner, "heartbeat": iso_utc(now)})
            )
        self._maybe_analyze(counts["inserted"] + counts["updated"])
        report.inserted += counts["inserted"]
        report.updated += counts["updated"]
        report.unchanged += counts["unchanged"]
        report.consents_added += counts["consents_added"]
        for message in errors:
            report.error(message)

    def _known(
        self, session: Session, pending: list[_Pending]
    ) -> tuple[dict[str, Row[str, str | None, int | None]], set[str], set[str]]:
        """What the store knows of a batch: its memories already stored (id, record hash,
        import run), the ids erased (tombstones) and the subjects erased."""
        ids = [p.record.memory_id for p in pending]
        existing: dict[str, Row[str, str | None, int | None]] = {
            row.memory_id: row
            for row in session.execute(
                select(
                    Memory.memory_id,
                    Memory.record_hash,
                    Memory.import_run_id,
                ).where(Memory.memory_id.in_(ids))
            )
        }
        erased: set[str] = {
            mid
            for mid in session.scalars(
                select(Tombstone.memory_id).where(Tombstone.memory_id.in_(ids))
            )
            if mid is not None
        }
        digests = {
            subject: subject_digest(subject, self._key)
            for subject in {p.record.subject for p in pending}
        }
        erased_digests = set(
            session.scalars(
                select(Tombstone.subject_digest).where(
                    Tombstone.kind == "subject",
                    Tombstone.subject_digest.in_(set(digests.values())),
                )
            )
        )
        erased_subjects = {subject for subject, d in digests.items() if d in erased_digests}
        return existing, erased, erased_subjects

    def _apply_updates(
        self, session: Any, run_id: int, updates: dict[str, tuple[_Pending, dict[str, Any]]]
    ) -> int:
        memories = session.scalars(select(Memory).where(Memory.memory_id.in_(list(updates))))
        for memory in memories:
            _pending, row = updates[memory.memory_id]
            changed = [name for name in _COMPARED if getattr(memory, name) != row[name]]
            governed = memory.status_source == "memaudit"
            stated = row.pop("status_source") == "source"
            status = row.pop("status")
            for name, value in row.items():
                setattr(memory, name, value)
            if not governed:
                if stated:
                    memory.status, memory.status_source = status, "source"
                elif memory.status_source == "source":
                    # the source stopped stating a status: derive it from the chain again
                    memory.status, memory.status_source = "active", "chain"
            details: dict[str, Any] = {
                "import_run": run_id,
                "changed_fields": changed,
                "content_changed": "fact" in changed,
            }
            if governed and "status" in changed:
                details["kept_reviewed_status"] = memory.status
            session.flush()
            audit_log.append(
                session,
                actor=self.actor,
                action="memory.updated",
                target_type="memory",
                target_ids=[memory.memory_id],
                details=details,
                key=self._key,
            )
        return len(updates)

    def _add_consents(self, session: Any, pending: list[_Pending], erased: set[str]) -> int:
        wanted = {
            (p.record.subject, c.category, c.granted_at): c
            for p in pending
            if p.record.memory_id not in erased
            for c in p.record.consents
        }
        if not wanted:
            return 0
        subjects = {subject for subject, _c, _t in wanted}
        have = {
            (row.subject, row.category, row.granted_at)
            for row in session.execute(
                select(Consent.subject, Consent.category, Consent.granted_at).where(
                    Consent.subject.in_(subjects)
                )
            )
        }
        new = [
            {
                "subject": subject,
                "category": category,
                "granted_at": granted,
                "source": c.source,
                "revoked_at": c.revoked_at,
            }
            for (subject, category, granted), c in wanted.items()
            if (subject, category, granted) not in have
        ]
        if new:
            session.execute(insert(Consent), new)
        return len(new)

    def _maybe_analyze(self, written: int, force: bool = False) -> None:
        if self.db.dialect != "postgresql":
            return
        self._written_since_analyze += written
        if self._written_since_analyze >= _ANALYZE_EVERY or (
            force and self._written_since_analyze > 0
        ):
            with self.db.write() as session:
                session.execute(text("ANALYZE memories"))
            self._written_since_analyze = 0

    # -- after the last batch -----------------------------------------------------------

    def _derive_chain_statuses(self, run_id: int, report: ImportReport) -> None:
        """Re-derive statuses that an import took from the chain (not stated, not reviewed)."""
        referenced = select(Memory.supersedes).where(Memory.supersedes.is_not(None))
        with self.db.write() as session:
            to_superseded = list(
                session.scalars(
                    update(Memory)
                    .where(
                        and_(
                            Memory.status_source == "chain",
                            Memory.status == "active",
                            Memory.memory_id.in_(referenced),
                        )
                    )
                    .values(status="superseded", version=Memory.version + 1)
                    .returning(Memory.memory_id)
                    .execution_options(synchronize_session=False)
                )
            )
            to_active = list(
                session.scalars(
                    update(Memory)
                    .where(
                        and_(
                            Memory.status_source == "chain",
                            Memory.status == "superseded",
                            Memory.memory_id.not_in(referenced),
                        )
                    )
                    .values(status="active", version=Memory.version + 1)
                    .returning(Memory.memory_id)
                    .execution_options(synchronize_session=False)
                )
            )
            for action, ids in (
                ("memory.status_derived_superseded", to_superseded),
                ("memory.status_derived_active", to_active),
            ):
                audit_log.append_chunked(
                    session,
                    actor=self.actor,
                    action=action,
                    target_type="memory",
                    target_ids=sorted(ids),
                    details={"import_run": run_id},
                    key=self._key,
                    size=_AUDIT_IDS_PER_EVENT,
                )
        report.derived_superseded = len(to_superseded)
        report.derived_active = len(to_active)

    def _finish(self, run_id: int, status: str, report: ImportReport) -> None:
        summary = report.as_dict()
        counts = {
            k: summary[k]
            for k in (
                "read",
                "inserted",
                "updated",
                "unchanged",
                "skipped",
                "derived_superseded",
                "derived_active",
                "consents_added",
            )
        }
        finished: datetime = utcnow()
        with self.db.write() as session:
            run = session.get(ImportRun, run_id)
            if run is not None:
                run.status = status
                run.finished_at = finished
                run.sha256 = report.sha256
                run.counts = counts
                run.errors = {"first": report.errors[:100], "total": report.skipped}
            audit_log.append(
                session,
                actor=self.actor,
                action="import.finished",
                target_type="import",
                target_ids=[str(run_id)],
                details={
                    "format": report.source_format,
                    "status": status,
                    "sha256": report.sha256,
                    **counts,
                },
                key=self._key,
            )
