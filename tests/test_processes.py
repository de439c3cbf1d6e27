"""Liveness of the process behind a mark: scan run owners and scratch copies share it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.erasure.scratch import scratch_dir, sweep
from auditor.processes import alive_here, host_name, owner_record, start_ticks
from auditor.store.db import Database


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_this_process_is_alive_with_and_without_its_start_time() -> None:
    me = owner_record()
    assert me["host"] == host_name() and me["pid"] == os.getpid()
    assert alive_here(os.getpid())
    assert alive_here(os.getpid(), str(me["started"]))


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="start times need /proc")
def test_a_reused_pid_is_not_the_process_that_left_the_mark() -> None:
    started = start_ticks(os.getpid())
    assert started.isdigit()
    assert not alive_here(os.getpid(), str(int(started) + 1))


def test_a_finished_process_is_not_alive() -> None:
    assert not alive_here(_dead_pid())


def _mark(db: Database, name: str, **fields: object) -> Path:
    folder = scratch_dir(db)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    copy = folder / f"{name}.db"
    copy.write_bytes(b"copy of the store")
    marker = folder / f"{name}.copy.json"
    marker.write_text(json.dumps({"path": str(copy), "purpose": "backup", **fields}))
    return copy


def test_sweep_keeps_live_and_foreign_copies_and_removes_dead_and_reused_ones(
    db: Database,
) -> None:
    me = owner_record()
    live = _mark(db, "live", **me)
    foreign = _mark(db, "foreign", pid=1, host="another-machine", started="1")
    dead = _mark(db, "dead", pid=_dead_pid(), host=host_name())
    reused = _mark(
        db, "reused", pid=os.getpid(), host=host_name(), started=str(int(me["started"] or 0) + 1)
    )
    try:
        removed = sweep(db)

        assert live.exists() and foreign.exists()
        assert not dead.exists()
        if Path("/proc/self/stat").exists():  # start times are known: the reused pid is caught
            assert not reused.exists()
            assert len(removed) == 2
    finally:  # the scratch folder of a PostgreSQL store is shared by every test: leave none
        for copy in (live, foreign, dead, reused):
            copy.unlink(missing_ok=True)
            copy.with_name(copy.name.replace(".db", ".copy.json")).unlink(missing_ok=True)


def test_quick_exit_writes_what_is_buffered_and_runs_exit_handlers(tmp_path: Path) -> None:
    mark = tmp_path / "atexit.txt"
    script = (
        "import atexit, sys\n"
        "from pathlib import Path\n"
        "from auditor.processes import quick_exit\n"
        f"atexit.register(lambda: Path({str(mark)!r}).write_text('ran'))\n"
        "sys.stdout.write('no newline, still buffered')\n"
        "sys.stderr.write('err too')\n"
        "quick_exit(7)\n"
        "print('never')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False
    )
    assert done.returncode == 7
    assert done.stdout == "no newline, still buffered" and done.stderr == "err too"
    assert mark.read_text() == "ran"


def test_quick_exit_waits_for_threads_that_are_not_daemons(tmp_path: Path) -> None:
    done_file = tmp_path / "thread.txt"
    script = (
        "import threading, time\n"
        "from pathlib import Path\n"
        "from auditor.processes import quick_exit\n"
        "def late():\n"
        "    time.sleep(0.3)\n"
        f"    Path({str(done_file)!r}).write_text('finished')\n"
        "threading.Thread(target=late).start()\n"
        "quick_exit(0)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done_file.read_text() == "finished"  # not cut off by the quick exit


def test_the_command_exits_with_its_code_and_leaves_the_store_closed(tmp_path: Path) -> None:
    db_path = tmp_path / "m.db"
    env = {**os.environ, "MEMAUDIT_DATABASE_URL": f"sqlite:///{db_path}"}
    env.pop("MEMAUDIT_CONFIG", None)
    run = [sys.executable, "-m", "auditor"]
    init = subprocess.run([*run, "init"], env=env, capture_output=True, text=True, check=False)
    assert init.returncode == 0, init.stderr
    listed = subprocess.run(
        [*run, "findings", "--format", "json"], env=env, capture_output=True, text=True
    )
    assert listed.returncode == 0 and json.loads(listed.stdout) == []
    # the connection was closed before the quick exit: SQLite folded its log back in
    assert not Path(f"{db_path}-wal").exists()
    wrong = subprocess.run([*run, "no-such-command"], env=env, capture_output=True, text=True)
    assert wrong.returncode == 2 and "no-such-command" in wrong.stderr
