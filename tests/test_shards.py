"""Shards: split by subject hash, resumable from their cursor, exactly once per run.

The replica tests start real ``memaudit daemon`` processes against one PostgreSQL and
count, from a trace every process writes, how often each memory was scanned in a run.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from auditor.config import DEFAULT_SCHEDULE, load_settings
from auditor.errors import ConfigError
from auditor.rulepack.pack import load_pack
from auditor.scan.scanner import SUBJECT_BATCH, Scanner
from auditor.scan.selection import shard_of
from auditor.scan.shards import uses_queue
from auditor.sources.files import open_source
from auditor.sources.importer import Importer
from auditor.store.db import Database
from auditor.store.models import Finding, Memory, ScanRun, ScanShard, SourceWatermark
from auditor.tools.synthetic import write_synthetic
from tests.test_scan import write_pack

ROOT = Path(__file__).resolve().parents[1]


def _store(db: Database, tmp_path: Path, n: int) -> int:
    corpus = write_synthetic(tmp_path / "store.jsonl", n)
    Importer(db).run(open_source("jsonl", corpus, db.settings))
    with db.session() as s:
        return len(list(s.scalars(select(Memory.memory_id))))


def test_shard_of_is_stable_and_spreads_subjects() -> None:
    subjects = [f"user:{i}" for i in range(4000)]
    assert [shard_of(s, 8) for s in subjects] == [shard_of(s, 8) for s in subjects]
    sizes = Counter(shard_of(s, 8) for s in subjects)
    assert set(sizes) == set(range(8))
    assert max(sizes.values()) < 1.25 * (4000 / 8)  # no shard holds far more than its part


def test_a_run_is_split_and_every_memory_scanned_once(db: Database, tmp_path: Path) -> None:
    total = _store(db, tmp_path, 6000)  # 500 subjects
    scanner = Scanner(db, load_pack(write_pack(tmp_path / "rules")))
    summary = scanner.run(full=True, shards=4)
    assert summary.complete and summary.shards_total == 4  # 500 subjects: worth 4 shards
    assert summary.shards_done == 4 and summary.memories_scanned == total
    with db.session() as s:
        shards = list(s.scalars(select(ScanShard).where(ScanShard.run_id == summary.run_id)))
    assert sum(r.memories_scanned for r in shards) == total
    assert all(r.status == "done" and r.attempts == 1 for r in shards)


def test_a_released_shard_resumes_after_its_cursor(db: Database, tmp_path: Path) -> None:
    total = _store(db, tmp_path, 12 * SUBJECT_BATCH * 3)  # three batches in one shard
    pack = load_pack(write_pack(tmp_path / "rules"))
    reference = Scanner(db, pack).run(full=True, shards=1)
    with db.session() as s:
        expected = set(s.scalars(select(Finding.fingerprint)))
    assert len(expected) == reference.findings_new > 0

    scanner = Scanner(db, pack)
    run_id = scanner.start(full=True, shards=1)
    asked = iter([False, True])  # first batch scans, then a stop arrives
    outcome = scanner.scan_shard(run_id, 0, should_stop=lambda: next(asked, True))
    assert outcome.status == "released" and outcome.memories_scanned == 12 * SUBJECT_BATCH
    with db.session() as s:
        row = s.get(ScanShard, (run_id, 0))
        assert row is not None and row.status == "pending" and row.cursor is not None
        assert s.get(ScanRun, run_id).status == "running"  # type: ignore[union-attr]
    again = scanner.scan_shard(run_id, 0)
    assert again.status == "done" and again.memories_scanned == total - 12 * SUBJECT_BATCH
    summary = scanner.summary(run_id)
    assert summary.complete and summary.memories_scanned == total  # nothing twice
    assert summary.findings_new == 0  # resumed batches found nothing they had not found
    with db.session() as s:
        assert set(s.scalars(select(Finding.fingerprint))) == expected
        assert s.get(ScanShard, (run_id, 0)).attempts == 2  # type: ignore[union-attr]


def test_a_shard_taken_over_commits_nothing_more(db: Database, tmp_path: Path) -> None:
    _store(db, tmp_path, 12 * SUBJECT_BATCH * 2)
    scanner = Scanner(db, load_pack(write_pack(tmp_path / "rules")))
    run_id = scanner.start(full=True, shards=1)
    taken = False

    def takeover() -> bool:
        nonlocal taken
        if not taken:  # between batches another attempt claims the shard
            taken = True
            scanner._claim(run_id, 0, "another-attempt")
        return False

    outcome = scanner.scan_shard(run_id, 0, owner="first", should_stop=takeover)
    assert outcome.status == "lost" and outcome.memories_scanned == 0
    with db.session() as s:
        row = s.get(ScanShard, (run_id, 0))
        assert row is not None and row.owner == "another-attempt" and row.memories_scanned == 0
        assert s.scalars(select(Finding.finding_id)).first() is None  # its batch rolled back


def test_a_failed_shard_fails_the_run_and_keeps_the_watermark(db: Database, tmp_path: Path) -> None:
    _store(db, tmp_path, 12 * SUBJECT_BATCH * 2)
    scanner = Scanner(db, load_pack(write_pack(tmp_path / "rules")))
    run_id = scanner.start(full=True, shards=2)
    assert scanner.scan_shard(run_id, 0).status == "done"
    scanner.fail_shard(run_id, 1, "StoreError")
    summary = scanner.summary(run_id)
    assert summary.status == "failed" and not summary.complete
    assert summary.shards_done == 1 and summary.shards_failed == [1]
    assert summary.as_dict()["shards"] == {"total": 2, "done": 1, "failed": [1]}
    with db.session() as s:
        assert s.get(SourceWatermark, "scan") is None  # the next scan is full again


def test_procrastinate_needs_postgresql(tmp_path: Path) -> None:
    settings = load_settings(
        database_url=f"sqlite:///{tmp_path / 'x.db'}", task_queue="procrastinate"
    )
    with pytest.raises(ConfigError, match="needs a PostgreSQL store"):
        uses_queue(Database(settings), settings)
    auto = load_settings(database_url=f"sqlite:///{tmp_path / 'x.db'}")
    assert not uses_queue(Database(auto), auto)


def test_the_procrastinate_schema_we_install_is_the_installed_release() -> None:
    """Migration 0003 installs procrastinate's schema as of its migration 03.04.00; a newer
    procrastinate that brings a migration needs a memaudit revision that applies it."""
    folder = resources.files("procrastinate.sql") / "migrations"
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".sql"))
    assert names[-1] == "03.04.00_50_post_add_retry_failed_job_procedure.sql", (
        "procrastinate brought a new schema migration: add a memaudit revision applying it"
    )


# -- replicas on one PostgreSQL -------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _health(port: int) -> dict[str, object] | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as resp:
            return json.loads(resp.read())  # type: ignore[no-any-return]
    except OSError:
        return None


def _replica_env(url: str, trace: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "MEMAUDIT_DATABASE_URL": url,
        "MEMAUDIT_TEST_TRACE_DIR": str(trace),
        "MEMAUDIT_LEADER_POLL_SECONDS": "0.5",
        "MEMAUDIT_SCAN_SHARDS": "10",
        **{f"MEMAUDIT_SCHEDULE__{job.upper()}": "off" for job in DEFAULT_SCHEDULE},
        **extra,
    }


SCRIPT = str(ROOT / "tests" / "trace_replica.py")


def _start_replicas(env: dict[str, str], n: int) -> tuple[list[subprocess.Popen[bytes]], list[int]]:
    ports = [_free_port() for _ in range(n)]
    procs = [
        subprocess.Popen(
            [sys.executable, SCRIPT, "daemon", "--health-port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for port in ports
    ]
    deadline = time.monotonic() + 120
    states: list[dict[str, object] | None] = []
    while time.monotonic() < deadline:
        states = [_health(p) for p in ports]
        if all(h is not None and h.get("shard_worker") == "ready" for h in states):
            return procs, ports
        time.sleep(0.3)
    for proc in procs:
        proc.kill()
    pytest.fail(f"replicas not ready: {states}")


def _prepared_store(url: str, tmp_path: Path) -> tuple[Database, int]:
    db = Database(load_settings(database_url=url))
    db.upgrade()
    total = _store(db, tmp_path, 24_000)  # 2000 subjects: 10 shards
    with db.write() as s:  # "scanned before": the leader starts no scan of its own
        s.add(ScanRun(mode="full", status="completed"))
    return db, total


@pytest.mark.pg
@pytest.mark.slow
@pytest.mark.parametrize("replicas", [2, 3])
def test_replicas_scan_every_memory_exactly_once(
    replicas: int, pg_schema_url: str, tmp_path: Path
) -> None:
    db, total = _prepared_store(pg_schema_url, tmp_path)
    trace = tmp_path / "trace"
    trace.mkdir()
    env = _replica_env(pg_schema_url, trace)
    procs, _ports = _start_replicas(env, replicas)
    try:
        # a full scan as cron would start it; its shards go to every replica's worker
        once = subprocess.run(
            [sys.executable, SCRIPT, "daemon", "--once", "full_scan"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert once.returncode == 0, once.stderr[-2000:]
        result = json.loads(once.stdout)
        assert result["status"] == "completed" and result["complete"] is True
        assert result["shards"]["done"] == result["shards"]["total"] == 10
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        codes = [proc.wait(timeout=120) for proc in procs]
    assert codes == [0] * replicas  # SIGTERM: clean stop

    scans: Counter[str] = Counter()
    by_process: Counter[str] = Counter()
    for path in trace.iterdir():
        ids = path.read_text(encoding="utf-8").split()
        scans.update(ids)
        by_process[path.stem] = len(ids)
    with db.session() as s:
        every = set(s.scalars(select(Memory.memory_id)))
        run = s.scalars(select(ScanRun).order_by(ScanRun.id.desc())).first()
        assert run is not None
        shards = list(s.scalars(select(ScanShard).where(ScanShard.run_id == run.id)))
    assert set(scans) == every and len(every) == total  # every memory scanned ...
    assert set(scans.values()) == {1}  # ... exactly once in the run
    assert sum(r.memories_scanned for r in shards) == total
    workers = {r.worker for r in shards}
    assert len(workers) >= 2, f"one process took every shard: {by_process}"
    db.dispose()


@pytest.mark.pg
@pytest.mark.slow
def test_a_replica_killed_mid_shard_and_the_run_still_completes(
    pg_schema_url: str, tmp_path: Path
) -> None:
    """kill -9 of a replica while it scans a shard: another replica takes the shard over
    (stalled-job recovery), resumes after its cursor, and the run completes once."""
    from auditor.lifecycle import audit_log
    from auditor.store.models import AuditEvent

    db, total = _prepared_store(pg_schema_url, tmp_path)
    trace = tmp_path / "trace"
    trace.mkdir()
    env = _replica_env(
        pg_schema_url,
        trace,
        MEMAUDIT_WORKER_HEARTBEAT_SECONDS="0.5",
        MEMAUDIT_WORKER_STALL_SECONDS="2",
    )
    procs, _ports = _start_replicas(env, 2)
    coordinator = subprocess.Popen(
        [sys.executable, SCRIPT, "daemon", "--once", "full_scan"],
        cwd=ROOT,
        env={**env, "MEMAUDIT_TEST_TRACE_DIR": str(tmp_path)},  # not counted: it is not killed
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    killed = None
    try:
        deadline = time.monotonic() + 120
        while killed is None and time.monotonic() < deadline:
            for proc in procs:
                path = trace / f"{proc.pid}.txt"
                if path.exists() and path.stat().st_size > 0:
                    proc.kill()  # kill -9 in the middle of a shard
                    proc.wait(timeout=10)
                    killed = proc
                    break
            time.sleep(0.05)
        assert killed is not None, "no replica started a shard"
        out, _ = coordinator.communicate(timeout=600)
        assert coordinator.returncode == 0
        result = json.loads(out)
        assert result["status"] == "completed" and result["shards"]["done"] == 10
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in procs:
            proc.wait(timeout=120)
        if coordinator.poll() is None:
            coordinator.kill()
    survivor = next(p for p in procs if p is not killed)
    assert survivor.returncode == 0
    with db.session() as s:
        run = s.scalars(select(ScanRun).order_by(ScanRun.id.desc())).first()
        assert run is not None and run.status == "completed"
        shards = list(s.scalars(select(ScanShard).where(ScanShard.run_id == run.id)))
        assert any(r.attempts > 1 for r in shards)  # the killed replica's shard, taken over
        assert sum(r.memories_scanned for r in shards) == total  # committed exactly once
        links = Counter(
            (f.rule_id, tuple(sorted(m.memory_id for m in f.memories)))
            for f in s.scalars(select(Finding))
        )
        assert links and max(links.values()) == 1  # no finding duplicated
        quarantines = Counter(
            mid
            for e in s.scalars(select(AuditEvent).where(AuditEvent.action == "memory.quarantined"))
            for mid in e.target_ids
        )
        assert not quarantines or max(quarantines.values()) == 1  # no action applied twice
        assert audit_log.verify(s).ok
    db.dispose()


def _full_scan_by_one_replica(db: Database, settings: Any) -> dict[str, Any]:
    """A full-scan job led here, its shards queued and scanned by one replica's worker
    (a thread of this process)."""
    import threading

    from auditor.daemon.runner import JobContext, Metrics, run_job
    from auditor.scan.shards import ShardQueue, ShardWorker

    ctx = JobContext(db, settings, Metrics(), stop=threading.Event())
    ctx.queue = ShardQueue(db)
    worker = ShardWorker(db, settings, ctx.stop)
    assert worker.start()
    give_up = threading.Timer(120, ctx.stop.set)  # a regression fails here, not hangs
    give_up.start()
    try:
        return run_job("full_scan", ctx)
    finally:
        give_up.cancel()
        worker.stop()
        ctx.queue.close()


@pytest.mark.pg
def test_shards_that_could_not_be_queued_are_queued_again(
    pg_schema_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database refuses the first queuing of a run's shards: the leader's wait loop
    queues them again, and the run completes."""
    from procrastinate.exceptions import ConnectorException

    from auditor.scan.shards import ShardQueue

    settings = load_settings(
        database_url=pg_schema_url, worker_stall_seconds=1, worker_heartbeat_seconds=0.5
    )
    db = Database(settings)
    db.upgrade()
    total = _store(db, tmp_path, 12 * SUBJECT_BATCH * 2)
    failures = iter([True])
    real_defer = ShardQueue.defer

    def flaky_defer(self: ShardQueue, run_id: int, shards: object) -> int:
        if next(failures, False):
            raise ConnectorException("connection refused (simulated)")
        return real_defer(self, run_id, shards)  # type: ignore[arg-type]

    monkeypatch.setattr(ShardQueue, "defer", flaky_defer)
    result = _full_scan_by_one_replica(db, settings)
    assert result["status"] == "completed" and result["memories_scanned"] == total
    assert next(failures, None) is None  # the failing first attempt did happen
    db.dispose()


@pytest.mark.pg
def test_the_leader_queues_the_biggest_shards_first(
    pg_schema_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replicas take shard jobs in the order they were queued: the leader queues a run's
    shards most memories first (the order of auditor.scan.workers.largest_first)."""
    from auditor.scan.shards import ShardQueue

    settings = load_settings(database_url=pg_schema_url, scan_shards=8)
    db = Database(settings)
    db.upgrade()
    total = _store(db, tmp_path, 12 * SUBJECT_BATCH * 2)
    queued: list[list[int]] = []
    real_defer = ShardQueue.defer

    def recording_defer(self: ShardQueue, run_id: int, shards: object) -> int:
        queued.append(list(shards))  # type: ignore[call-overload]
        return real_defer(self, run_id, queued[-1])

    monkeypatch.setattr(ShardQueue, "defer", recording_defer)
    result = _full_scan_by_one_replica(db, settings)
    assert result["status"] == "completed" and result["memories_scanned"] == total
    with db.session() as s:
        subjects = Counter(s.scalars(select(Memory.subject)))
        count = s.scalar(select(ScanRun.shard_count).where(ScanRun.id == result["run_id"]))
    assert count is not None and count > 2
    sizes: Counter[int] = Counter()
    for subject, n in subjects.items():
        sizes[shard_of(subject, count)] += n
    assert queued and sorted(queued[0]) == list(range(count))
    assert queued[0] == sorted(range(count), key=lambda k: (-sizes[k], k))
    assert queued[0] != sorted(queued[0])  # synthetic shards differ in size: a real order
    db.dispose()
