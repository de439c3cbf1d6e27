"""Scan workers on SQLite: every core, with the replicas' crash-safety and exactly-once.

The process tests run ``memaudit scan`` through ``tests/trace_workers.py``: every process of
the scan (the parent and its workers, forked or spawned) appends each memory it evaluates
to a trace file named after its pid, so a test can see who scanned what, kill a worker in the
middle of a shard, and count how often each memory was evaluated.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from auditor.config import load_settings
from auditor.processes import owner_record
from auditor.rulepack.engine import Engine
from auditor.rulepack.pack import load_pack
from auditor.scan.scanner import Scanner
from auditor.scan.stale import reap_stale_runs
from auditor.scan.workers import can_use_workers, worker_count
from auditor.sources.files import open_source
from auditor.sources.importer import Importer
from auditor.store.db import Database
from auditor.store.models import AuditEvent, Finding, Memory, ScanRun, ScanShard
from auditor.store.types import utcnow
from auditor.tools.synthetic import write_synthetic
from tests.test_scan import write_pack

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = str(ROOT / "tests" / "trace_workers.py")


def _store(path: Path, corpus: Path) -> tuple[Database, int]:
    db = Database(load_settings(database_url=f"sqlite:///{path}"))
    db.upgrade()
    Importer(db).run(open_source("jsonl", corpus, db.settings))
    with db.session() as s:
        return db, len(list(s.scalars(select(Memory.memory_id))))


def _findings(db: Database) -> set[tuple[str, str]]:
    with db.session() as s:
        return {(f.fingerprint, f.rule_id) for f in s.scalars(select(Finding))}


def _reference(tmp_path: Path, corpus: Path, pack: Path) -> set[tuple[str, str]]:
    """The findings of one in-process full scan of the same store."""
    db, _ = _store(tmp_path / "reference.db", corpus)
    summary = Scanner(db, load_pack(pack)).run(full=True, workers=1)
    assert summary.complete and summary.findings_new > 0
    found = _findings(db)
    db.dispose()
    return found


def _prepared(
    tmp_path: Path, subjects: int
) -> tuple[Path, set[tuple[str, str]], Path, Database, int, Path]:
    """A synthetic store of ``12 * subjects`` memories: the pack, what one process finds,
    the store's path, the store, its memory count and a trace folder."""
    corpus = write_synthetic(tmp_path / "store.jsonl", 12 * subjects)
    pack = write_pack(tmp_path / "rules")
    expected = _reference(tmp_path, corpus, pack)
    db_path = tmp_path / "store.db"
    db, total = _store(db_path, corpus)
    return pack, expected, db_path, db, total, tmp_path / "trace"


def _env(db_path: Path, trace: Path, **extra: str) -> dict[str, str]:
    trace.mkdir(exist_ok=True)
    return {
        **os.environ,
        "MEMAUDIT_DATABASE_URL": f"sqlite:///{db_path}",
        "MEMAUDIT_TEST_TRACE_DIR": str(trace),
        "MEMAUDIT_LOG_LEVEL": "warning",
        **extra,
    }


def _traces(trace: Path) -> dict[int, list[str]]:
    return {
        int(p.stem): p.read_text(encoding="utf-8").split()
        for p in trace.iterdir()
        if p.suffix == ".txt"
    }


def _wait_for(check: object, timeout: float = 240.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.1)
    pytest.fail("timed out waiting for the scan to get there")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# -- in-process API --------------------------------------------------------------------------


def test_worker_count_and_when_workers_are_used(tmp_path: Path) -> None:
    settings = load_settings(database_url=f"sqlite:///{tmp_path / 'a.db'}", scan_workers=0)
    assert worker_count(settings) == (os.cpu_count() or 1)
    assert worker_count(settings.model_copy(update={"scan_workers": 3})) == 3
    pack = load_pack(write_pack(tmp_path / "rules"))
    assert can_use_workers(Scanner(Database(settings), pack))
    memory = Database(load_settings(database_url="sqlite://"))
    assert not can_use_workers(Scanner(memory, pack))  # a private in-memory store
    assert not can_use_workers(Scanner(Database(settings), pack, judge=object()))


def test_shards_are_sized_by_subjects_and_small_runs_stay_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from auditor.scan import scanner as scanner_module
    from auditor.scan import workers as scan_workers

    corpus = write_synthetic(tmp_path / "store.jsonl", 12 * 60)  # 60 subjects
    db, total = _store(tmp_path / "small.db", corpus)
    pack = load_pack(write_pack(tmp_path / "rules"))
    handed: list[int] = []

    def in_process(scanner: Scanner, run_id: int, shards: Any, workers: int, **_: Any) -> bool:
        handed.append(workers)  # what the pool would have been given; scanned here instead
        for shard in shards:
            scanner.scan_shard(run_id, shard)
        return True

    monkeypatch.setattr(scanner_module.scan_workers, "run_in_workers", in_process)
    # the spawn thresholds first (whether this test process could fork depends on what ran
    # in it before); the lower ones for a forked worker at the end
    monkeypatch.setattr(scan_workers, "can_fork", lambda db: False)
    assert db.settings.scan_workers == 0  # "one per core"
    small = Scanner(db, pack).run(full=True)
    # 60 subjects make ceil(60 / SHARD_MIN_SUBJECTS) = 3 shards, not one batch of 200
    assert small.shards_total == -(-60 // scanner_module.SHARD_MIN_SUBJECTS) == 3
    assert small.complete and small.memories_scanned == total
    assert handed == []  # 720 memories: below AUTO_WORKERS_MIN_MEMORIES, no worker started
    explicit = Scanner(db, pack).run(full=True, workers=2)
    assert explicit.complete and handed == [2]  # an explicit count is honoured
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(scan_workers, "AUTO_WORKERS_MIN_MEMORIES", total)
    monkeypatch.setattr(scan_workers, "_SAMPLE", total)  # the estimate is the whole text
    short = sum(len(f) for f in Scanner(db, pack).sample_facts(explicit.run_id, total))
    assert 0 < short < scan_workers.AUTO_WORKERS_MIN_CHARS  # short synthetic facts
    Scanner(db, pack).run(full=True)  # enough memories, too little text: still here
    assert handed == [2]
    monkeypatch.setattr(scan_workers, "AUTO_WORKERS_MIN_CHARS", short)
    automatic = Scanner(db, pack).run(full=True)  # big enough: one per core
    assert automatic.complete and handed == [2, 2]
    # `memaudit scan --workers 0` is "one per core" too, whatever the setting says
    pinned = Database(db.settings.model_copy(update={"scan_workers": 1}))
    Scanner(pinned, pack).run(full=True, workers=0)
    assert handed == [2, 2, 2]
    Scanner(pinned, pack).run(full=True)  # the setting's 1: this process
    assert handed == [2, 2, 2]
    handed.pop()
    # a worker forked with the detectors built is worth it from less text
    monkeypatch.setattr(scan_workers, "AUTO_WORKERS_MIN_CHARS", short + 1)
    Scanner(db, pack).run(full=True)
    assert handed == [2, 2]  # too little for a spawned worker
    monkeypatch.setattr(scan_workers, "can_fork", lambda db: True)
    monkeypatch.setattr(scan_workers, "AUTO_WORKERS_FORK_MIN_CHARS", short)
    Scanner(db, pack).run(full=True)
    assert handed == [2, 2, 2]  # enough for a forked one


def test_the_pool_hands_out_the_biggest_shards_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Shards go out most memories first (then by number), counted from the store for the
    run's own selection; every pending shard is handed out once."""
    import json as json_module

    from auditor.scan import scanner as scanner_module
    from auditor.scan.selection import shard_of
    from auditor.scan.workers import largest_first

    corpus = tmp_path / "sized.jsonl"
    subjects = 8 * scanner_module.SHARD_MIN_SUBJECTS  # enough for 8 shards
    sizes = {f"user:s{k:04d}": 1 + k % 3 for k in range(subjects)}
    sizes["user:big"] = 60
    with corpus.open("w", encoding="utf-8") as fh:
        for subject, n in sizes.items():
            for i in range(n):
                rec = {"memory_id": f"{subject[5:]}_{i}", "subject": subject, "fact": f"x {i}"}
                fh.write(json_module.dumps(rec) + "\n")
    db, _ = _store(tmp_path / "sized.db", corpus)
    pack = load_pack(write_pack(tmp_path / "rules"))
    scanner = Scanner(db, pack)
    handed: list[list[int]] = []

    def record_order(sc: Scanner, run_id: int, shards: Any, workers: int, **_: Any) -> bool:
        order = largest_first(sc, run_id, shards)
        handed.append(order)
        for shard in order:
            sc.scan_shard(run_id, shard)
        return True

    monkeypatch.setattr(scanner_module.scan_workers, "run_in_workers", record_order)
    summary = scanner.run(full=True, workers=2, shards=8)
    assert summary.complete and summary.memories_scanned == sum(sizes.values())
    per_shard: dict[int, int] = {}
    for subject, n in sizes.items():
        shard = shard_of(subject, 8)
        per_shard[shard] = per_shard.get(shard, 0) + n
    assert scanner.shard_sizes(summary.run_id) == per_shard
    want = sorted(range(8), key=lambda k: (-per_shard.get(k, 0), k))
    assert handed == [want] and want[0] == shard_of("user:big", 8)
    db.dispose()


def test_two_workers_find_what_one_process_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    corpus = write_synthetic(tmp_path / "store.jsonl", 12 * 600)  # 600 subjects: 3 shards
    pack = write_pack(tmp_path / "rules")
    expected = _reference(tmp_path, corpus, pack)
    db, total = _store(tmp_path / "workers.db", corpus)
    run_memory = Engine.run_memory

    def slow(self: Engine, view: Any, ctx: Any) -> Any:
        time.sleep(0.005)  # this process only: the spawned worker gets to take a shard
        return run_memory(self, view, ctx)

    monkeypatch.setattr(Engine, "run_memory", slow)
    summary = Scanner(db, load_pack(pack)).run(full=True, workers=2, shards=3)
    assert summary.complete and summary.shards_done == 3
    assert summary.memories_scanned == total
    assert _findings(db) == expected and summary.findings_new == len(expected)
    with db.session() as s:
        shards = list(s.scalars(select(ScanShard).where(ScanShard.run_id == summary.run_id)))
    assert sum(r.memories_scanned for r in shards) == total
    assert all(r.status == "done" and r.attempts == 1 for r in shards)
    pids = {int(str(r.worker).rsplit(":", 1)[1]) for r in shards}
    assert len(pids) == 2 and os.getpid() in pids  # this process and one spawned worker
    db.dispose()


# -- processes: kill -9, SIGTERM, a killed parent ----------------------------------------------


def test_a_worker_killed_mid_shard_is_resumed_and_every_memory_counted_once(
    tmp_path: Path,
) -> None:
    pack, expected, db_path, db, total, trace = _prepared(tmp_path, 400)  # 400 subjects
    env = _env(
        db_path,
        trace,
        MEMAUDIT_TEST_SUBJECT_BATCH="20",  # 4 shards of ~100 subjects: ~5 batches each
        MEMAUDIT_TEST_SLOW_MS="4",
        MEMAUDIT_SCAN_SHARDS="4",
    )
    cmd = [sys.executable, SCRIPT, "scan", "--full", "--workers", "2", "--json", "--no-progress"]
    proc = subprocess.Popen(
        [*cmd, "--rules", str(pack)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # a worker that has committed a batch (20 subjects x 12) and is inside its next one
        def worker_busy() -> bool:
            return any(
                pid != proc.pid and len(ids) >= 2 * 20 * 12 + 30
                for pid, ids in _traces(trace).items()
            )

        _wait_for(worker_busy)
        victim = next(
            pid for pid, ids in _traces(trace).items() if pid != proc.pid and len(ids) > 400
        )
        os.kill(victim, signal.SIGKILL)
        out, err = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-3000:]
    result = json.loads(out)
    assert result["status"] == "completed" and result["complete"] is True
    assert result["memories_scanned"] == total  # counts right: the lost half batch not counted
    assert result["findings_new"] == len(expected)
    assert _findings(db) == expected  # no finding lost, none twice
    with db.session() as s:
        shards = list(s.scalars(select(ScanShard).where(ScanShard.run_id == result["run_id"])))
    assert sum(r.memories_scanned for r in shards) == total
    assert all(r.status == "done" for r in shards)
    taken_over = [r for r in shards if r.attempts == 2]
    assert len(taken_over) == 1  # the killed worker's shard, and only it, was taken over
    evaluated: Counter[str] = Counter()
    for ids in _traces(trace).values():
        evaluated.update(ids)
    with db.session() as s:
        every = set(s.scalars(select(Memory.memory_id)))
    assert set(evaluated) == every
    again = [m for m, n in evaluated.items() if n > 1]
    # only the batch in flight when the worker died was evaluated again: the shard resumed
    # after its cursor, not from its start
    assert 0 < len(again) <= 20 * 12 and set(evaluated.values()) <= {1, 2}
    db.dispose()


def test_sigterm_stops_the_workers_cleanly_and_the_next_scan_finishes(tmp_path: Path) -> None:
    pack, expected, db_path, db, total, trace = _prepared(tmp_path, 400)
    env = _env(
        db_path,
        trace,
        MEMAUDIT_TEST_SUBJECT_BATCH="20",
        MEMAUDIT_TEST_SLOW_MS="4",
        MEMAUDIT_SCAN_SHARDS="4",
    )
    proc = subprocess.Popen(
        [sys.executable, SCRIPT, "scan", "--full", "--workers", "2", "--json", "--no-progress"]
        + ["--rules", str(pack)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_for(lambda: any(pid != proc.pid and ids for pid, ids in _traces(trace).items()))
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, err[-3000:]  # interrupted
    result = json.loads(out)
    assert result["status"] == "interrupted" and not result["complete"]
    assert 0 < result["memories_scanned"] < total
    workers = [pid for pid in _traces(trace) if pid != proc.pid]
    _wait_for(lambda: not any(_alive(pid) for pid in workers), timeout=30)  # no orphan
    with db.session() as s:
        shards = list(s.scalars(select(ScanShard).where(ScanShard.run_id == result["run_id"])))
        run = s.get(ScanRun, result["run_id"])
        assert run is not None and run.status == "interrupted" and run.finished_at is not None
    assert all(r.status in ("done", "pending") and r.owner is None for r in shards)
    assert sum(r.memories_scanned for r in shards) == result["memories_scanned"]
    # the watermark did not move: the next scan covers everything and completes
    summary = Scanner(db, load_pack(pack)).run(workers=2)
    assert summary.complete and summary.mode == "full"
    assert _findings(db) == expected
    db.dispose()


def test_a_killed_cli_scan_is_marked_interrupted_by_the_next_scan(tmp_path: Path) -> None:
    corpus = write_synthetic(tmp_path / "store.jsonl", 12 * 400)
    pack = write_pack(tmp_path / "rules")
    db_path = tmp_path / "store.db"
    db, total = _store(db_path, corpus)
    trace = tmp_path / "trace"
    env = _env(
        db_path,
        trace,
        MEMAUDIT_TEST_SUBJECT_BATCH="20",
        MEMAUDIT_TEST_SLOW_MS="4",
        MEMAUDIT_SCAN_SHARDS="4",
    )
    proc = subprocess.Popen(
        [sys.executable, SCRIPT, "scan", "--full", "--workers", "2", "--no-progress"]
        + ["--rules", str(pack)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _wait_for(lambda: sum(len(ids) for ids in _traces(trace).values()) > 600)
    proc.kill()  # kill -9: nothing of the parent runs any more
    proc.wait(timeout=30)
    workers = [pid for pid in _traces(trace) if pid != proc.pid]
    _wait_for(lambda: not any(_alive(pid) for pid in workers), timeout=60)  # orphans stop
    with db.session() as s:
        killed = s.scalars(select(ScanRun)).one()
        assert killed.status == "running"  # what kill -9 leaves behind
    summary = Scanner(db, load_pack(pack)).run(workers=1)
    assert summary.complete and summary.memories_scanned == total
    with db.session() as s:
        run = s.get(ScanRun, killed.id)
        assert run is not None and run.status == "interrupted" and run.finished_at is not None
        assert 0 < int(run.counts["memories_scanned"]) < total  # what it had committed
        shards = list(s.scalars(select(ScanShard).where(ScanShard.run_id == killed.id)))
        assert all(r.status != "running" and r.owner is None for r in shards)
        events = [e for e in s.scalars(select(AuditEvent)) if e.action == "scan.interrupted"]
        assert len(events) == 1 and str(killed.id) in events[0].target_ids
    db.dispose()


# -- stale runs without processes ---------------------------------------------------------------


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def _running(db: Database, owner: dict[str, object] | None, age: timedelta) -> int:
    counts: dict[str, object] = {"shards": {"total": 1, "done": 0, "failed": []}}
    if owner is not None:
        counts["owner"] = owner
    with db.write() as s:
        run = ScanRun(mode="full", status="running", started_at=utcnow() - age, counts=counts)
        s.add(run)
        s.flush()
        s.add(ScanShard(run_id=run.id, shard=0, status="running", owner="x", counts={}))
        return run.id


def test_only_runs_whose_owner_is_gone_are_closed(tmp_path: Path) -> None:
    db = Database(load_settings(database_url=f"sqlite:///{tmp_path / 's.db'}"))
    db.upgrade()
    me = owner_record()
    here = socket.gethostname()
    dead = _running(db, {**me, "pid": _dead_pid(), "started": ""}, timedelta(seconds=1))
    alive = _running(db, me, timedelta(hours=5))  # this process: a long scan, still going
    reused = _running(db, {**me, "started": "1"}, timedelta(seconds=1))  # pid reused since
    far_old = _running(db, {"host": here + "-other", "pid": 1}, timedelta(hours=1))
    far_new = _running(db, {"host": here + "-other", "pid": 1}, timedelta(seconds=5))
    legacy = _running(db, None, timedelta(hours=2))  # no owner recorded (older versions)
    reaped = reap_stale_runs(db, db.settings)
    assert sorted(i for i, _ in reaped) == sorted([dead, reused, far_old, legacy])
    with db.session() as s:
        status = {r.id: r.status for r in s.scalars(select(ScanRun))}
        pending = {r.run_id: r.status for r in s.scalars(select(ScanShard))}
    assert status[alive] == status[far_new] == "running"
    assert status[dead] == status[reused] == status[far_old] == status[legacy] == "interrupted"
    assert pending[dead] == "pending" and pending[alive] == "running"
    assert reap_stale_runs(db, db.settings) == []  # nothing twice
    db.dispose()


# -- forked or spawned -------------------------------------------------------------------------


def test_the_cli_forks_its_worker_with_the_detectors_built_and_finds_the_same(
    tmp_path: Path,
) -> None:
    pack, expected, db_path, db, total, trace = _prepared(tmp_path, 300)
    env = _env(db_path, trace, MEMAUDIT_TEST_SLOW_MS="2", MEMAUDIT_SCAN_SHARDS="4")
    env["MEMAUDIT_LOG_LEVEL"] = "info"
    done = subprocess.run(
        [sys.executable, SCRIPT, "scan", "--full", "--workers", "2", "--json", "--progress"]
        + ["--rules", str(pack)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["complete"] and result["memories_scanned"] == total
    assert _findings(db) == expected
    # the progress bar is drawn without a thread of its own, so the worker is still forked
    started = [
        json.loads(line) for line in done.stderr.splitlines() if "scan_worker_started" in line
    ]
    assert [e["started"] for e in started] == ["forked"]  # nothing to import or build again
    traces = _traces(trace)
    assert len(traces) == 2 and sum(map(len, traces.values())) == total  # both scanned
    db.dispose()


_FORK_PROBE = """
import json, sys, threading
from sqlalchemy import text
from auditor.config import load_settings
from auditor.scan.workers import fork_is_safe
from auditor.store.db import Database

db = Database(load_settings(database_url=sys.argv[1]))
db.upgrade()
out = {"quiet": fork_is_safe(db)}
with db.session() as s:
    s.execute(text("select 1"))
    out["connection_in_use"] = fork_is_safe(db)
stop = threading.Event()
thread = threading.Thread(target=stop.wait)
thread.start()
out["another_thread"] = fork_is_safe(db)
stop.set()
thread.join()
out["thread_gone"] = fork_is_safe(db)
import betterleaks
betterleaks.scan_string("nothing here")  # loads the engine's Go runtime
out["go_runtime_loaded"] = fork_is_safe(db)
print(json.dumps(out))
"""


def test_a_worker_is_forked_only_when_nothing_unsafe_would_be_inherited(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'probe.db'}"
    done = subprocess.run(
        [sys.executable, "-c", _FORK_PROBE, url], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout) == {
        "quiet": True,
        "connection_in_use": False,
        "another_thread": False,
        "thread_gone": True,
        "go_runtime_loaded": False,
    }


_PARENT_EXIT = """
import atexit, json, os, sys
from auditor.config import load_settings
from auditor.logging import configure_logging
from auditor.rulepack.pack import load_pack
from auditor.scan.scanner import Scanner
from auditor.store.db import Database

configure_logging("info", "json")  # to standard error
mark = sys.argv[3]
atexit.register(lambda: open(mark, "a").write(f"{os.getpid()}\\n"))
db = Database(load_settings(database_url=sys.argv[1]))
from pathlib import Path
summary = Scanner(db, load_pack(Path(sys.argv[2]))).run(full=True, workers=2, shards=3)
db.dispose()
print(json.dumps({"pid": os.getpid(), "complete": summary.complete}))
"""


def test_a_forked_worker_does_not_run_its_parents_exit_handlers(tmp_path: Path) -> None:
    corpus = write_synthetic(tmp_path / "store.jsonl", 12 * 300)
    pack = write_pack(tmp_path / "rules")
    db, _ = _store(tmp_path / "store.db", corpus)
    db.dispose()
    mark = tmp_path / "exits.txt"
    env = {**os.environ, "MEMAUDIT_LOG_LEVEL": "info", "MEMAUDIT_TEST_SLOW_MS": "2"}
    done = subprocess.run(
        [sys.executable, "-c", _PARENT_EXIT, f"sqlite:///{tmp_path / 'store.db'}", str(pack)]
        + [str(mark)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["complete"] and '"started": "forked"' in done.stderr
    assert mark.read_text().split() == [str(result["pid"])]  # the parent's handler, once
