"""Scanning a run's shards in worker processes: every core of one machine.

:meth:`auditor.scan.scanner.Scanner.execute` hands a run's open shards to this module when more
than one worker is wanted (``scan_workers``; 0 = one per CPU core) and the run has more
than one shard. The guarantees are the scan engine's own, not this module's: a worker runs
:meth:`~auditor.scan.scanner.Scanner.scan_shard`, whose batches commit their findings, actions and
the shard's cursor in one transaction under the shard's owner token, so a shard taken over
after a crash resumes after its cursor and every memory is scanned exactly once per run.

The contract of the pool:

* How a worker starts (:func:`fork_is_safe`). A worker forked from the parent inherits its
  built detectors and starts at once; a spawned one imports memaudit and builds them (about
  three seconds here). The parent forks only when that is safe: the start method exists,
  no other Python thread runs (a lock held by one would stay held in the child: a daemon's
  scheduler threads and the parent's own scanning thread rule it out; the command's
  progress bar is drawn without a thread for that reason), the
  secret engine's Go runtime is not loaded (it starts threads and does not survive a fork;
  it loads on the first text the engine scans), and no database connection is checked
  out: the parent closes its pooled connections first, so a child never holds, uses or
  closes a connection of its parent's (SQLite and libpq both forbid that). Otherwise, and
  for every worker after the parent has started scanning, ``spawn``: the worker loads the
  rule pack itself (the parent's pack folder; a pack changed since is noticed by the shard
  claim, as for replicas). Either way each worker opens its own database connection.
* The parent hands out one shard at a time over a private pipe per worker (no shared queue:
  a worker killed while holding a lock cannot wedge the others) and forwards progress.
* A worker that dies (``kill -9``, out of memory) is noticed through its process sentinel;
  the shard it held is handed to a fresh worker, which takes it over and resumes after its
  cursor (the dead worker's half batch was never committed). A shard whose attempts keep
  failing (``SHARD_RETRIES`` more than the first) is marked failed and the run ends
  ``failed``, as on the queue.
* Stopping (``should_stop`` says yes, or the parent gets ``KeyboardInterrupt``): every
  worker is told to stop; a busy one finishes its batch, releases its shard (pending
  again, cursor kept) and exits. Workers ignore SIGINT (a terminal's Ctrl-C reaches the
  whole process group: the parent decides), stop after their batch on SIGTERM, and stop on
  their own when the parent is gone.
* SQLite: writers serialise on the database lock (``BEGIN IMMEDIATE`` with
  ``sqlite_busy_timeout_ms``). Detection, the CPU work, runs outside any transaction; a
  batch's write transaction only stores what was already computed, so two workers mostly
  overlap. An in-memory SQLite store cannot be shared: it is always scanned in-process.
* With an LLM judge configured the scan stays in one process: the judge's per-scan budget
  and verdict cache live in one object (a known limit, see docs/scanning.md).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import structlog

from auditor.config import Settings
from auditor.errors import MemauditError
from auditor.processes import quick_exit

if TYPE_CHECKING:
    from auditor.scan.scanner import Scanner
    from auditor.store.db import Database

__all__ = [
    "AUTO_WORKERS_FORK_MIN_CHARS",
    "AUTO_WORKERS_MIN_CHARS",
    "AUTO_WORKERS_MIN_MEMORIES",
    "SHARD_RETRIES",
    "ScanWorkersError",
    "can_fork",
    "can_use_workers",
    "fork_is_safe",
    "largest_first",
    "one_per_core",
    "run_in_workers",
    "stop_on_signals",
    "worker_count",
    "worth_workers",
]

log = structlog.get_logger(__name__)

#: Attempts at a shard after its first, when workers die or fail on it (as on the queue).
SHARD_RETRIES = 4
#: How long a stopping parent waits for busy workers to finish their batch.
STOP_GRACE_SECONDS = 300.0
_POLL_SECONDS = 0.5


#: With ``scan_workers`` at 0 (one per core), worker processes are started for a run only
#: when it is big enough to repay their start-up: a worker needs about three and a half
#: seconds (it imports memaudit and builds its detectors), and two processes win once the
#: run takes one process about twice that. Cost follows the text more than the count: this
#: many memories at least, and about this many characters of text (one process scans some
#: 60,000 characters a second of realistic texts, 70,000 of short synthetic ones, here).
#: An explicit worker count (``--workers``, ``scan_workers`` above 0) is always honoured.
AUTO_WORKERS_MIN_MEMORIES = 1000
AUTO_WORKERS_MIN_CHARS = 450_000
#: When the worker can be forked with the detectors built (:func:`can_fork`), it starts at
#: once, and two processes win from about this much text (the break-even measured here
#: with ``benchmarks/scan_workers_bench.py``: even at 1,000 short synthetic memories, 50,000
#: characters; x1.2-1.3 at 1,000 realistic ones, 230,000).
AUTO_WORKERS_FORK_MIN_CHARS = 120_000
#: Facts read to estimate a run's text (a spread: in content-hash order).
_SAMPLE = 256


def worth_workers(scanner: Scanner, run_id: int) -> bool:
    """Whether a run is big enough for "one per core" to start worker processes."""
    planned = scanner.planned(run_id)
    if planned < AUTO_WORKERS_MIN_MEMORIES:
        return False
    sample = scanner.sample_facts(run_id, _SAMPLE)
    mean = sum(map(len, sample)) / len(sample) if sample else 0.0
    least = AUTO_WORKERS_FORK_MIN_CHARS if can_fork(scanner.db) else AUTO_WORKERS_MIN_CHARS
    return planned * mean >= least


def worker_count(settings: Settings) -> int:
    """Worker processes wanted for a run (``scan_workers``; 0 = one per CPU core)."""
    return settings.scan_workers or one_per_core()


def one_per_core() -> int:
    """What "one worker per core" is on this machine."""
    return max(1, os.cpu_count() or 1)


def can_use_workers(scanner: Scanner) -> bool:
    """Whether this scanner's runs may go to worker processes (see the module docstring)."""
    db = scanner.db
    if db.dialect == "sqlite" and (db.url.database or ":memory:") == ":memory:":
        return False
    return scanner.judge is None


class ScanWorkersError(MemauditError):
    """The worker processes could not scan the run (they died before taking a shard)."""


def stop_on_signals() -> tuple[threading.Event, Callable[[], None]]:
    """SIGINT and SIGTERM set the returned flag (a scan stops after its batch); and the
    function that puts the previous handlers back. Outside the main thread: only a flag."""
    stop = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        return stop, lambda: None

    def handler(signum: int, _frame: object) -> None:
        if stop.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt  # a second Ctrl-C: do not wait for the batch
        log.warning("scan_stopping", signal=signal.Signals(signum).name)
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}

    def restore() -> None:
        for sig, old in previous.items():
            signal.signal(sig, old)

    return stop, restore


# -- the worker process ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Start:
    """What a worker is started with (pickled for a spawned one, but ``inherited`` and
    ``not_ours``, which only a forked worker gets).

    ``scanner_class`` is the parent scanner's class, handed over by reference (pickled as
    its module and name, imported again in the child): this module depends on no scanner.
    ``inherited``: a forked worker's copy of the parent's scanner (its detectors built),
    used on a connection of the worker's own; ``not_ours``: the parent's ends of the pipes
    a forked worker inherited, closed first (so that each pipe ends when the parent does).
    """

    settings: Settings
    url: str
    rules_root: str
    run_id: int
    parent_pid: int
    scanner_class: type[Scanner]
    inherited: Scanner | None = None
    not_ours: tuple[Connection, ...] = ()


def _worker_main(conn: Connection, start: _Start) -> NoReturn:
    """A worker: scan the shards the parent sends until it sends None (or says stop)."""
    for other in start.not_ours:
        other.close()
    settings, run_id, parent_pid = start.settings, start.run_id, start.parent_pid
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides on Ctrl-C
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda _s, _f: stop.set())
    # imported here: the parent's module import stays light, the child's is done once
    from auditor.lifecycle.audit_key import audit_key
    from auditor.logging import configure_logging
    from auditor.rulepack.pack import load_pack
    from auditor.store.db import Database

    configure_logging(settings.log_level, settings.log_format, digest_key=audit_key(settings))
    db = Database(settings, start.url)
    if start.inherited is not None:
        scanner = start.inherited.using(db)
    else:
        scanner = start.scanner_class(db, load_pack(Path(start.rules_root)))

    log.info("scan_worker_started", started="forked" if start.inherited else "spawned")

    def should_stop() -> bool:
        if not stop.is_set():
            if os.getppid() != parent_pid:
                stop.set()  # orphaned: release the shard, a later scan redoes the rest
            else:
                with contextlib.suppress(EOFError, OSError):
                    while conn.poll():
                        if conn.recv() in (None, "stop"):
                            stop.set()
        return stop.is_set()

    try:
        conn.send(("ready",))
        while not stop.is_set():
            msg = conn.recv()
            if msg is None or msg == "stop":
                break
            shard = int(msg)
            try:
                outcome = scanner.scan_shard(
                    run_id,
                    shard,
                    should_stop=should_stop,
                    progress=lambda n: conn.send(("progress", n)),
                )
            except Exception as exc:  # noqa: BLE001 - reported to the parent, which retries
                log.error("scan_worker_shard_failed", shard=shard, error_type=type(exc).__name__)
                conn.send(("error", shard, type(exc).__name__))
                continue
            conn.send(("end", shard, outcome.status))
    except (EOFError, BrokenPipeError):
        pass  # the parent is gone
    finally:
        db.dispose()
    # its shards are committed and its connections closed: end without the teardown of its
    # detectors (a second or more, which the parent would wait for). A forked worker runs
    # no exit handler: those it has are its parent's (a temporary folder of the parent's
    # would be removed from under it)
    quick_exit(0, run_atexit=start.inherited is None)


# -- the parent ------------------------------------------------------------------------------


@dataclass
class _Worker:
    proc: BaseProcess
    conn: Connection
    shard: int | None = None
    ready: bool = False
    told_to_stop: bool = False


@dataclass
class _Pool:
    """The parent's bookkeeping. The parent scans shards too, on a thread of its own (its
    detectors are built already), so ``size`` workers means ``size - 1`` processes."""

    scanner: Scanner
    run_id: int
    rules_root: str
    size: int
    progress: Callable[[int], None] | None
    todo: deque[int]
    attempts: dict[int, int] = field(default_factory=dict)
    workers: list[_Worker] = field(default_factory=list)
    stopping: bool = False
    released: bool = False
    spawned: int = 0
    fork: bool = False  # workers may be forked (see fork_is_safe)
    lock: threading.RLock = field(default_factory=threading.RLock)
    local: threading.Thread | None = None
    local_done: int = 0  # memories the local thread scanned, not yet reported
    local_errors: list[tuple[int, str]] = field(default_factory=list)

    # -- capacity ---------------------------------------------------------------------

    def fill(self) -> None:
        """While shards wait: keep ``size - 1`` processes and the local thread going (the
        processes first: before the thread starts, the parent may still fork)."""
        with self.lock:
            if self.stopping or not self.todo:
                return
            want = min(self.size - 1, len(self.todo))
            while len(self.workers) < want and self.attempts.get(-1, 0) <= SHARD_RETRIES:
                self.spawn()
            if self.local is None or not self.local.is_alive():
                self.local = threading.Thread(
                    target=self._scan_here, name="scan-local", daemon=True
                )
                self.local.start()

    def spawn(self) -> None:
        db = self.scanner.db
        forked = self.fork and fork_is_safe(db)
        ctx = mp.get_context("fork") if forked else mp.get_context("spawn")
        parent, child = ctx.Pipe(duplex=True)
        start = _Start(
            db.settings,
            db.url.render_as_string(hide_password=False),
            self.rules_root,
            self.run_id,
            os.getpid(),
            type(self.scanner),
            self.scanner if forked else None,
            (parent, *(w.conn for w in self.workers)) if forked else (),
        )
        proc = ctx.Process(
            target=_worker_main,
            args=(child, start),
            name=f"memaudit-scan-{self.spawned}",
            daemon=True,
        )
        proc.start()
        child.close()
        self.spawned += 1
        self.workers.append(_Worker(proc, parent))

    def busy(self) -> bool:
        return bool(self.workers) or (self.local is not None and self.local.is_alive())

    # -- the parent's own shards --------------------------------------------------------

    def _scan_here(self) -> None:
        while True:
            with self.lock:
                if self.stopping or not self.todo:
                    return
                shard = self.todo.popleft()
            try:
                outcome = self.scanner.scan_shard(
                    self.run_id, shard, should_stop=lambda: self.stopping, progress=self._count
                )
            except Exception as exc:  # noqa: BLE001 - the main thread retries the shard
                log.error("scan_shard_failed", shard=shard, error_type=type(exc).__name__)
                with self.lock:
                    self.local_errors.append((shard, type(exc).__name__))
                continue
            if outcome.status == "released":
                self.released = True

    def _count(self, n: int) -> None:
        with self.lock:
            self.local_done += n

    def report_local(self) -> None:
        """In the main thread: forward the local thread's progress and retry its errors."""
        with self.lock:
            done, self.local_done = self.local_done, 0
            errors, self.local_errors = self.local_errors, []
        if done and self.progress is not None:
            self.progress(done)
        for shard, why in errors:
            self.retry(shard, why)

    # -- worker processes ----------------------------------------------------------------

    def assign(self, w: _Worker) -> None:
        """Give an idle worker the next shard, or tell it there is none."""
        with self.lock:
            shard = None if self.stopping or not self.todo else self.todo.popleft()
        if shard is None:
            with contextlib.suppress(OSError):
                w.conn.send(None)
            w.told_to_stop = True
            return
        w.shard = shard
        try:
            w.conn.send(shard)
        except OSError:
            pass  # it died: its sentinel says so, and the shard is retried then

    def retry(self, shard: int, why: str) -> None:
        """A shard's attempt ended badly: queue it again, or give it up."""
        self.attempts[shard] = self.attempts.get(shard, 0) + 1
        if self.stopping:
            return  # the shard stays as it is (pending or running); the run is interrupted
        if self.attempts[shard] <= SHARD_RETRIES:
            with self.lock:
                self.todo.append(shard)
            log.warning("scan_shard_retry", run_id=self.run_id, shard=shard, why=why)
        else:
            self.scanner.fail_shard(self.run_id, shard, why)

    def handle(self, w: _Worker, msg: Any) -> None:
        kind = msg[0]
        if kind == "ready":
            w.ready = True
            self.assign(w)
        elif kind == "progress":
            if self.progress is not None:
                self.progress(int(msg[1]))
        elif kind == "end":
            w.shard = None
            if msg[2] == "released":
                self.released = True
            self.assign(w)
        elif kind == "error":
            w.shard = None
            self.retry(int(msg[1]), str(msg[2]))
            self.assign(w)

    def died(self, w: _Worker) -> None:
        """A worker's process ended (or its pipe broke)."""
        self.workers.remove(w)
        with contextlib.suppress(OSError):
            w.conn.close()
        w.proc.join(5)
        code = w.proc.exitcode
        if w.shard is not None:
            log.warning("scan_worker_died", run_id=self.run_id, shard=w.shard, exit_code=code)
            self.retry(w.shard, f"worker exited with code {code}")
        elif not w.told_to_stop:
            log.warning("scan_worker_died", run_id=self.run_id, shard=None, exit_code=code)
            if not w.ready:  # died starting up: do not respawn forever
                self.attempts[-1] = self.attempts.get(-1, 0) + 1

    def stop_all(self) -> None:
        with self.lock:
            if self.stopping:
                return
            self.stopping = True
            self.todo.clear()
        for w in self.workers:
            with contextlib.suppress(OSError):
                w.conn.send("stop")
            w.told_to_stop = True

    def pump(self, timeout: float) -> None:
        """Wait for messages or deaths, up to ``timeout`` seconds, and handle them."""
        conns = {w.conn: w for w in self.workers}
        sentinels = {w.proc.sentinel: w for w in self.workers}
        if not conns:  # only the local thread is left: wake when it ends, not a poll later
            local = self.local
            if local is not None and local.is_alive():
                local.join(timeout)
            else:
                time.sleep(timeout)
        ready = wait([*conns, *sentinels], timeout) if conns else []
        dead: list[_Worker] = []
        for obj in ready:
            if obj in conns:
                w = conns[obj]
                try:
                    while w.conn.poll():
                        self.handle(w, w.conn.recv())
                except (EOFError, OSError):
                    if w not in dead:
                        dead.append(w)
            else:
                w = sentinels[obj]  # type: ignore[index]
                with contextlib.suppress(EOFError, OSError):
                    while w.conn.poll():  # what it said before it ended
                        self.handle(w, w.conn.recv())
                if w not in dead:
                    dead.append(w)
        for w in dead:
            if w in self.workers:
                self.died(w)
        self.report_local()
        self.fill()


def largest_first(scanner: Scanner, run_id: int, shards: Sequence[int]) -> list[int]:
    """The shards in the order the pool hands them out: most memories first, then by number.

    Each process takes the next shard when it is done with one, so the run ends when the
    last shard handed out ends; handing out the big ones first leaves the small ones for
    the end, and the processes finish close together instead of one waiting for another's
    big last shard (the longest-processing-time-first rule). Only the order changes: every
    shard is still scanned once, by whoever takes it.
    """
    sizes = scanner.shard_sizes(run_id)
    return sorted(shards, key=lambda shard: (-sizes.get(shard, 0), shard))


def run_in_workers(
    scanner: Scanner,
    run_id: int,
    shards: Sequence[int],
    workers: int,
    *,
    should_stop: Callable[[], bool] | None = None,
    progress: Callable[[int], None] | None = None,
) -> bool:
    """Scan ``shards`` of a run here and in ``workers - 1`` processes; False when stopped.

    On a stop, busy workers release their shards after their current batch (pending
    again, cursors kept) and the run stays ``running`` for the caller to end or resume.

    Raises:
        KeyboardInterrupt: re-raised after the workers stopped (released their shards).
        ScanWorkersError: the shards could not all be scanned (workers kept dying).
    """
    pool = _Pool(
        scanner=scanner,
        run_id=run_id,
        rules_root=str(scanner.pack.root),
        size=workers,
        progress=progress,
        todo=deque(largest_first(scanner, run_id, shards)),
    )
    if workers > 1 and fork_is_safe(scanner.db):
        # built here once, inherited by the forked workers (each would build its own)
        scanner.engine.load()
        pool.fork = True
    log.info("scan_workers_started", run_id=run_id, workers=workers, shards=len(shards))
    try:
        pool.fill()
        while pool.busy():
            if should_stop is not None and should_stop():
                pool.stop_all()
            pool.pump(_POLL_SECONDS)
        pool.report_local()
    except BaseException:
        pool.stop_all()
        _drain(pool)
        raise
    if pool.stopping or pool.released:
        return False
    if pool.todo:
        raise ScanWorkersError(
            f"scan run {run_id}: {len(pool.todo)} shards not scanned: worker processes kept "
            "dying on start-up (memaudit --log-level debug scan shows why)"
        )
    return True


#: The shared library of the secret engine (a Go runtime once loaded: never fork then).
_NO_FORK_LIBRARIES = ("libbetterleaks",)


def fork_is_safe(db: Database) -> bool:
    """Whether a worker may be forked from this process now (see the module docstring).

    Closes the store's pooled connections when it says yes (the parent opens new ones when
    it next needs one), so the child inherits none.
    """
    if not can_fork(db):
        return False
    db.dispose()
    return True


def can_fork(db: Database) -> bool:
    """:func:`fork_is_safe`'s answer, without closing anything."""
    if "fork" not in mp.get_all_start_methods() or threading.active_count() != 1:
        return False
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            if any(name in line for line in maps for name in _NO_FORK_LIBRARIES):
                return False
    except OSError:
        return False  # cannot tell what is loaded: spawn
    pool = db.engine.pool
    checked_out = getattr(pool, "checkedout", None)
    return checked_out is not None and checked_out() == 0  # one in use cannot be closed


def _drain(pool: _Pool) -> None:
    """After a stop: let busy workers finish their batch and exit, then end the stragglers."""
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    while pool.workers and time.monotonic() < deadline:
        try:
            pool.pump(_POLL_SECONDS)
        except KeyboardInterrupt:
            break  # a second Ctrl-C: do not wait for the batch
    if pool.local is not None:
        pool.local.join(STOP_GRACE_SECONDS)  # the parent's own batch commits whole
    for w in list(pool.workers):
        w.proc.terminate()  # SIGTERM: a worker still in a batch stops after it, or dies
        w.proc.join(10)
        if w.proc.is_alive():
            w.proc.kill()
            w.proc.join(5)
        pool.workers.remove(w)
