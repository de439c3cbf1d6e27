"""Racing writers never lose an update silently: threads and processes, both databases."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from sqlalchemy import select

from auditor.errors import ChainForkError, ConcurrencyError, InvalidTransitionError
from auditor.lifecycle import audit_log
from auditor.lifecycle import machine as lifecycle
from auditor.lifecycle.machine import Lifecycle
from auditor.store.db import Database
from auditor.store.models import Memory
from auditor.testing import make_record

ROOT = Path(__file__).resolve().parents[1]


def _head(db: Database, subject: str) -> Memory:
    with db.session() as s:
        return s.scalars(
            select(Memory).where(Memory.subject == subject, Memory.status == "active")
        ).one()


def _check_single_chain(db: Database, subject: str, expected_len: int) -> None:
    with db.session() as s:
        rows = list(s.scalars(select(Memory).where(Memory.subject == subject)))
        assert len(rows) == expected_len
        assert Counter(m.status for m in rows) == {"active": 1, "superseded": expected_len - 1}
        successors = Counter(m.supersedes for m in rows if m.supersedes)
        assert max(successors.values()) == 1, "a memory was superseded twice: a fork"
        assert audit_log.verify(s).ok


def test_racing_expected_versions_exactly_one_wins(db: Database) -> None:
    lc = Lifecycle(db)
    seed = lc.add(make_record(memory_id="a"), actor="t")
    barrier = threading.Barrier(6)
    outcomes: list[str] = []

    def worker(i: int) -> None:
        barrier.wait()
        try:
            lc.quarantine("a", actor=f"w{i}", expected_version=seed.version)
            outcomes.append("won")
        except ConcurrencyError:
            outcomes.append("stale")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["stale"] * 5 + ["won"]
    assert lc.get("a").version == seed.version + 1


def test_threads_superseding_one_chain_lose_nothing(db: Database) -> None:
    lc = Lifecycle(db)
    lc.add(make_record(memory_id="c0", subject="user:race"), actor="t")
    n_threads, per_thread = 5, 4
    conflicts = Counter[str]()

    def worker(i: int) -> None:
        for j in range(per_thread):
            while True:
                head = _head(db, "user:race")
                try:
                    lc.supersede(
                        head.memory_id,
                        make_record(memory_id=f"c{i}_{j}", subject="user:race"),
                        actor=f"w{i}",
                        expected_version=head.version,
                    )
                    break
                except (ConcurrencyError, ChainForkError) as exc:
                    conflicts[type(exc).__name__] += 1

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _check_single_chain(db, "user:race", 1 + n_threads * per_thread)


def test_concurrent_access_counts_are_exact(db: Database) -> None:
    lc = Lifecycle(db)
    lc.add(make_record(memory_id="a"), actor="t")

    def worker() -> None:
        for _ in range(25):
            lc.record_access("a")

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert lc.get("a").access_count == 150


@pytest.mark.pg
def test_version_column_catches_read_committed_race(pg_schema_url: str) -> None:
    """PostgreSQL: two transactions load version 1, both pass the checks; one must fail."""
    from auditor.config import load_settings

    db = Database(load_settings(database_url=pg_schema_url))
    db.upgrade()
    try:
        Lifecycle(db).add(make_record(memory_id="a"), actor="t")
        barrier = threading.Barrier(2)
        outcomes: list[str] = []

        def worker(action: str) -> None:
            try:
                with db.write() as s:
                    lifecycle.get(s, "a")  # load version 1 into this transaction
                    barrier.wait()
                    getattr(lifecycle, action)(s, db.settings, "a", actor=action)
                outcomes.append(action)
            except ConcurrencyError:
                outcomes.append("stale")

        threads = [threading.Thread(target=worker, args=(a,)) for a in ("quarantine", "expire")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert "stale" in outcomes and len(outcomes) == 2
        m = Lifecycle(db).get("a")
        assert m.version == 2 and m.status in ("quarantined", "expired")
        with db.session() as s:
            assert audit_log.verify(s).checked == 2  # add + the winner only
    finally:
        db.dispose()


def test_sqlite_writers_queue_for_the_lock(tmp_path: Path) -> None:
    """SQLite: a second writer waits for the first (BEGIN IMMEDIATE) and sees its result."""
    from auditor.config import load_settings

    db = Database(load_settings(database_url=f"sqlite:///{tmp_path / 's.db'}"))
    db.upgrade()
    Lifecycle(db).add(make_record(memory_id="a"), actor="t")
    started = threading.Event()
    seen: list[str] = []

    def second() -> None:
        started.wait()
        try:
            Lifecycle(db).expire("a", actor="second")
        except InvalidTransitionError:
            seen.append("saw-expired")

    t = threading.Thread(target=second)
    t.start()
    with db.write() as s:
        lifecycle.expire(s, db.settings, "a", actor="first")
        started.set()
        time.sleep(0.3)  # hold the write lock while the second writer tries
    t.join()
    assert seen == ["saw-expired"]
    db.dispose()


_CHILD = textwrap.dedent(
    """
    import sys, time, pathlib
    from sqlalchemy import select
    from auditor.config import load_settings
    from auditor.errors import ChainForkError, ConcurrencyError
    from auditor.lifecycle.machine import Lifecycle
    from auditor.store.db import Database
    from auditor.store.models import Memory
    from auditor.testing import make_record

    url, worker, n, go = sys.argv[1], sys.argv[2], int(sys.argv[3]), pathlib.Path(sys.argv[4])
    db = Database(load_settings(database_url=url))
    lc = Lifecycle(db)
    deadline = time.time() + 30
    while not go.exists() and time.time() < deadline:
        time.sleep(0.01)
    conflicts = 0
    for j in range(n):
        while True:
            with db.session() as s:
                head = s.scalars(select(Memory).where(
                    Memory.subject == "user:proc", Memory.status == "active")).one()
            try:
                lc.supersede(head.memory_id,
                             make_record(memory_id=f"p{worker}_{j}", subject="user:proc"),
                             actor=f"proc{worker}", expected_version=head.version)
                break
            except (ConcurrencyError, ChainForkError):
                conflicts += 1
    print(conflicts)
    """
)


def test_processes_superseding_one_chain_lose_nothing(
    db: Database, db_url: str, tmp_path: Path
) -> None:
    Lifecycle(db).add(make_record(memory_id="p0", subject="user:proc"), actor="t")
    go = tmp_path / "go"
    n_procs, per_proc = 3, 4
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD, db_url, str(i), str(per_proc), str(go)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(n_procs)
    ]
    time.sleep(0.5)
    go.touch()
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    _check_single_chain(db, "user:proc", 1 + n_procs * per_proc)
