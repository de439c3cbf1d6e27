"""The sync engine: mirror live sources into the canonical store, on schedule.

:func:`sync_source` pulls one source through its connector (``docs/sources.md``):

* **incremental** from the source's cursor (``source_watermarks``, ``source:<name>``), or
  **full** (first sync, ``full=True``, a cursor an erasure redacted, or a kind that cannot
  list its ids whose last full pull is older than ``source_full_sync_hours``);
* every item goes through :class:`~auditor.sources.importer.Importer` (batched transactions; a
  re-sync of an unchanged item changes nothing; a changed item is an audited update; a
  status set by a memaudit reviewer is never overridden; erased subjects are refused),
  with provenance: memory id ``memory_id_for(source, external id)``, ``source.uri``, and
  ``extra.source_name`` / ``source_kind`` / ``external_id`` / ``source_status``;
* the cursor is stored only after every batch of the pull is committed: a sync that
  crashes or fails keeps the old cursor, and the next one pulls the same items again
  (idempotent), so nothing is skipped;
* **deletions at the source**: memories of the source whose external id the source no
  longer holds (``connector.live_ids()``, or the items of a complete full pull) are
  soft-deleted through the lifecycle (actor ``memaudit-sync``, reason "gone from source")
  and marked ``extra.gone_from_source``; a reviewer's quarantine is kept (marked only). An
  item that comes back is mirrored again by the next pull that yields it. A pull that
  returns no items at all while memaudit holds some of the source's memories marks
  nothing gone (a wrong table or an empty mount looks the same as a wiped store).
* then the source's pending write-back actions (:func:`auditor.sources.outbox.run_outbox`).

Only one sync of a source runs at a time (a PostgreSQL advisory lock, a lock file beside
a SQLite store). The pull is read-only against the source. :func:`sync_due` is the
daemon's ``source_sync`` job: it syncs every enabled source whose own schedule is due,
then runs the outbox.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

import structlog
from sqlalchemy import select, text

from auditor.errors import InputError, MemauditError
from auditor.lifecycle import audit_log
from auditor.lifecycle import machine as lifecycle
from auditor.logging import scrub
from auditor.schedules import parse_schedule
from auditor.sources.files.base import Source, SourceItem
from auditor.sources.importer import Importer, ImportReport
from auditor.sources.live.base import Connector, memory_id_for
from auditor.sources.outbox import run_outbox
from auditor.sources.reconcile import reconcile
from auditor.sources.registry import connect, get_source, list_sources, watermark_name
from auditor.store.db import Database
from auditor.store.models import Memory, SourceWatermark
from auditor.store.types import utcnow

__all__ = ["ACTOR", "GONE_REASON", "SyncReport", "run_outbox", "sync_due", "sync_source"]

log = structlog.get_logger(__name__)

ACTOR = "memaudit-sync"
GONE_REASON = "gone from source"
#: An erasure redacts a cursor that named the subject to this: the next pull is full.
_REDACTED = "[erased]"
_CHUNK = 500
_STOP_EVERY = 100
_MAX_ERRORS = 100
#: Extra fields that say the source still holds something; dropped when it is gone.
_HELD = ("retained_in", "orphan_vector", "expired_unswept")
_COUNTED = ("inserted", "updated", "unchanged", "skipped")
#: How early a source's next sync may run (see _due).
_DUE_SLACK = timedelta(seconds=5)


@dataclass
class SyncReport:
    """What one sync of one source did (no personal data: counts, ids and messages).

    Attributes:
        source, kind: the source.
        mode: ``full`` or ``incremental``.
        status: ``completed``, ``completed_with_errors`` (items skipped), ``failed``
            (nothing after the failing batch was kept; the cursor did not move),
            ``stopped`` (asked to stop; the cursor did not move) or ``busy`` (another
            sync of this source was running).
        pulled: items the connector yielded.
        imported: the import's counts (inserted, updated, unchanged, skipped, ...).
        errors: the first problems (item locations and reasons).
        deletions_checked: whether deletions at the source were looked for.
        gone: memories soft-deleted because the source no longer holds them.
        gone_marked: memories marked gone without a status change (already deleted, or
            quarantined by a reviewer).
        cursor: ``advanced`` or ``kept``.
        import_run_id: the import run recorded for the pull.
        actions: what the write-back outbox did for this source.
        reconciled: what the comparison of the source's state with memaudit's decisions
            found (:mod:`auditor.sources.reconcile`): ``drift`` per action, ``requeued``,
            ``converged``, findings opened and resolved.
        error: why the sync failed.
    """

    source: str
    kind: str
    mode: str = "incremental"
    status: str = "running"
    pulled: int = 0
    imported: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    deletions_checked: bool = False
    gone: int = 0
    gone_marked: int = 0
    cursor: str = "kept"
    import_run_id: int | None = None
    actions: dict[str, Any] = field(default_factory=dict)
    reconciled: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        """The sync completed and skipped nothing."""
        return self.status == "completed"

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready summary."""
        return {
            "source": self.source,
            "kind": self.kind,
            "mode": self.mode,
            "status": self.status,
            "ok": self.ok,
            "pulled": self.pulled,
            "imported": self.imported,
            "errors": self.errors,
            "deletions_checked": self.deletions_checked,
            "gone": self.gone,
            "gone_marked": self.gone_marked,
            "cursor": self.cursor,
            "import_run_id": self.import_run_id,
            "actions": self.actions,
            "reconciled": self.reconciled,
            "error": self.error,
            "duration_s": round(self.duration_s, 3),
        }


# -- the pull, as an import source -----------------------------------------------------------


def _normalise(raw: dict[str, Any], name: str, kind: str, external_id: str) -> dict[str, Any]:
    """The record as the engine guarantees it (see "For connector authors")."""
    record = dict(raw)
    nested = record.pop("extra", None)
    if isinstance(nested, dict):
        for key, value in nested.items():
            record.setdefault(str(key), value)
    elif nested is not None:
        record["extra_value"] = nested
    record["memory_id"] = memory_id_for(name, external_id)
    source = record.get("source")
    source = dict(source) if isinstance(source, dict) else {}
    source.setdefault("uri", f"{kind}://{name}/{external_id}")
    source.setdefault("type", "import")
    record["source"] = source
    record.setdefault("source_name", name)
    record.setdefault("source_kind", kind)
    record.setdefault("external_id", external_id)
    record.setdefault("source_status", "live")
    return record


class _PullSource(Source):
    """A connector's pull seen as an import source; remembers what it yielded."""

    format: ClassVar[str] = "sync"

    def __init__(
        self,
        connector: Connector,
        cursor: str | None,
        should_stop: Callable[[], bool] | None,
    ) -> None:
        # no file behind it: Source.__init__ (which checks a path) is not called
        self.connector = connector
        self.cursor = cursor
        self.should_stop = should_stop
        self.settings = connector.settings
        self.path = Path(f"source-{connector.config.name}")
        self.subject = None
        self.namespace = None
        self.sha256 = None
        self.name = connector.config.name
        self.kind = connector.config.kind
        self.seen: set[str] = set()
        self.pulled = 0
        self.anonymous_errors = 0
        self.stopped = False
        self.finished = False

    @property
    def location(self) -> str:
        return f"source {self.name} ({self.kind})"

    @property
    def total(self) -> int | None:
        return None

    def items(self) -> Iterator[SourceItem]:
        for item in self.connector.pull(self.cursor):
            self.pulled += 1
            if (
                self.should_stop is not None
                and self.pulled % _STOP_EVERY == 0
                and self.should_stop()
            ):
                self.stopped = True
                return
            external = item.external_id
            if external is None and item.raw is not None:
                found = item.raw.get("external_id")
                external = str(found) if isinstance(found, str | int) else None
            if external is not None:
                self.seen.add(memory_id_for(self.name, external))
            if item.error is not None:
                if external is None:
                    self.anonymous_errors += 1
                yield SourceItem(item.location, error=item.error, external_id=external)
                continue
            if item.raw is None:
                continue
            if not external:
                self.anonymous_errors += 1
                yield SourceItem(item.location, error="the item has no external id")
                continue
            raw = _normalise(item.raw, self.name, self.kind, external)
            yield SourceItem(item.location, raw=raw, external_id=external)
        self.finished = True


# -- one sync at a time per source -------------------------------------------------------------


def _lock_key(db: Database, name: str) -> int:
    raw = f"memaudit-source-sync:{db.url.database}:{name}".encode()
    return int.from_bytes(hashlib.sha256(raw).digest()[:8], "big") >> 1


@contextlib.contextmanager
def _sync_lock(db: Database, name: str) -> Iterator[bool]:
    """Yields whether this process got the source's sync lock (released at the end)."""
    if db.dialect == "postgresql":
        conn = db.engine.connect()
        try:
            schema = str(conn.execute(text("SELECT current_schema()")).scalar())
            key = _lock_key(db, f"{schema}:{name}")
            got = bool(conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": key}).scalar())
            conn.commit()
            try:
                yield got
            finally:
                if got:
                    conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})
                    conn.commit()
        finally:
            conn.close()
        return
    database = db.url.database
    if not database or database == ":memory:":
        yield True
        return
    path = Path(f"{database}.source-{name}.lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


# -- watermarks ----------------------------------------------------------------------------------


def _read_mark(db: Database, name: str) -> tuple[str | None, dict[str, Any]]:
    with db.session() as session:
        mark = session.get(SourceWatermark, watermark_name(name))
        if mark is None:
            return None, {}
        return mark.position, dict(mark.details or {})


_KEEP = object()


def _save_mark(db: Database, name: str, details: dict[str, Any], position: Any = _KEEP) -> None:
    with db.write() as session:
        mark = session.get(SourceWatermark, watermark_name(name))
        if mark is None:
            mark = SourceWatermark(name=watermark_name(name), position=None, details={})
            session.add(mark)
        if position is not _KEEP:
            mark.position = position
        mark.details = {**(mark.details or {}), **details}
        mark.updated_at = utcnow()


def _iso(value: datetime) -> str:
    return value.isoformat()


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


# -- deletions -------------------------------------------------------------------------------------


def _known_ids(db: Database, name: str) -> set[str]:
    prefix = f"src_{name[:40]}_"  # see memory_id_for; other sources are filtered later
    with db.session() as session:
        return set(
            session.scalars(
                select(Memory.memory_id).where(Memory.memory_id.startswith(prefix, autoescape=True))
            )
        )


def _known_subjects(db: Database, name: str) -> dict[str, str]:
    """External id -> subject of the source's items memaudit holds (its mirror)."""
    prefix = f"src_{name[:40]}_"
    with db.session() as session:
        return {
            str(external): str(subject)
            for external, subject in session.execute(
                select(Memory.external_id, Memory.subject).where(
                    Memory.memory_id.startswith(prefix, autoescape=True),
                    Memory.external_id.is_not(None),
                )
            )
        }


def _mark_gone(db: Database, name: str, gone: list[str], report: SyncReport) -> None:
    """Soft-delete (or only mark) memories the source no longer holds."""
    settings = db.settings
    when = _iso(utcnow())
    for start in range(0, len(gone), _CHUNK):
        with db.write() as session:
            memories = session.scalars(
                select(Memory).where(Memory.memory_id.in_(gone[start : start + _CHUNK]))
            ).all()
            for memory in memories:
                extra = dict(memory.extra or {})
                if extra.get("source_name") != name or "gone_from_source" in extra:
                    continue  # another source with a similar name, or marked before
                reviewed = memory.status == "quarantined" and memory.status_source == "memaudit"
                if memory.status != "deleted" and not reviewed:
                    try:
                        with session.begin_nested():
                            lifecycle.soft_delete(
                                session, settings, memory.memory_id, actor=ACTOR, reason=GONE_REASON
                            )
                    except MemauditError:
                        continue  # changed meanwhile: the next sync looks again
                    # the source's state, not a reviewer's decision: a later pull that
                    # yields the item again mirrors it again
                    memory.status_source = "source"
                    report.gone += 1
                else:
                    report.gone_marked += 1
                for key in _HELD:
                    extra.pop(key, None)
                extra["gone_from_source"] = when
                extra["source_status"] = "gone"
                memory.extra = extra
                memory.record_hash = None  # the same record pulled again is an update


def _detect_deletions(
    db: Database,
    name: str,
    live: set[str] | None,
    pull: _PullSource,
    full: bool,
    report: SyncReport,
) -> None:
    if live is not None:
        present = {memory_id_for(name, external) for external in live}
    elif full and pull.finished and not pull.anonymous_errors:
        present = pull.seen
    else:
        return
    known = _known_ids(db, name)
    report.deletions_checked = True
    if not present and known and not pull.pulled:
        report.deletions_checked = False
        report.errors.append(
            f"source {name!r} returned no items; {len(known)} memories of it were not marked "
            "gone (check the connection and mapping, or remove the source)"
        )
        return
    gone = sorted(known - present)
    if gone:
        _mark_gone(db, name, gone, report)


# -- sync ------------------------------------------------------------------------------------------


def _full_due(details: dict[str, Any], settings_hours: float, now: datetime) -> bool:
    if details.get("live_ids", True):
        return False
    last_full = _parse_time(details.get("last_full_at"))
    return last_full is None or now - last_full >= timedelta(hours=settings_hours)


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, MemauditError):
        return str(exc)
    return scrub(f"{type(exc).__name__}: {exc}", limit=500)


def _pull(
    db: Database,
    name: str,
    cursor: str | None,
    *,
    full: bool,
    should_stop: Callable[[], bool] | None,
    report: SyncReport,
    mark: dict[str, Any],
    now: datetime,
) -> str | None:
    """Pull the source through the importer, then look for deletions and reconcile.

    What the pull found goes on ``report``, what the next sync needs to know on ``mark``
    (``live_ids``, ``last_full_at``). A failure is reported (status ``failed``), not raised.

    Returns:
        The connector's next cursor once the pull completed (None until then).
    """
    next_cursor: str | None = None
    try:
        with connect(db, name) as connector:
            connector.known_subjects = _known_subjects(db, name)
            pull = _PullSource(connector, None if full else cursor, should_stop)
            imported = Importer(db, actor=ACTOR).run(pull)
            _take_import(report, imported, pull)
            if pull.stopped:
                report.status = "stopped"
            else:
                next_cursor = connector.next_cursor()
                live = connector.live_ids()
                _detect_deletions(db, name, live, pull, full, report)
                report.reconciled = reconcile(db, name, errors=imported.errors, full=full).as_dict()
                mark["live_ids"] = live is not None
                if full:
                    mark["last_full_at"] = _iso(now)
                report.status = (
                    "completed" if imported.ok and not report.errors else "completed_with_errors"
                )
                report.cursor = "advanced"
    except Exception as exc:  # noqa: BLE001 - reported; the next sync tries again
        report.status = "failed"
        report.error = _error_text(exc)
        log.warning("source_sync_failed", source=name, error_type=type(exc).__name__)
    return next_cursor


def _record(
    db: Database,
    name: str,
    report: SyncReport,
    mark: dict[str, Any],
    next_cursor: str | None,
    now: datetime,
) -> None:
    """Store the attempt on the source's watermark; its cursor only if the pull advanced it."""
    mark.update(
        last_sync_status=report.status,
        last_sync_mode=report.mode,
        last_error=report.error,
        last_counts={
            "pulled": report.pulled,
            **{
                k: report.imported.get(k, 0)
                for k in ("inserted", "updated", "unchanged", "skipped")
            },
            "gone": report.gone,
        },
    )
    if report.reconciled:
        mark["last_drift"] = dict(report.reconciled.get("drift") or {})
    if report.cursor == "advanced":
        mark["last_sync_at"] = _iso(now)
        _save_mark(db, name, mark, position=next_cursor)
    else:
        _save_mark(db, name, mark)


def _audit_sync(db: Database, name: str, report: SyncReport) -> None:
    """The ``source.synced`` audit event (none for a sync that found the source busy)."""
    if report.status != "busy":
        with db.write() as session:
            audit_log.append(
                session,
                actor=ACTOR,
                action="source.synced",
                target_type="source",
                target_ids=[name],
                details={
                    "mode": report.mode,
                    "status": report.status,
                    "import_run": report.import_run_id,
                    "pulled": report.pulled,
                    "gone": report.gone,
                    "gone_marked": report.gone_marked,
                    "deletions_checked": report.deletions_checked,
                },
                key=lifecycle.audit_key(db.settings),
            )


def sync_source(
    db: Database,
    name: str,
    *,
    full: bool = False,
    should_stop: Callable[[], bool] | None = None,
    actions: bool = True,
    attempt_at: datetime | None = None,
) -> SyncReport:
    """Sync one source into the store, then carry its pending write-back actions.

    Args:
        db: the store (schema current).
        name: the source.
        full: pull everything (detects deletions for every kind) instead of from the cursor.
        should_stop: polled during the pull; a stopped sync keeps what it stored and its
            old cursor.
        actions: run the source's write-back outbox afterwards.
        attempt_at: the time recorded as this attempt's (default: now). The daemon's job
            passes its own start, so a source's schedule counts from when it was due,
            not from when a slow sync of another source let it start.

    Returns:
        The report; ``report.status`` says how it went (a failed pull is reported, not
        raised, so that the daemon goes on with the other sources).

    Raises:
        NotFoundError: no such source.
    """
    info = get_source(db, name)
    config = info.config
    report = SyncReport(config.name, config.kind)
    started = time.perf_counter()
    now = attempt_at or utcnow()
    with _sync_lock(db, config.name) as got:
        if not got:
            report.status = "busy"
            report.error = f"source {config.name!r}: another sync of it is running"
            return report
        cursor, details = _read_mark(db, config.name)
        if cursor == _REDACTED:
            cursor = None
        settings = db.settings
        full = (
            full
            or cursor is None
            or settings.source_full_sync_hours == 0
            or _full_due(details, settings.source_full_sync_hours, now)
        )
        report.mode = "full" if full else "incremental"
        log.info("source_sync_started", source=config.name, kind=config.kind, mode=report.mode)
        mark: dict[str, Any] = {"last_attempt_at": _iso(now), "kind": config.kind}
        next_cursor = _pull(
            db,
            config.name,
            cursor,
            full=full,
            should_stop=should_stop,
            report=report,
            mark=mark,
            now=now,
        )
        report.duration_s = time.perf_counter() - started
        _record(db, config.name, report, mark, next_cursor, now)
        _audit_sync(db, config.name, report)
    if actions and report.status not in ("failed", "busy"):
        report.actions = run_outbox(db, source=config.name, should_stop=should_stop)
    log.info(
        "source_sync_finished",
        source=config.name,
        mode=report.mode,
        status=report.status,
        pulled=report.pulled,
        inserted=report.imported.get("inserted", 0),
        updated=report.imported.get("updated", 0),
        gone=report.gone,
        duration_s=round(report.duration_s, 3),
    )
    return report


def _take_import(report: SyncReport, imported: ImportReport, pull: _PullSource) -> None:
    data = imported.as_dict()
    report.import_run_id = imported.run_id
    report.pulled = pull.pulled
    report.imported = {
        k: data[k]
        for k in (
            "read",
            "inserted",
            "updated",
            "unchanged",
            "skipped",
            "derived_superseded",
            "derived_active",
        )
    }
    report.errors = list(imported.errors[:_MAX_ERRORS])


def _due(schedule: str, last: datetime | None, now: datetime) -> bool:
    try:
        trigger = parse_schedule(schedule, "source")
    except ValueError:
        return False
    if trigger is None:
        return False
    if last is None:
        return True
    nxt = trigger.get_next_fire_time(last, last)
    # The job itself fires on its own schedule, a little late or early: without slack an
    # "every 1m" source whose last attempt was recorded a few milliseconds after the job
    # started would be "not yet due" a minute later, and synced every 2 minutes.
    return nxt is not None and nxt <= now + _DUE_SLACK


def sync_due(
    db: Database,
    *,
    now: datetime | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    """The daemon's ``source_sync`` job: sync enabled sources that are due, then the outbox.

    A source is due when its schedule fired since its last sync attempt (a failed attempt
    counts: a broken source is retried on its schedule, not every minute).

    Returns:
        Counts and, per synced source, its status (no personal data).
    """
    now = now or utcnow()
    results: dict[str, Any] = {}
    failed = 0
    for info in list_sources(db):
        if should_stop is not None and should_stop():
            break
        if not info.enabled:
            continue
        last = _parse_time((info.last_sync or {}).get("last_attempt_at"))
        if not _due(info.config.schedule, last, now):
            continue
        try:
            report = sync_source(
                db, info.config.name, should_stop=should_stop, actions=False, attempt_at=now
            )
        except InputError as exc:
            results[info.config.name] = {"status": "failed", "error": str(exc)}
            failed += 1
            continue
        results[info.config.name] = {
            "status": report.status,
            "mode": report.mode,
            "pulled": report.pulled,
            "inserted": report.imported.get("inserted", 0),
            "updated": report.imported.get("updated", 0),
            "gone": report.gone,
        }
        failed += report.status == "failed"
    outbox = run_outbox(db, should_stop=should_stop)
    return {
        "sources": len(list_sources(db)),
        "synced": len(results),
        "failed": failed,
        "results": results,
        "actions": outbox,
    }
