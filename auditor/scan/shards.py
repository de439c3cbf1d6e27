"""Spreading a scan's shards over replicas with procrastinate (PostgreSQL only).

The scan engine (:mod:`auditor.scan.scanner`) splits a run into shards by subject hash and makes
each shard resumable and exactly-once on its own (cursor and counts commit with every
batch, under an owner token). This module only moves shards between processes:

* :class:`ShardQueue` (synchronous, used by the leader's scan job) defers one procrastinate
  job per shard on the queue ``memaudit_scan``, with a queueing lock per shard so a shard is
  never waiting twice, and waits until the run is over.
* :class:`ShardWorker` runs in every replica: a procrastinate worker on a thread of its own
  (its own event loop), one shard at a time. It also watches for stalled jobs: a worker
  that stopped sending heartbeats for ``worker_stall_seconds`` is dead, and its job is put
  back to ``todo``; the next attempt takes the shard over and resumes after its cursor.
* A failing shard is retried (``SHARD_RETRIES`` times, exponential wait); when its retries
  are spent the shard is marked failed and the run ends ``failed`` (incomplete), which its
  summary says.
* SIGTERM: the running shard stops after its current batch, is released (pending again)
  and deferred anew for another replica; the worker then stops.

On SQLite (or with ``task_queue = "inline"``) none of this runs: the daemon scans the
shards in its own process with the same function.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import procrastinate
import structlog
from procrastinate import exceptions as pexc
from sqlalchemy import select, text

from auditor.config import Settings
from auditor.errors import ConfigError
from auditor.judge.batches import submit_deferred
from auditor.rulepack.pack import load_pack
from auditor.scan.scanner import Scanner, worker_name
from auditor.store.db import Database
from auditor.store.models import ScanRun

__all__ = [
    "SHARD_QUEUE",
    "SHARD_TASK",
    "ShardQueue",
    "ShardWorker",
    "queue_depth",
    "uses_queue",
]

log = structlog.get_logger(__name__)

SHARD_TASK = "memaudit.scan_shard"
SHARD_QUEUE = "memaudit_scan"
#: Retries of a failing shard after its first attempt (procrastinate counts from 0).
SHARD_RETRIES = 4


def uses_queue(db: Database, settings: Settings) -> bool:
    """Whether the daemon hands shards to procrastinate (else it scans them in-process).

    Raises:
        ConfigError: ``task_queue = "procrastinate"`` on a store that is not PostgreSQL.
    """
    if settings.task_queue == "inline":
        return False
    if settings.task_queue == "procrastinate" and db.dialect != "postgresql":
        raise ConfigError(
            "MEMAUDIT_TASK_QUEUE=procrastinate needs a PostgreSQL store "
            f"(this one is {db.dialect}); use auto or inline"
        )
    return db.dialect == "postgresql"


def _conninfo(db: Database) -> str:
    # libpq takes the same URL without the SQLAlchemy driver suffix (options included)
    return db.url.set(drivername="postgresql").render_as_string(hide_password=False)


def queue_depth(db: Database) -> int:
    """Shard jobs waiting in the queue (0 on SQLite)."""
    if db.dialect != "postgresql":
        return 0
    with db.session() as session:
        return int(
            session.scalar(
                text(
                    "SELECT count(*) FROM procrastinate_jobs "
                    "WHERE queue_name = :q AND status = 'todo'"
                ),
                {"q": SHARD_QUEUE},
            )
            or 0
        )


class ShardQueue:
    """The leader's side: defer a run's shards, wait for the run to end.

    Args:
        db: the store (PostgreSQL).
    """

    def __init__(self, db: Database) -> None:
        self.db = db
        connector = procrastinate.SyncPsycopgConnector(
            conninfo=_conninfo(db), min_size=1, max_size=2
        )
        self.app = procrastinate.App(connector=connector)
        self.app.open()

    def defer(self, run_id: int, shards: Iterable[int]) -> int:
        """Queue one job per shard (a shard already waiting is not queued twice)."""
        queued = 0
        for shard in shards:
            try:
                self.app.configure_task(
                    SHARD_TASK, queue=SHARD_QUEUE, queueing_lock=f"scan-{run_id}-{shard}"
                ).defer(run_id=run_id, shard=shard)
                queued += 1
            except pexc.AlreadyEnqueued:
                continue
        return queued

    def wait(
        self,
        run_id: int,
        should_stop: Callable[[], bool],
        poll: float = 0.5,
        on_poll: Callable[[], None] | None = None,
    ) -> str:
        """Wait until the run is over (or we are asked to stop); returns its status."""
        while True:
            with self.db.session() as session:
                status = session.scalar(select(ScanRun.status).where(ScanRun.id == run_id))
            if status != "running":
                return str(status)
            if should_stop():
                return "running"
            if on_poll is not None:
                on_poll()
            time.sleep(poll)

    def close(self) -> None:
        """Close the queue's connections."""
        self.app.close()


class ShardWorker:
    """One replica's shard worker: procrastinate on a thread with its own event loop.

    Args:
        db: the store (PostgreSQL).
        settings: heartbeat and stall times, rules folder.
        stop: the daemon's stop flag (a running shard is released when it is set).
        judge: the LLM judge shared with the daemon (or None).
    """

    def __init__(
        self, db: Database, settings: Settings, stop: threading.Event, judge: Any = None
    ) -> None:
        self.db = db
        self.settings = settings
        self.stop_flag = stop
        self.judge = judge
        self.ready = threading.Event()
        self.shards_done = 0
        self._scanner: Scanner | None = None
        self._requeue: ShardQueue | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def alive(self) -> bool:
        """Whether the worker thread runs."""
        return self._thread is not None and self._thread.is_alive()

    def start(self, timeout: float = 30.0) -> bool:
        """Start the worker thread; True once it listens for shards."""
        self._thread = threading.Thread(target=self._main, name="shard-worker", daemon=True)
        self._thread.start()
        return self.ready.wait(timeout)

    def stop(self, timeout: float = 120.0) -> None:
        """Stop taking shards; the running one is released after its batch."""
        self._stopping.set()
        loop, task = self._loop, self._task
        if loop is not None and task is not None:
            with contextlib.suppress(RuntimeError):  # the loop is already closed
                loop.call_soon_threadsafe(task.cancel)
        if self._thread is not None:
            self._thread.join(timeout)
        if self._requeue is not None:
            self._requeue.close()
            self._requeue = None

    # -- the thread -----------------------------------------------------------------------

    def _main(self) -> None:
        backoff = 1.0
        while not self._stopping.is_set():
            try:
                asyncio.run(self._serve())
                backoff = 1.0
            except asyncio.CancelledError:
                break
            except Exception as exc:  # noqa: BLE001 - e.g. the database went away: retry
                log.warning("shard_worker_failed", error_type=type(exc).__name__)
            self.ready.clear()
            if self._stopping.wait(backoff):
                break
            backoff = min(backoff * 2, 30.0)

    async def _serve(self) -> None:
        s = self.settings
        app = procrastinate.App(
            connector=procrastinate.PsycopgConnector(
                conninfo=_conninfo(self.db), min_size=1, max_size=3
            )
        )
        app.task(
            name=SHARD_TASK,
            queue=SHARD_QUEUE,
            pass_context=True,
            retry=procrastinate.RetryStrategy(max_attempts=SHARD_RETRIES, exponential_wait=2),
        )(self._run_shard)
        async with app.open_async():
            worker = asyncio.create_task(
                app.run_worker_async(
                    queues=[SHARD_QUEUE],
                    name=worker_name(),
                    concurrency=1,
                    install_signal_handlers=False,
                    update_heartbeat_interval=s.worker_heartbeat_seconds,
                    stalled_worker_timeout=s.worker_stall_seconds,
                    shutdown_graceful_timeout=300.0,
                    delete_jobs="successful",
                )
            )
            self._loop = asyncio.get_running_loop()
            self._task = asyncio.current_task()
            watch = asyncio.create_task(self._watch_stalled(app))
            self.ready.set()
            log.info("shard_worker_started", queue=SHARD_QUEUE)
            try:
                await worker
            except asyncio.CancelledError:
                worker.cancel()  # graceful: procrastinate waits for the running shard
                with contextlib.suppress(asyncio.CancelledError):
                    await worker
                self._stopping.set()
            finally:
                watch.cancel()
                self._loop = self._task = None
                log.info("shard_worker_stopped")

    async def _watch_stalled(self, app: procrastinate.App) -> None:
        """Put the jobs of dead workers back in the queue (every replica watches)."""
        s = self.settings
        while True:
            await asyncio.sleep(s.worker_heartbeat_seconds)
            try:
                stalled = await app.job_manager.get_stalled_jobs(
                    queue=SHARD_QUEUE, seconds_since_heartbeat=s.worker_stall_seconds
                )
                for job in stalled:
                    try:
                        await app.job_manager.retry_job(job)
                        log.warning("shard_job_recovered", job_id=job.id, attempts=job.attempts)
                    except Exception:  # noqa: BLE001 - another replica recovered it first
                        continue
            except Exception as exc:  # noqa: BLE001 - the database away: next round
                log.warning("stall_check_failed", error_type=type(exc).__name__)

    def _run_shard(self, context: procrastinate.JobContext, run_id: int, shard: int) -> str:
        """The procrastinate task (runs on a worker thread of procrastinate's)."""
        job = context.job
        scanner = self._scanner_for_now()
        owner = f"job{job.id}.{job.attempts}@{worker_name()}"
        try:
            outcome = scanner.scan_shard(run_id, shard, owner=owner, should_stop=self._should_stop)
        except Exception as exc:
            log.error(
                "shard_failed",
                run_id=run_id,
                shard=shard,
                attempt=job.attempts + 1,
                error_type=type(exc).__name__,
            )
            if job.attempts >= SHARD_RETRIES:
                scanner.fail_shard(run_id, shard, type(exc).__name__)
            raise
        submit_deferred(self.db, self.judge)  # batch mode: this shard's deferred pairs
        if outcome.status == "released":
            if self._requeue is None:
                self._requeue = ShardQueue(self.db)
            self._requeue.defer(run_id, [shard])  # another replica resumes it
        elif outcome.status == "done":
            self.shards_done += 1
        return outcome.status

    def _should_stop(self) -> bool:
        return self.stop_flag.is_set() or self._stopping.is_set()

    def _scanner_for_now(self) -> Scanner:
        pack = load_pack(self.settings.rules_dir)  # re-read: rules change without restarts
        if self._scanner is None or self._scanner.pack.sha256 != pack.sha256:
            self._scanner = Scanner(self.db, pack, judge=self.judge)
        return self._scanner
