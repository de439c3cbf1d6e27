"""The daemon: jobs, one leader among replicas, health and metrics, recovery, signals."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import select

from auditor.config import DEFAULT_SCHEDULE, load_settings
from auditor.daemon.runner import JOBS, Daemon, JobContext, Leadership, Metrics, run_job
from auditor.lifecycle import audit_log
from auditor.lifecycle.machine import Lifecycle
from auditor.schedules import parse_schedule
from auditor.sources.files import open_source
from auditor.sources.importer import Importer
from auditor.store.db import Database
from auditor.store.models import AuditEvent, Memory, ScanRun, ScanShard, Tombstone
from auditor.store.types import utcnow
from auditor.testing import make_record, write_jsonl

ROOT = Path(__file__).resolve().parents[1]


def test_every_job_has_a_default_schedule() -> None:
    assert set(JOBS) == set(DEFAULT_SCHEDULE)


@pytest.mark.parametrize(
    ("spec", "ok"),
    [
        ("every 5m", True),
        ("every 30s", True),
        ("30 2 * * *", True),
        ("off", True),
        ("nightly", False),
        ("every 0m", False),
        ("every 5 days", False),
    ],
)
def test_schedule_texts(spec: str, ok: bool) -> None:
    if ok:
        parse_schedule(spec)
    else:
        with pytest.raises(ValueError, match="schedule of job"):
            parse_schedule(spec)


def _ctx(db: Database) -> JobContext:
    return JobContext(db, db.settings, Metrics())


def _load(db: Database, tmp_path: Path, rows: list[dict[str, object]]) -> None:
    Importer(db).run(open_source("jsonl", write_jsonl(tmp_path / "s.jsonl", rows), db.settings))


def test_scan_jobs_find_and_count(db: Database, tmp_path: Path) -> None:
    _load(
        db,
        tmp_path,
        [
            make_record(memory_id="k", fact="my password is hunter2-Xy9!"),
            make_record(memory_id="ok", fact="likes tea"),
        ],
    )
    ctx = _ctx(db)
    full = run_job("full_scan", ctx)
    assert full["complete"] and full["memories_scanned"] == 2 and full["findings_new"] >= 1
    again = run_job("incremental_scan", ctx)
    assert again["mode"] == "incremental" and again["findings_new"] == 0
    metrics = ctx.metrics.registry.get_sample_value
    assert metrics("memaudit_memories_scanned_total", {"mode": "full"}) == 2
    assert metrics("memaudit_findings_open", {"category": "secret", "severity": "high"}) >= 1
    assert metrics("memaudit_job_runs_total", {"job": "full_scan", "outcome": "ok"}) == 1


def test_expiry_sweep_and_retention_purge(db: Database, tmp_path: Path) -> None:
    past = (utcnow() - timedelta(days=2)).isoformat()
    _load(
        db,
        tmp_path,
        [
            make_record(memory_id="due", expires_at=past),
            make_record(memory_id="fresh"),
            make_record(memory_id="gone"),
        ],
    )
    assert run_job("expiry_sweep", _ctx(db)) == {"due": 1, "expired": 1}
    lc = Lifecycle(db)
    assert lc.get("due").status == "expired" and lc.get("fresh").status == "active"
    lc.soft_delete("gone", actor="user")
    assert run_job("retention_purge", _ctx(db)) == {"purged": 0}  # not old enough yet
    with db.write() as s:
        m = s.get(Memory, "gone")
        assert m is not None
        m.deleted_at = utcnow() - timedelta(days=45)
    assert run_job("retention_purge", _ctx(db)) == {"purged": 1}
    with db.session() as s:
        assert s.get(Memory, "gone") is None
        assert s.scalars(select(Tombstone.memory_id)).all() == ["gone"]
        assert "memory.purged" in [e.action for e in s.scalars(select(AuditEvent))]
        assert audit_log.verify(s).ok
    # an erased memory does not come back with the next import
    report = Importer(db).run(
        open_source(
            "jsonl",
            write_jsonl(tmp_path / "again.jsonl", [make_record(memory_id="gone")]),
            db.settings,
        )
    )
    assert report.skipped == 1


def test_unknown_job_is_refused(db: Database) -> None:
    from auditor.errors import InputError

    with pytest.raises(InputError, match="unknown job"):
        run_job("defrag", _ctx(db))


def test_once_from_the_command_line(run_cli, db_url: str) -> None:  # type: ignore[no-untyped-def]
    assert run_cli("--database-url", db_url, "init").code == 0
    r = run_cli("--database-url", db_url, "daemon", "--once", "audit_verify")
    assert r.code == 0 and json.loads(r.out.splitlines()[-1])["ok"] is True
    bad = run_cli("--database-url", db_url, "daemon", "--once", "nope")
    assert bad.code == 2 and "unknown job" in bad.err
    listed = run_cli("--database-url", db_url, "daemon", "--list")
    assert "full_scan" in listed.out and "30 2 * * *" in listed.out


def test_leader_lock_is_exclusive(db_url: str) -> None:
    a = Database(load_settings(database_url=db_url))
    b = Database(load_settings(database_url=db_url))
    a.upgrade()
    first, second = Leadership(a), Leadership(b)
    try:
        assert first.try_acquire() and first.check()
        assert not second.try_acquire()
        first.release()
        assert second.try_acquire()
        assert not first.try_acquire()
    finally:
        first.release()
        second.release()
        a.dispose()
        b.dispose()


@pytest.mark.pg
def test_two_stores_in_two_schemas_have_a_leader_each(pg_admin_url: str) -> None:
    import uuid

    from sqlalchemy import create_engine, make_url, text

    base = make_url(pg_admin_url).set(drivername="postgresql+psycopg")
    schemas = [f"t_{uuid.uuid4().hex[:16]}" for _ in range(2)]
    admin = create_engine(base)
    with admin.begin() as conn:
        for schema in schemas:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    stores = [
        Database(
            load_settings(
                database_url=base.update_query_dict(
                    {"options": f"-csearch_path={schema}"}
                ).render_as_string(hide_password=False)
            )
        )
        for schema in schemas
    ]
    leaders = [Leadership(db) for db in stores]
    try:
        assert all(leader.try_acquire() for leader in leaders)  # one database, two leaders
    finally:
        for leader, db in zip(leaders, stores, strict=True):
            leader.release()
            db.dispose()
        with admin.begin() as conn:
            for schema in schemas:
                conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _wait(predicate, timeout: float = 30.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def _completed_scans(db: Database) -> int:
    with db.session() as s:
        return len(s.scalars(select(ScanRun.id).where(ScanRun.status == "completed")).all())


def test_daemon_schedules_serves_health_and_stops(db_url: str, tmp_path: Path) -> None:
    settings = load_settings(
        database_url=db_url,
        leader_poll_seconds=0.2,
        schedule={"incremental_scan": "every 1s", "full_scan": "off"},
    )
    db = Database(settings)
    db.upgrade()
    _load(db, tmp_path, [make_record(memory_id="a", fact="token ghp_" + "a1B2" * 9)])
    daemon = Daemon(db, settings)
    port = daemon.serve_health(0)
    stop = threading.Event()
    thread = threading.Thread(target=daemon.run, args=(stop,))
    thread.start()
    try:
        assert _wait(lambda: _completed_scans(db) >= 2)
        status, body = _get(f"http://127.0.0.1:{port}/healthz")
        health = json.loads(body)
        assert status == 200 and health["role"] == "leader" and health["scheduler"] == "running"
        assert health["database"] == "ok" and health["seconds_since_last_successful_scan"] < 30
        status, metrics = _get(f"http://127.0.0.1:{port}/metrics")
        assert status == 200 and "memaudit_is_leader 1.0" in metrics
        # the run completes in a worker a moment before the scan job reports it
        ok_line = 'memaudit_job_runs_total{job="incremental_scan",outcome="ok"}'
        assert _wait(lambda: ok_line in _get(f"http://127.0.0.1:{port}/metrics")[1])
        assert _get(f"http://127.0.0.1:{port}/nope")[0] == 404
    finally:
        started = time.monotonic()
        stop.set()
        thread.join(timeout=30)
    assert not thread.is_alive() and time.monotonic() - started < 30
    assert not daemon.leader.held
    db.dispose()


def test_a_crashed_scan_is_abandoned_and_run_again(db_url: str, tmp_path: Path) -> None:
    settings = load_settings(
        database_url=db_url,
        leader_poll_seconds=0.2,
        schedule={
            "incremental_scan": "off",
            "full_scan": "off",
            "expiry_sweep": "off",
            "retention_purge": "off",
            "audit_verify": "off",
        },
    )
    db = Database(settings)
    db.upgrade()
    _load(db, tmp_path, [make_record(memory_id="a")])
    with db.write() as s:  # what a kill -9 in the middle of a full scan leaves behind
        s.add(ScanRun(mode="full", status="running", started_at=utcnow() - timedelta(hours=1)))
    daemon = Daemon(db, settings)
    stop = threading.Event()
    thread = threading.Thread(target=daemon.run, args=(stop,))
    thread.start()
    try:
        assert _wait(lambda: _completed_scans(db) >= 1)
    finally:
        stop.set()
        thread.join(timeout=30)
    with db.session() as s:
        runs = {r.status: r.mode for r in s.scalars(select(ScanRun))}
        assert runs == {"abandoned": "full", "completed": "full"}
        assert "scan.abandoned" in [e.action for e in s.scalars(select(AuditEvent))]
    db.dispose()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start(db_url: str, port: int) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "MEMAUDIT_DATABASE_URL": db_url,
        "MEMAUDIT_LEADER_POLL_SECONDS": "0.3",
        "MEMAUDIT_SCHEDULE__INCREMENTAL_SCAN": "every 2s",
        "MEMAUDIT_LOG_FORMAT": "json",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "auditor", "daemon", "--health-port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _role(port: int) -> str | None:
    try:
        return str(json.loads(_get(f"http://127.0.0.1:{port}/healthz")[1])["role"])
    except (OSError, ValueError):
        return None


def test_two_replicas_one_leader_and_failover_after_kill_9(db: Database, db_url: str) -> None:
    ports = [_free_port(), _free_port()]
    procs = [_start(db_url, p) for p in ports]
    try:
        assert _wait(lambda: sorted(str(_role(p)) for p in ports) == ["leader", "standby"])
        leader = 0 if _role(ports[0]) == "leader" else 1
        other = 1 - leader
        procs[leader].kill()  # kill -9: no clean-up at all
        procs[leader].wait(timeout=10)
        assert _wait(lambda: _role(ports[other]) == "leader", timeout=20)
        procs[other].send_signal(signal.SIGTERM)
        assert procs[other].wait(timeout=30) == 0  # SIGTERM: a clean stop, exit 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def _scan_state(db: Database) -> tuple[set[str], dict[str, int]]:
    from collections import Counter

    from auditor.store.models import Finding

    with db.session() as s:
        fingerprints = set(s.scalars(select(Finding.fingerprint)))
        quarantines = Counter(
            mid
            for e in s.scalars(select(AuditEvent).where(AuditEvent.action == "memory.quarantined"))
            for mid in e.target_ids
        )
        assert audit_log.verify(s).ok
    return fingerprints, dict(quarantines)


@pytest.mark.slow
def test_kill_9_in_the_middle_of_a_full_scan(db_url: str, tmp_path: Path) -> None:
    """A scan killed half-way, then recovered: same findings and actions as a clean scan."""
    from auditor.tools.synthetic import write_synthetic

    corpus = write_synthetic(tmp_path / "store.jsonl", 12_000)
    reference = Database(load_settings(database_url=f"sqlite:///{tmp_path / 'ref.db'}"))
    reference.upgrade()
    Importer(reference).run(open_source("jsonl", corpus, reference.settings))
    run_job("full_scan", _ctx(reference))
    expected_fps, expected_quarantines = _scan_state(reference)
    reference.dispose()
    assert expected_quarantines and max(expected_quarantines.values()) == 1

    settings = load_settings(
        database_url=db_url,
        leader_poll_seconds=0.2,
        schedule={name: "off" for name in DEFAULT_SCHEDULE},
        worker_heartbeat_seconds=0.5,
        worker_stall_seconds=2,
        scan_shards=2,  # 500 subjects a shard: several batches, so the kill lands mid-shard
    )
    db = Database(settings)
    db.upgrade()
    Importer(db).run(open_source("jsonl", corpus, settings))
    env = {
        **os.environ,
        "MEMAUDIT_DATABASE_URL": db_url,
        "MEMAUDIT_WORKER_HEARTBEAT_SECONDS": "0.5",
        "MEMAUDIT_WORKER_STALL_SECONDS": "2",
        "MEMAUDIT_SCAN_SHARDS": "2",
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "auditor", "daemon", "--once", "full_scan"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def some_batches_committed() -> bool:
        from auditor.store.models import Finding

        with db.session() as s:
            return bool(s.scalars(select(Finding.finding_id).limit(1)).first())

    try:
        assert _wait(some_batches_committed, timeout=60)
        assert proc.poll() is None, "the scan finished before it could be killed"
        proc.kill()  # kill -9 in the middle of the full scan
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    with db.session() as s:
        assert [r.status for r in s.scalars(select(ScanRun))] == ["running"]
    half_fps, _ = _scan_state(db)
    assert 0 < len(half_fps) < len(expected_fps)

    daemon = Daemon(db, settings)  # the next leader resumes the scan where it stopped
    stop = threading.Event()
    thread = threading.Thread(target=daemon.run, args=(stop,))
    thread.start()
    try:
        assert _wait(lambda: _completed_scans(db) >= 1, timeout=120)
    finally:
        stop.set()
        thread.join(timeout=60)
    fingerprints, quarantines = _scan_state(db)
    assert fingerprints == expected_fps  # nothing duplicated, nothing lost
    assert quarantines == expected_quarantines  # every action applied exactly once
    with db.session() as s:
        # the same run, resumed from each shard's cursor (not abandoned and redone)
        assert [r.status for r in s.scalars(select(ScanRun))] == ["completed"]
        shards = list(s.scalars(select(ScanShard)))
        assert len(shards) > 1 and all(r.status == "done" for r in shards)
        assert any(r.attempts > 1 for r in shards)  # the killed shard was taken over
        # every memory scanned exactly once in the run, counted by the committed batches
        assert sum(r.memories_scanned for r in shards) == 12_000
    db.dispose()


def test_jobs_retry_with_backoff_while_the_database_is_away(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    from auditor.daemon import runner as daemon_mod
    from auditor.errors import StoreError

    calls: list[int] = []

    def flaky(ctx: JobContext) -> dict[str, object]:
        calls.append(1)
        if len(calls) < 3:
            raise StoreError("cannot reach database")
        return {"ok": True}

    monkeypatch.setitem(daemon_mod.JOBS, "audit_verify", flaky)
    ctx = _ctx(db)
    assert daemon_mod.run_with_retries("audit_verify", ctx, backoff=(0.01, 0.01, 0.01)) == {
        "ok": True
    }
    assert len(calls) == 3
    calls.clear()

    def always_down(ctx: JobContext) -> dict[str, object]:
        calls.append(1)
        raise StoreError("cannot reach database")

    monkeypatch.setitem(daemon_mod.JOBS, "audit_verify", always_down)
    assert daemon_mod.run_with_retries("audit_verify", ctx, backoff=(0.01, 0.01)) is None
    assert len(calls) == 3  # one try and two retries, then it gives up until the next run
    ctx.stop.set()
    calls.clear()
    assert daemon_mod.run_with_retries("audit_verify", ctx, backoff=(5.0,)) is None
    assert len(calls) == 1  # stopping: no retry is started


def test_the_first_scan_of_a_new_set_up_syncs_the_sources_first(
    db: Database, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from auditor.daemon import runner as daemon_mod

    calls: list[str] = []
    monkeypatch.setitem(daemon_mod.JOBS, "source_sync", lambda ctx: calls.append("sync") or {})
    monkeypatch.setitem(daemon_mod.JOBS, "full_scan", lambda ctx: calls.append("scan") or {})
    monkeypatch.setattr(daemon_mod, "_CONTEXT", _ctx(db))
    daemon_mod.scheduled_job("full_scan", sync_first=True)
    assert calls == ["sync", "scan"]
    calls.clear()
    daemon_mod.scheduled_job("full_scan")
    assert calls == ["scan"]
    # a store never scanned: the daemon's recovery step asks for the sync first
    settings = load_settings(database_url=db_url, schedule={"full_scan": "off"})
    daemon = Daemon(db, settings)
    scheduled: list[dict[str, object]] = []

    class _Recorder:
        def add_job(self, fn: object, **kw: object) -> None:
            scheduled.append(kw)

    daemon._recover(_Recorder())  # type: ignore[arg-type]
    first = [kw for kw in scheduled if kw.get("name") == "full_scan"]
    assert first and first[0]["kwargs"] == {"sync_first": True}
