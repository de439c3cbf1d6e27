"""Crash-consistent erasure: ``kill -9`` at every step boundary, then resume (SQLite and PG).

Each test runs the erasure (or a backup, or a restore) in a child process that kills
itself with SIGKILL at one named step (:data:`auditor.erasure.states.crash_hook`,
:data:`auditor.erasure.backup.crash_hook`), then checks what a real crash would leave: the state on
the request, the provisional receipt, the write-ahead ledger line, and that
``erasure_queue`` (``run_queue``) finishes the job and a restore re-applies it. The child
skips the PII detector's model load (the facts are the values searched for); the resumed
run in the test process uses the real detector.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from auditor.erasure import queue as erasure_queue
from auditor.erasure import requests as erasure
from auditor.erasure.backup import backup, restore
from auditor.erasure.common import DELETED, DELETING, EXECUTED, VERIFYING
from auditor.erasure.scratch import register, scratch_dir
from auditor.erasure.states import LEASE, STEPS
from auditor.errors import InputError
from auditor.sources.files import open_source
from auditor.sources.importer import Importer
from auditor.store.db import Database
from auditor.store.models import ErasureRequest, Memory, Tombstone
from auditor.store.subject_keys import keystore_for
from auditor.store.types import utcnow
from auditor.testing import make_record, write_jsonl

ROOT = Path(__file__).resolve().parents[1]
CAROL = "user:carol.crash"
DAVE = "user:dave.crash"
CAROL_FACTS = [f"Carol's locker {n} code is {7100 + n} at Juniper Hall" for n in range(9)] + [
    "Carol's passport number is X1234567",
    "Carol lives at 12 Larkspur Crescent",
]
DAVE_FACTS = ["Dave prefers the aisle seat", "Dave lives at 3 Birch Avenue"]

STATE_AFTER = {
    "deleting": DELETING,
    "ledger": DELETING,
    "key": DELETING,
    "batch": DELETING,
    "deleted": DELETED,
    "sources": DELETED,
    "verifying": VERIFYING,
    "reclaimed": VERIFYING,
}

CHILD = r"""
import os, signal, sys
from datetime import timedelta
from auditor.erasure import backup
from auditor.erasure import requests as erasure
from auditor.erasure import states as erasure_states
from auditor.config import load_settings
from auditor.store.db import Database

url, what, step, subject, path = sys.argv[1:6]
erasure_states.LEASE = timedelta(0)  # a killed process's lease is over at once
erasure_states._BATCH = 4  # several batches for eleven memories
# the PII model's load (tens of seconds per process) is not what these tests are about: the
# facts themselves are the values searched for here
from auditor.erasure import values as erasure_values
erasure_values._pii_spans = lambda facts, settings: (set(), "ok")

def hook(name):
    if name == step:
        os.kill(os.getpid(), signal.SIGKILL)

erasure_states.crash_hook = hook
backup.crash_hook = hook
db = Database(load_settings(database_url=url))
if what == "erase":
    erasure.erase_subject(db, subject, actor="officer.kim")
elif what == "backup":
    backup.backup(db, __import__("pathlib").Path(path))
else:
    backup.restore(db, __import__("pathlib").Path(path), actor="ops")
print("survived")
"""


@pytest.fixture
def ledger_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A ledger file for both databases (PostgreSQL has none by default)."""
    path = tmp_path / "erasures.jsonl"
    monkeypatch.setenv("MEMAUDIT_ERASURE_LEDGER_PATH", str(path))
    return path


def _seed(db: Database, tmp_path: Path) -> None:
    rows = [
        make_record(memory_id=f"carol_{n:02d}", subject=CAROL, fact=fact)
        for n, fact in enumerate(CAROL_FACTS)
    ] + [
        make_record(memory_id=f"dave_{n:02d}", subject=DAVE, fact=fact)
        for n, fact in enumerate(DAVE_FACTS)
    ]
    rows[0]["consents"] = [{"category": "health", "granted_at": "2026-01-02T00:00:00Z"}]
    source = open_source("jsonl", write_jsonl(tmp_path / "seed.jsonl", rows), db.settings)
    report = Importer(db).run(source)
    assert report.ok, report.errors


def _kill_at(db_url: str, what: str, step: str, path: Path | None = None) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, db_url, what, step, CAROL, str(path or "")],
        cwd=ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == -signal.SIGKILL, (done.returncode, done.stderr[-2000:])
    assert "survived" not in done.stdout


def _request(db: Database) -> tuple[int, str, dict[str, Any]]:
    with db.session() as s:
        req = s.scalars(select(ErasureRequest).order_by(ErasureRequest.id.desc())).first()
        assert req is not None
        return req.id, req.status, dict(req.receipt or {})


def _carol_left(db: Database) -> int:
    with db.session() as s:
        return len(list(s.scalars(select(Memory.memory_id).where(Memory.subject == CAROL))))


def _dave_intact(db: Database) -> None:
    with db.session() as s:
        facts = sorted(s.scalars(select(Memory.fact).where(Memory.subject == DAVE)))
    assert facts == sorted(DAVE_FACTS)


@pytest.mark.parametrize("step", STEPS)
def test_an_erasure_killed_at_any_step_is_resumed_by_the_queue(
    ledger_env: Path, db: Database, db_url: str, tmp_path: Path, step: str
) -> None:
    _seed(db, tmp_path)
    _kill_at(db_url, "erase", step)

    request_id, state, provisional = _request(db)
    assert state == STATE_AFTER[step]
    # a provisional receipt from the first state on: never "verified"
    assert provisional["provisional"] is True
    assert provisional["status"] == state
    assert provisional["verified"] is False and provisional["verdict"] == "in progress"
    assert erasure.verify_receipt(provisional)
    # write-ahead: the ledger line is on disk before anything is deleted
    ledger = erasure.read_ledger(ledger_env) if ledger_env.exists() else []
    if step == "deleting":
        assert ledger == []
        assert _carol_left(db) == len(CAROL_FACTS)
    else:
        (entry,) = ledger
        assert entry["request_id"] == request_id
        assert entry["stage"] == "write-ahead"
        assert len(entry["memory_ids"]) == len(CAROL_FACTS)
    if step == "batch":  # one batch of 4 committed, the rest still there
        assert _carol_left(db) == len(CAROL_FACTS) - 4
        assert provisional["progress"]["memories"] == 4
    if state in (DELETED, VERIFYING):
        assert _carol_left(db) == 0

    outcome = erasure_queue.run_queue(db, actor="memaudit-daemon")

    assert outcome["resumed"] == 1 and outcome["executed"] == 0
    assert erasure_queue.run_queue(db, actor="memaudit-daemon")["resumed"] == 0  # done for good
    _id, state, receipt = _request(db)
    assert state == EXECUTED
    assert "provisional" not in receipt and erasure.verify_receipt(receipt)
    assert receipt["resumed_from"] == STATE_AFTER[step]
    assert receipt["counts"]["memories"] == len(CAROL_FACTS)
    assert _carol_left(db) == 0
    _dave_intact(db)
    with db.session() as s:
        tombs = set(s.scalars(select(Tombstone.memory_id).where(Tombstone.kind == "memory")))
        req = s.get(ErasureRequest, request_id)
        assert req is not None and req.subject is None  # only the digest stays
    assert {f"carol_{n:02d}" for n in range(len(CAROL_FACTS))} <= tombs
    # nothing of Carol anywhere: every table, the SQLite file and WAL, temporary copies
    check = erasure.verify_erasure(db, CAROL, values=CAROL_FACTS)
    assert check.ok, check.as_dict()
    store = keystore_for(db.settings)
    if store is not None:  # crypto-shredding: the key went first and stays gone
        assert not store.exists(CAROL)
        assert "data key" in receipt["data_key"]
    # a receipt never overstates: values that died with the process make it incomplete
    # (and says so), values read again before the delete are searched (and it says that)
    subject_id_only = any("only the subject id" in note for note in receipt["notes"])
    if step in ("deleting", "ledger"):
        assert receipt["verdict"] == "verified", receipt["stores"]
        assert receipt["verification"]["values"]["searched"] > 0
        assert not subject_id_only, receipt["notes"]
    else:
        assert receipt["verified"] is False and receipt["verdict"] == "incomplete"
        assert subject_id_only, receipt["notes"]


@pytest.fixture
def approval_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMAUDIT_ERASURE_REQUIRES_APPROVAL", "true")


def test_a_running_erasure_is_not_taken_over_before_its_lease_ends(
    approval_env: None, db: Database, tmp_path: Path
) -> None:
    _seed(db, tmp_path)
    request_id = erasure.request_erasure(db, CAROL, requested_by="user.carol", user_initiated=True)
    erasure.approve_erasure(db, request_id, actor="officer.kim")
    with db.write() as s:  # what a live process holds: in flight, lease running
        req = s.get(ErasureRequest, request_id)
        assert req is not None and req.status == "approved"
        req.status = DELETING
        req.receipt = {"provisional": True, "lease_until": (utcnow() + LEASE).isoformat()}

    assert erasure_queue.run_queue(db, actor="memaudit-daemon")["resumed"] == 0
    with pytest.raises(InputError, match="held by a running process"):
        erasure_queue.resume(db, request_id, executed_by="ops")
    receipt = erasure_queue.resume(db, request_id, executed_by="ops", force=True)
    assert receipt.data["status"] == EXECUTED
    assert _carol_left(db) == 0
    _dave_intact(db)


@pytest.mark.parametrize("step", ["ledger", "batch", "deleted", "verifying"])
def test_a_restore_reapplies_an_interrupted_erasure(
    ledger_env: Path, db: Database, db_url: str, tmp_path: Path, step: str
) -> None:
    _seed(db, tmp_path)
    saved = tmp_path / "before-erasure.bak"
    backup(db, saved)
    _kill_at(db_url, "erase", step)

    report = restore(db, saved, actor="ops")

    assert _carol_left(db) == 0, "the backup brought the subject back"
    _dave_intact(db)
    assert report.reapplied
    erasure_queue.run_queue(db, actor="memaudit-daemon")
    _id, state, _receipt = _request(db)
    assert state == EXECUTED
    assert _carol_left(db) == 0


def _scratch_files(db: Database) -> list[Path]:
    folder = scratch_dir(db)
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_a_killed_backup_leaves_no_copy_after_the_next_run(
    db: Database, db_url: str, tmp_path: Path
) -> None:
    _seed(db, tmp_path)
    target = tmp_path / "nightly.bak"
    _kill_at(db_url, "backup", "backup-written", target)

    (left,) = list(tmp_path.glob(".nightly.bak.*.tmp"))  # the half-made copy, and its marker
    assert left.stat().st_mode & 0o777 == 0o600
    assert not target.exists()
    assert any(p.name.endswith(".copy.json") for p in _scratch_files(db))

    backup(db, tmp_path / "next.bak")  # the next run removes it

    assert list(tmp_path.glob(".nightly.bak.*.tmp")) == []
    assert _scratch_files(db) == []


def test_a_killed_restore_leaves_no_copy_and_erasure_verification_removes_it(
    db: Database, db_url: str, tmp_path: Path
) -> None:
    _seed(db, tmp_path)
    saved = tmp_path / "full.bak"
    backup(db, saved)
    _kill_at(db_url, "restore", "restore-materialised", saved)

    copies = [p for p in _scratch_files(db) if not p.name.endswith(".copy.json")]
    assert copies, "the killed restore left its scratch copy"
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in copies if p.name == "restore.db")

    erasure.erase_subject(db, CAROL, actor="officer.kim")  # verification sweeps first

    assert _scratch_files(db) == []


def test_verification_searches_a_copy_that_a_running_backup_holds(
    db: Database, tmp_path: Path
) -> None:
    _seed(db, tmp_path)
    erasure.erase_subject(db, CAROL, actor="officer.kim")
    copy = tmp_path / ".running.bak.tmp"
    with register(db, copy, purpose="backup"):
        copy.write_bytes(b"\x00" * 64 + json.dumps({"subject": CAROL}).encode() + b"\x00")
        found = erasure.verify_erasure(db, CAROL)
    assert not found.ok
    assert [h.place for h in found.hits] == [f"temporary copy {copy.name}"]
    assert not copy.exists()  # removed when the (simulated) backup ended
    assert erasure.verify_erasure(db, CAROL).ok
