"""The daemon: scheduled audits, one scheduler among many replicas, health and metrics.

* Jobs (``auditor.config.DEFAULT_SCHEDULE``): incremental scan, full scan, expiry sweep,
  retention purge of soft-deleted memories, audit-log verification, live-source sync
  (``auditor.sources.sync``). Each has a crontab or interval schedule from the settings;
  ``memaudit daemon --once JOB`` runs one job now.
* Exactly one scheduler: every replica may start, but only the holder of the leader lock
  schedules (PostgreSQL: a session advisory lock on a dedicated connection; SQLite: an
  exclusive ``flock`` on a lock file beside the database). A standby retries every
  ``leader_poll_seconds``; when the leader dies its lock goes with it (connection closed,
  file descriptor closed), so another replica takes over within one poll.
* APScheduler 3 keeps its jobs in the store (table ``scheduler_jobs``), used only by the
  leader of the moment: ``coalesce`` and ``max_instances=1``; a run missed during downtime
  runs once when a leader is back (``misfire_grace_time``).
* Jobs run one at a time (one worker thread): a full and an incremental scan never race.
* A scan interrupted by a crash (``kill -9``) leaves a ``running`` scan run behind; the next
  leader marks it ``abandoned`` and runs a scan of the same kind at once. Findings are
  fingerprinted and actions are applied in the transaction of the finding that caused
  them, so nothing is duplicated or applied twice.
* SIGTERM / SIGINT: the current scan stops after its current batch (committed whole), the
  scheduler shuts down, the lock is released, exit 0.
* ``--health-port``: ``/healthz`` (JSON; 200 when healthy, 503 otherwise) and ``/metrics``
  (Prometheus text format).

* Shards: a scan is split by subject hash (``auditor.scan.scanner``). On PostgreSQL every replica
  runs a procrastinate worker and the leader's scan job only queues the shards and waits
  (``auditor.scan.shards``); on SQLite the leader scans the shards itself. A scan interrupted by
  a crash or a stop is resumed by the next leader from each shard's cursor, not restarted.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import structlog
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from procrastinate.exceptions import ProcrastinateException as ProcrastinateError
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from sqlalchemy import Connection, delete, func, select, text

from auditor.config import Settings
from auditor.errors import InputError, MemauditError, StoreError
from auditor.exitcodes import ExitCode
from auditor.hashing import subject_digest
from auditor.judge.batches import submit_deferred
from auditor.lifecycle import audit_log
from auditor.lifecycle import machine as lifecycle
from auditor.rulepack.pack import load_pack
from auditor.scan.shards import ShardQueue, ShardWorker, queue_depth, uses_queue
from auditor.schedules import parse_schedule
from auditor.store.db import Database
from auditor.store.models import Finding, Memory, ScanRun, ScanShard, Tombstone
from auditor.store.types import utcnow

__all__ = ["JOBS", "Daemon", "Leadership", "run_job", "run_once"]

log = structlog.get_logger(__name__)

ACTOR = "memaudit-daemon"
JOBSTORE_TABLE = "scheduler_jobs"


def leader_key(schema: str) -> int:
    """The advisory lock key: a stable 63-bit number from a name and the store's schema.

    Advisory locks are per database, not per schema: two memaudit stores in two schemas
    of one database must not share a leader.
    """
    raw = f"memaudit-scheduler:{schema}".encode()
    return int.from_bytes(hashlib.sha256(raw).digest()[:8], "big") >> 1


# -- metrics --------------------------------------------------------------------------------


@dataclass
class Metrics:
    """The daemon's Prometheus metrics (own registry: nothing global)."""

    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        r = self.registry
        self.scan_duration = Histogram(
            "memaudit_scan_duration_seconds",
            "Duration of scans.",
            ["mode"],
            registry=r,
            buckets=(0.5, 1, 5, 15, 60, 300, 900, 3600, 14400),
        )
        self.memories_scanned = Counter(
            "memaudit_memories_scanned", "Memories evaluated by scans.", ["mode"], registry=r
        )
        self.findings_new = Counter(
            "memaudit_findings_new", "Findings opened by scans.", ["category"], registry=r
        )
        self.findings_open = Gauge(
            "memaudit_findings_open", "Open findings.", ["category", "severity"], registry=r
        )
        self.errors = Counter(
            "memaudit_errors", "Detector errors and failed jobs.", ["kind"], registry=r
        )
        self.judge_calls = Counter("memaudit_judge_calls", "LLM judge calls.", registry=r)
        self.judge_tokens = Counter("memaudit_judge_tokens", "LLM judge tokens.", registry=r)
        self.queue_depth = Gauge(
            "memaudit_queue_depth", "Scan shards waiting (0 without a task queue).", registry=r
        )
        self.last_success = Gauge(
            "memaudit_last_successful_scan_timestamp_seconds",
            "Unix time of the last completed scan.",
            registry=r,
        )
        self.is_leader = Gauge(
            "memaudit_is_leader", "1 when this replica schedules the jobs.", registry=r
        )
        self.job_runs = Counter(
            "memaudit_job_runs", "Daemon job runs.", ["job", "outcome"], registry=r
        )
        self.source_drift = Gauge(
            "memaudit_source_writeback_drift",
            "Items whose source did not hold memaudit's decision at its last sync "
            "(quarantine, restore, erased_still_in_source).",
            ["source", "action"],
            registry=r,
        )
        self.source_actions = Gauge(
            "memaudit_source_actions",
            "Write-back outbox rows waiting or failed.",
            ["source", "action", "status"],
            registry=r,
        )

        self.accounts_locked = Gauge(
            "memaudit_accounts_locked", "Dashboard accounts locked now.", registry=r
        )
        self.account_lockouts = Counter(
            "memaudit_account_lockouts",
            "Account lockouts after failed sign-ins (account.locked audit events).",
            registry=r,
        )
        self._lockouts_seen = 0

    def record_accounts(self, db: Database) -> None:
        """Refresh the lockout figures from the store (the dashboard locks, not the daemon)."""
        from auditor.access.lockout import lockout_stats

        stats = lockout_stats(db)
        self.accounts_locked.set(stats["locked_now"])
        if stats["lockouts_total"] > self._lockouts_seen:
            self.account_lockouts.inc(stats["lockouts_total"] - self._lockouts_seen)
        self._lockouts_seen = max(self._lockouts_seen, stats["lockouts_total"])

    def record_sources(self, db: Database) -> None:
        """Refresh the write-back gauges: drift at each source's last sync, outbox rows."""
        from auditor.sources.registry import list_sources
        from auditor.store.models import SourceAction

        with db.session() as session:
            rows = session.execute(
                select(SourceAction.source, SourceAction.action, SourceAction.status, func.count())
                .where(SourceAction.status.in_(("pending", "failed")))
                .group_by(SourceAction.source, SourceAction.action, SourceAction.status)
            ).all()
        self.source_actions.clear()
        for source, action, status, n in rows:
            self.source_actions.labels(source, action, status).set(n)
        self.source_drift.clear()
        for info in list_sources(db):
            drift = (info.last_sync or {}).get("last_drift") or {}
            for action in ("quarantine", "restore", "erased_still_in_source"):
                self.source_drift.labels(info.config.name, action).set(int(drift.get(action, 0)))

    def record_open_findings(self, db: Database) -> None:
        """Refresh the open-findings gauge from the store."""
        with db.session() as session:
            rows = session.execute(
                select(Finding.category, Finding.severity, func.count())
                .where(Finding.status.in_(("open", "acknowledged")))
                .group_by(Finding.category, Finding.severity)
            ).all()
        self.findings_open.clear()
        for category, severity, n in rows:
            self.findings_open.labels(category, severity).set(n)


# -- jobs -----------------------------------------------------------------------------------


@dataclass
class JobContext:
    """What a job needs: the store, settings, metrics, the stop flag and the shard queue."""

    db: Database
    settings: Settings
    metrics: Metrics
    stop: threading.Event = field(default_factory=threading.Event)
    queue: ShardQueue | None = None  # PostgreSQL: shards go to every replica's worker
    last_scan_ok: float | None = None
    judge: Any = None  # built once: its verdict cache outlives a scan
    judge_built: bool = False
    judge_seen: tuple[int, int] = (0, 0)  # calls and tokens already counted


def _judge(ctx: JobContext) -> Any:
    from auditor.judge.llm import judge_from_settings

    if not ctx.judge_built:
        ctx.judge, ctx.judge_built = judge_from_settings(ctx.settings), True
    return ctx.judge


def _scan(ctx: JobContext, full: bool, resume: int | None = None) -> dict[str, Any]:
    """Start a scan (or resume run ``resume``), get its shards done, report the run."""
    from auditor.scan.runs import DISPATCH_DAEMON, DISPATCH_QUEUE
    from auditor.scan.scanner import Scanner
    from auditor.scan.workers import largest_first

    judge = _judge(ctx)
    pack = load_pack(ctx.settings.rules_dir)  # re-read: operators tune rules without restarts
    scanner = Scanner(ctx.db, pack, judge=judge)
    if resume is None:
        dispatch = DISPATCH_QUEUE if ctx.queue is not None else DISPATCH_DAEMON
        run_id = scanner.start(full=full, dispatch=dispatch)
    else:
        run_id = resume
    if ctx.queue is not None:
        # the first time biggest shards first (replicas take jobs in the order queued: see
        # auditor.scan.workers.largest_first); a re-queue later needs no order
        _defer_pending(ctx, run_id, first=lambda shards: largest_first(scanner, run_id, shards))
        last = time.monotonic()

        def on_poll() -> None:
            nonlocal last
            _poll_queue(ctx)
            if time.monotonic() - last >= ctx.settings.worker_stall_seconds:
                # a shard released while its new job could not be queued (the database
                # away at that moment) would wait forever: queue pending shards again
                # (a shard already waiting in the queue is not queued twice)
                last = time.monotonic()
                _defer_pending(ctx, run_id)

        ctx.queue.wait(run_id, ctx.stop.is_set, on_poll=on_poll)
        _poll_queue(ctx)
    else:
        # interrupted by a stop, the run stays "running": the next leader resumes it
        scanner.execute(run_id, should_stop=ctx.stop.is_set)
    submit_deferred(ctx.db, judge)  # batch mode: what the scan deferred goes out now
    summary = scanner.summary(run_id)
    mode = summary.mode
    if summary.status != "running":
        ctx.metrics.scan_duration.labels(mode).observe(summary.duration_s)
        ctx.metrics.memories_scanned.labels(mode).inc(summary.memories_scanned)
        categories = {r.id: r.category for r in pack.rules}
        for rule_id, counts in summary.by_rule.items():
            if counts.get("new"):
                category = categories.get(rule_id, "unknown")
                ctx.metrics.findings_new.labels(category).inc(counts["new"])
        if summary.error_count:
            ctx.metrics.errors.labels("detector").inc(summary.error_count)
        if summary.status == "failed":
            ctx.metrics.errors.labels("scan_failed").inc()
    if judge is not None and hasattr(judge, "stats"):
        calls, tokens = int(judge.stats.calls), int(judge.stats.tokens)
        ctx.metrics.judge_calls.inc(calls - ctx.judge_seen[0])
        ctx.metrics.judge_tokens.inc(tokens - ctx.judge_seen[1])
        ctx.judge_seen = (calls, tokens)
    if summary.complete:
        ctx.last_scan_ok = time.time()
        ctx.metrics.last_success.set(ctx.last_scan_ok)
    ctx.metrics.record_open_findings(ctx.db)
    data = summary.as_dict()
    return {
        k: data[k]
        for k in (
            "run_id",
            "mode",
            "status",
            "complete",
            "shards",
            "memories_scanned",
            "findings_new",
            "findings_resolved",
            "error_count",
            "duration_s",
            "open_by_severity",
        )
    }


def _defer_pending(
    ctx: JobContext,
    run_id: int,
    first: Callable[[Sequence[int]], Sequence[int]] | None = None,
) -> None:
    """Queue the run's pending shards (in the order ``first`` gives them, if given)."""
    assert ctx.queue is not None
    try:
        with ctx.db.session() as session:
            pending = list(
                session.scalars(
                    select(ScanShard.shard)
                    .where(ScanShard.run_id == run_id, ScanShard.status == "pending")
                    .order_by(ScanShard.shard)
                )
            )
        ctx.queue.defer(run_id, first(pending) if first is not None else pending)
    except (StoreError, ProcrastinateError) as exc:  # the database away: the next poll
        log.warning("shards_not_queued", run_id=run_id, error_type=type(exc).__name__)


def _poll_queue(ctx: JobContext) -> None:
    try:
        ctx.metrics.queue_depth.set(queue_depth(ctx.db))
    except StoreError:
        pass  # the next poll tries again


def resume_scan(ctx: JobContext, run_id: int) -> dict[str, Any]:
    """Finish a run a previous leader left running (from each shard's cursor)."""
    return _scan(ctx, full=False, resume=run_id)


def job_incremental_scan(ctx: JobContext) -> dict[str, Any]:
    """Scan what changed since the last scan."""
    return _scan(ctx, full=False)


def job_full_scan(ctx: JobContext) -> dict[str, Any]:
    """Scan every memory."""
    return _scan(ctx, full=True)


def job_expiry_sweep(ctx: JobContext) -> dict[str, Any]:
    """Expire active memories whose ``expires_at`` has passed (through the lifecycle)."""
    now = utcnow()
    with ctx.db.session() as session:
        due = list(
            session.scalars(
                select(Memory.memory_id)
                .where(
                    Memory.status == "active",
                    Memory.expires_at.is_not(None),
                    Memory.expires_at <= now,
                )
                .limit(10_000)
            )
        )
    expired = 0
    for start in range(0, len(due), 200):
        if ctx.stop.is_set():
            break
        with ctx.db.write() as session:
            for mid in due[start : start + 200]:
                try:
                    with session.begin_nested():
                        lifecycle.expire(
                            session, ctx.settings, mid, actor=ACTOR, reason="expires_at passed"
                        )
                    expired += 1
                except MemauditError:
                    continue  # changed meanwhile: the next sweep looks again
    return {"due": len(due), "expired": expired}


def job_retention_purge(ctx: JobContext) -> dict[str, Any]:
    """Erase soft-deleted memories older than ``retention_days`` (tombstones remain)."""
    cutoff = utcnow() - timedelta(days=ctx.settings.retention_days)
    key = lifecycle.audit_key(ctx.settings)
    purged = 0
    while not ctx.stop.is_set():
        with ctx.db.write() as session:
            rows = session.execute(
                select(Memory.memory_id, Memory.subject)
                .where(
                    Memory.status == "deleted",
                    Memory.deleted_at.is_not(None),
                    Memory.deleted_at <= cutoff,
                )
                .limit(500)
            ).all()
            if not rows:
                break
            ids = [mid for mid, _subject in rows]
            session.add_all(
                Tombstone(memory_id=mid, subject_digest=subject_digest(subject, key))
                for mid, subject in rows
            )
            session.execute(delete(Memory).where(Memory.memory_id.in_(ids)))
            audit_log.append_chunked(
                session,
                actor=ACTOR,
                action="memory.purged",
                target_type="memory",
                target_ids=ids,
                details={"retention_days": ctx.settings.retention_days},
                key=key,
            )
            purged += len(ids)
    return {"purged": purged}


def job_audit_verify(ctx: JobContext) -> dict[str, Any]:
    """Verify the audit log's hash chain; a broken chain is logged as an error."""
    with ctx.db.session() as session:
        result = audit_log.verify(session, key=lifecycle.audit_key(ctx.settings))
    if not result.ok:
        ctx.metrics.errors.labels("audit_chain").inc()
        log.error("audit_chain_broken", first_bad_seq=result.first_bad_seq, reason=result.reason)
    return {"ok": result.ok, "checked": result.checked, "first_bad_seq": result.first_bad_seq}


def job_judge_batches(ctx: JobContext) -> dict[str, Any]:
    """Collect the LLM judge's ended Message Batches and rescan the subjects they judged."""
    from auditor.judge.batches import collect
    from auditor.scan.scanner import Scanner

    judge = _judge(ctx)
    if judge is None or not getattr(judge, "deferring", False):
        return {"enabled": False}

    def rescan(subjects: Sequence[str]) -> None:
        Scanner(ctx.db, load_pack(ctx.settings.rules_dir), judge=judge).run_subjects(subjects)

    return {"enabled": True, **collect(ctx.db, judge, rescan)}


def job_erasure_queue(ctx: JobContext) -> dict[str, Any]:
    """Resume interrupted erasures (lease expired), execute approved requests; empty the
    judge's verdict cache after erasures (see :mod:`auditor.erasure.states`)."""
    from auditor.erasure.queue import run_queue

    return run_queue(ctx.db, actor=ACTOR, judge=ctx.judge, should_stop=ctx.stop.is_set)


def job_source_sync(ctx: JobContext) -> dict[str, Any]:
    """Sync every enabled live source whose own schedule is due, then carry pending
    write-back actions (quarantine, restore, erasure) into the sources (auditor.sources.sync)."""
    from auditor.sources.sync import sync_due

    result = sync_due(ctx.db, should_stop=ctx.stop.is_set)
    ctx.metrics.record_sources(ctx.db)
    return result


JOBS: dict[str, Callable[[JobContext], dict[str, Any]]] = {
    "incremental_scan": job_incremental_scan,
    "full_scan": job_full_scan,
    "expiry_sweep": job_expiry_sweep,
    "retention_purge": job_retention_purge,
    "audit_verify": job_audit_verify,
    "judge_batches": job_judge_batches,
    "erasure_queue": job_erasure_queue,
    "source_sync": job_source_sync,
}
_CONTEXT: JobContext | None = None  # set by the daemon; scheduled jobs are looked up by name


#: Waits between attempts of a job that found the database unreachable (seconds).
RETRY_BACKOFF = (1.0, 2.0, 4.0, 8.0, 16.0, 32.0)


def scheduled_job(name: str, run_id: int | None = None, sync_first: bool = False) -> None:
    """Entry point of a scheduled job (picklable: the job store keeps only the name).

    ``run_id`` is given for ``resume_scan``: finish a run a previous leader left running.
    ``sync_first`` runs the live sources' sync before the job (the first scan of a new
    set-up: without it, the first findings would wait for the next scan after the sync).
    """
    if _CONTEXT is None:  # pragma: no cover - the daemon sets it before scheduling
        raise RuntimeError("the daemon is not running")
    if sync_first:
        run_with_retries("source_sync", _CONTEXT)
    run_with_retries(name, _CONTEXT, run_id=run_id)


def run_with_retries(
    name: str,
    ctx: JobContext,
    backoff: tuple[float, ...] = RETRY_BACKOFF,
    run_id: int | None = None,
) -> dict[str, Any] | None:
    """Run a job; when the database is unreachable, wait and try again (bounded backoff).

    Returns:
        The job's result, or None when it gave up (the next scheduled run tries again) or
        the daemon is stopping.
    """
    for attempt, wait in enumerate((0.0, *backoff)):
        if wait and ctx.stop.wait(wait):
            return None  # stopping: do not start another attempt
        try:
            return run_job(name, ctx, run_id=run_id)
        except StoreError as exc:
            log.warning(
                "job_retrying", job=name, attempt=attempt + 1, error_type=type(exc).__name__
            )
    log.error("job_gave_up", job=name, attempts=len(backoff) + 1)
    return None


def run_job(name: str, ctx: JobContext, run_id: int | None = None) -> dict[str, Any]:
    """Run one job now, log one canonical line, count it.

    ``name`` may also be ``resume_scan`` with the ``run_id`` to finish.

    Raises:
        InputError: unknown job.
    """
    fn = JOBS.get(name)
    if fn is None and not (name == "resume_scan" and run_id is not None):
        raise InputError(f"unknown job {name!r}; jobs: {', '.join(JOBS)}")
    started = time.perf_counter()
    try:
        result = fn(ctx) if fn is not None else resume_scan(ctx, int(run_id or 0))
    except Exception as exc:
        ctx.metrics.job_runs.labels(name, "failed").inc()
        ctx.metrics.errors.labels("job").inc()
        log.error(
            "job_failed",
            job=name,
            error_type=type(exc).__name__,
            duration_s=round(time.perf_counter() - started, 3),
        )
        raise
    ctx.metrics.job_runs.labels(name, "ok").inc()
    line = {k: v for k, v in result.items() if not isinstance(v, dict)}
    line["duration_s"] = round(time.perf_counter() - started, 3)
    log.info("job_finished", job=name, **line)  # one canonical line per job run
    return result


# -- leadership -----------------------------------------------------------------------------


class Leadership:
    """The leader lock: a PostgreSQL advisory lock, or an exclusive lock file for SQLite."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._conn: Connection | None = None
        self._fd: int | None = None
        self._key = 0
        if db.dialect == "sqlite":
            database = db.url.database or "memaudit.db"
            self.lock_path = Path(f"{database}.leader.lock").resolve()

    @property
    def held(self) -> bool:
        """Whether this process holds the lock (as far as it last checked)."""
        return self._conn is not None or self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if it is free; never blocks."""
        if self.held:
            return True
        if self.db.dialect == "sqlite":
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return False
            os.ftruncate(fd, 0)
            os.write(fd, f"{socket.gethostname()} {os.getpid()}\n".encode())
            self._fd = fd
            return True
        conn = self.db.engine.connect()
        try:
            self._key = leader_key(str(conn.execute(text("SELECT current_schema()")).scalar()))
            got = bool(
                conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": self._key}).scalar()
            )
            conn.commit()
        except Exception:
            conn.close()
            raise
        if not got:
            conn.close()
            return False
        self._conn = conn
        return True

    def check(self) -> bool:
        """Whether the lock is still held (PostgreSQL: the session is still alive)."""
        if self._conn is None:
            return self._fd is not None
        try:
            self._conn.execute(text("SELECT 1"))
            self._conn.commit()
            return True
        except Exception:  # noqa: BLE001 - a dead session has lost the lock
            self._drop_conn()
            return False

    def release(self) -> None:
        """Give the lock up."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
        if self._conn is not None:
            try:
                self._conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": self._key})
                self._conn.commit()
            except Exception:  # noqa: BLE001 - closing the session releases it anyway
                pass
            self._drop_conn()

    def _drop_conn(self) -> None:
        if self._conn is not None:
            try:
                self._conn.invalidate()
                self._conn.close()
            except Exception:  # noqa: BLE001
                pass
            self._conn = None


# -- health ---------------------------------------------------------------------------------


def _health_handler(daemon: Daemon) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            if self.path.split("?")[0] == "/healthz":
                ok, body = daemon.health()
                self._send(200 if ok else 503, "application/json", json.dumps(body).encode())
            elif self.path.split("?")[0] == "/metrics":
                try:
                    daemon.metrics.record_accounts(daemon.ctx.db)
                except Exception:  # noqa: BLE001 - a store hiccup must not fail the scrape
                    daemon.metrics.errors.labels("metrics_accounts").inc()
                self._send(
                    200, "text/plain; version=0.0.4", generate_latest(daemon.metrics.registry)
                )
            else:
                self._send(404, "text/plain", b"not found\n")

        def _send(self, status: int, ctype: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass  # no request logs (they would carry client addresses)

    return Handler


# -- the daemon -----------------------------------------------------------------------------


class Daemon:
    """One replica: tries to lead, schedules while it leads, serves health.

    Args:
        db: the store (schema current).
        settings: schedules, poll interval, health host.
    """

    def __init__(self, db: Database, settings: Settings) -> None:
        self.db = db
        self.settings = settings
        self.metrics = Metrics()
        self.ctx = JobContext(db, settings, self.metrics)
        self.leader = Leadership(db)
        self.scheduler: BackgroundScheduler | None = None
        self.worker: ShardWorker | None = None
        self.started_at = utcnow()
        self._server: ThreadingHTTPServer | None = None

    # health

    def health(self) -> tuple[bool, dict[str, Any]]:
        """(healthy, body) for /healthz."""
        try:
            with self.db.session() as session:
                session.execute(text("SELECT 1"))
            database = "ok"
        except StoreError:
            database = "unreachable"
        scheduler = (
            "running" if self.scheduler is not None and self.scheduler.running else "standby"
        )
        age = None if self.ctx.last_scan_ok is None else round(time.time() - self.ctx.last_scan_ok)
        if self.worker is None:
            worker = "in-process"
        else:
            worker = "ready" if self.worker.alive and self.worker.ready.is_set() else "down"
        ok = (
            database == "ok"
            and (scheduler == "running" or not self.leader.held)
            and worker != "down"
        )
        return ok, {
            "status": "ok" if ok else "unhealthy",
            "database": database,
            "role": "leader" if self.leader.held else "standby",
            "scheduler": scheduler,
            "shard_worker": worker,
            "seconds_since_last_successful_scan": age,
        }

    def serve_health(self, port: int) -> int:
        """Start /healthz and /metrics on ``port`` (0: any free port); returns the port."""
        self._server = ThreadingHTTPServer((self.settings.health_host, port), _health_handler(self))
        thread = threading.Thread(target=self._server.serve_forever, name="health", daemon=True)
        thread.start()
        return int(self._server.server_address[1])

    # leading

    def _start_scheduler(self) -> None:
        global _CONTEXT
        _CONTEXT = self.ctx
        store = SQLAlchemyJobStore(engine=self.db.engine, tablename=JOBSTORE_TABLE)
        scheduler = BackgroundScheduler(
            jobstores={"default": store},
            executors={"default": ThreadPoolExecutor(1)},  # one job at a time
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": 24 * 3600},
            timezone="UTC",
        )
        scheduler.start(paused=True)
        for name, spec in self.settings.schedule.items():
            trigger = parse_schedule(spec, name)
            existing = scheduler.get_job(name)
            if trigger is None:
                if existing is not None:
                    scheduler.remove_job(name)
                continue
            if existing is not None and str(existing.trigger) == str(trigger):
                continue  # keep its next run time: a run missed while down runs once
            scheduler.add_job(
                scheduled_job, trigger, args=[name], id=name, name=name, replace_existing=True
            )
        self._recover(scheduler)
        scheduler.resume()
        self.scheduler = scheduler
        self.metrics.is_leader.set(1)
        log.info("leader_acquired", jobs=sorted(j.id for j in scheduler.get_jobs()))

    def _recover(self, scheduler: BackgroundScheduler) -> None:
        """Scans a previous leader left ``running``: resume them, or give them up.

        A run of the daemon's (in-process or queued shards) made with the current rule
        pack is resumed from each shard's cursor. Anything else left running (a crashed
        ``memaudit scan``, or rules changed since) is marked ``abandoned`` and a scan of
        that kind runs at once. A store that was never scanned gets a full scan at once.
        """
        from auditor.scan.runs import DISPATCH_DAEMON, DISPATCH_INLINE, DISPATCH_QUEUE
        from auditor.scan.stale import reap_stale_runs

        current = load_pack(self.settings.rules_dir).sha256
        # runs of `memaudit scan` whose process is gone are closed as interrupted; those
        # of a scan still going are left alone (they record their owner process)
        reaped = reap_stale_runs(self.db, self.settings, without_owner=False)
        from auditor.sources.import_stale import reap_stale_imports

        reap_stale_imports(self.db, actor=ACTOR)  # imports killed mid-way: `interrupted`
        with self.db.write() as session:
            running = list(session.scalars(select(ScanRun).where(ScanRun.status == "running")))
            adopt = [
                r
                for r in running
                if r.dispatch in (DISPATCH_DAEMON, DISPATCH_QUEUE) and r.rule_pack_hash == current
            ]
            stale = [
                r
                for r in running
                if r not in adopt
                and r.started_at < self.started_at
                and not (r.dispatch == DISPATCH_INLINE and "owner" in (r.counts or {}))
            ]
            for run in stale:
                run.status = "abandoned"
            if stale:
                audit_log.append(
                    session,
                    actor=ACTOR,
                    action="scan.abandoned",
                    target_type="scan",
                    target_ids=[str(r.id) for r in stale],
                    details={"count": len(stale)},
                    key=lifecycle.audit_key(self.settings),
                )
            adopted = [(r.id, r.mode) for r in adopt]
        for run_id, mode in adopted:
            scheduler.add_job(
                scheduled_job,
                args=["resume_scan", run_id],
                id=f"resume-scan-{run_id}",
                name="resume_scan",
                replace_existing=True,
            )
            log.warning("scan_resume_scheduled", run_id=run_id, mode=mode)
        modes = {r.mode for r in stale} | {m for _, m in reaped if m in ("full", "incremental")}
        with self.db.session() as session:
            scanned_before = session.scalar(
                select(func.count()).select_from(ScanRun).where(ScanRun.status == "completed")
            )
        first = not scanned_before and not adopted
        if first:
            modes.add("full")  # a store never scanned gets its first scan now, not in hours
        for mode in sorted(modes):
            job = "full_scan" if mode == "full" else "incremental_scan"
            scheduler.add_job(
                scheduled_job,
                args=[job],
                # the first scan of a new set-up sees what its live sources hold
                kwargs={"sync_first": first},
                id=f"recover-{job}",
                name=job,
                replace_existing=True,
            )
            log.warning("scan_recovery_scheduled", mode=mode, abandoned=len(stale))

    def _stop_scheduler(self) -> None:
        if self.scheduler is not None:
            self.scheduler.shutdown(wait=True)  # the running job stops after its batch
            self.scheduler = None
        self.metrics.is_leader.set(0)

    def run(self, stop: threading.Event | None = None) -> int:
        """Lead or stand by until ``stop`` is set (SIGTERM / SIGINT set it). Returns 0."""
        stop = stop or self.ctx.stop
        self.ctx.stop = stop
        poll = self.settings.leader_poll_seconds
        log.info("daemon_started", database=self.db.display_url, pid=os.getpid())
        if uses_queue(self.db, self.settings):
            self.ctx.queue = ShardQueue(self.db)
            self.worker = ShardWorker(self.db, self.settings, stop, judge=_judge(self.ctx))
            self.worker.start()
        try:
            while not stop.is_set():
                try:
                    if self.scheduler is None:
                        if self.leader.try_acquire():
                            self._start_scheduler()
                    elif not self.leader.check():
                        log.warning("leader_lost")
                        self._stop_scheduler()
                except (StoreError, OSError) as exc:
                    log.warning("leader_check_failed", error_type=type(exc).__name__)
                except Exception as exc:  # noqa: BLE001 - e.g. the database went away
                    log.warning("leader_check_failed", error_type=type(exc).__name__)
                stop.wait(poll)
        finally:
            log.info("daemon_stopping")
            if self.worker is not None:
                self.worker.stop()  # the running shard is released after its batch
            self._stop_scheduler()
            if self.ctx.queue is not None:
                self.ctx.queue.close()
                self.ctx.queue = None
            self.leader.release()
            if self._server is not None:
                self._server.shutdown()
            log.info("daemon_stopped")
        return int(ExitCode.OK)


def run_once(
    name: str, db: Database, settings: Settings, stop: threading.Event | None = None
) -> dict[str, Any]:
    """``memaudit daemon --once JOB``: run one job now, as the daemon would.

    On PostgreSQL a scan's shards go to the queue, and this process runs a worker too, so
    it finishes alone and shares the work with any replicas that are running.
    """
    ctx = JobContext(db, settings, Metrics(), stop=stop or threading.Event())
    worker = None
    if name in ("full_scan", "incremental_scan") and uses_queue(db, settings):
        ctx.queue = ShardQueue(db)
        worker = ShardWorker(db, settings, ctx.stop, judge=_judge(ctx))
        worker.start()
    try:
        return run_job(name, ctx)
    finally:
        if worker is not None:
            worker.stop()
        if ctx.queue is not None:
            ctx.queue.close()


def install_signal_handlers(stop: threading.Event) -> None:
    """SIGTERM and SIGINT ask the daemon to stop (it finishes the current batch first)."""

    def handler(signum: int, _frame: object) -> None:
        log.info("signal_received", signal=signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)


def next_runs(settings: Settings, now: datetime | None = None) -> dict[str, str | None]:
    """Job -> next fire time (ISO) from now, for operators checking a schedule."""
    now = now or utcnow()
    out: dict[str, str | None] = {}
    for name, spec in settings.schedule.items():
        trigger = parse_schedule(spec, name)
        nxt = trigger.get_next_fire_time(None, now) if trigger is not None else None
        out[name] = nxt.isoformat() if nxt is not None else None
    return out
