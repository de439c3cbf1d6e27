"""Backups and restores: an older backup never brings an erased subject back.

The erased subject's data is searched for in every table after each restore with the
generic search of ``tests/test_erasure.py``. Bad backup files give a clear error and leave
the live store exactly as it was.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from auditor.config import load_settings
from auditor.erasure import requests as erasure
from auditor.erasure.backup import backup, restore
from auditor.errors import InputError
from auditor.lifecycle import audit_log
from auditor.lifecycle.machine import Lifecycle
from auditor.sources.files import open_source
from auditor.sources.importer import Importer
from auditor.store.db import Database
from auditor.store.models import AuditEvent, ErasureRequest, Memory, Tombstone
from auditor.testing import make_record, write_jsonl
from tests.test_erasure import (
    ALICE,
    ALICE_NEEDLES,
    ALICE_ROWS,
    BOB,
    BOB_FACTS,
    search_everything,
    seed,
)


@pytest.fixture
def seeded(db: Database, tmp_path: Path) -> dict[str, Any]:
    return seed(db, tmp_path)


def _counts(db: Database) -> dict[str, int]:
    with db.session() as s:
        return {
            "memories": int(s.scalar(select(func.count()).select_from(Memory)) or 0),
            "events": int(s.scalar(select(func.count()).select_from(AuditEvent)) or 0),
        }


def _subjects(db: Database) -> set[str]:
    with db.session() as s:
        return set(s.scalars(select(Memory.subject).distinct()))


def _chain_ok(db: Database) -> bool:
    with db.session() as s:
        return audit_log.verify(s).ok


@pytest.mark.parametrize("fmt", ["auto", "jsonl", "jsonl.gz"])
def test_restore_of_an_older_backup_reapplies_the_erasure(
    db: Database, seeded: dict[str, Any], tmp_path: Path, fmt: str
) -> None:
    path = tmp_path / ("store.bak.gz" if fmt == "jsonl.gz" else "store.bak")
    info = backup(db, path, fmt="jsonl" if fmt.startswith("jsonl") else "auto")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # it holds personal data
    assert info.rows["memories"] == len(ALICE_ROWS) + len(BOB_FACTS)
    receipt = erasure.erase_subject(db, ALICE, actor="officer")
    Lifecycle(db).add(
        make_record(memory_id="b_later", subject=BOB, fact="Bob took up chess"), actor="t"
    )

    report = restore(db, path, actor="ops")

    assert search_everything(db, ALICE_NEEDLES) == []
    assert report.ok and len(report.reapplied) == 1
    again = report.reapplied[0]
    assert again["request_id"] == receipt.request_id and again["verified"]
    assert again["counts"]["memories"] == len(ALICE_ROWS)
    assert _subjects(db) == {BOB}  # the backup's state of Bob: b_later came after it
    with db.session() as s:
        assert {m for m in s.scalars(select(Memory.memory_id))} == set(BOB_FACTS)
        req = s.get(ErasureRequest, receipt.request_id)
        assert req is not None and req.status == "executed" and req.receipt == receipt.data
        kinds = [t.kind for t in s.scalars(select(Tombstone))]
        assert kinds.count("subject") == 1 and kinds.count("memory") == len(ALICE_ROWS)
        actions = [e.action for e in s.scalars(select(AuditEvent).order_by(AuditEvent.seq))]
    assert actions[-1] == "backup.restored" and "erasure.reapplied" in actions
    assert _chain_ok(db)
    # and the restored store still refuses Alice's records
    rows = write_jsonl(tmp_path / "again.jsonl", ALICE_ROWS)
    assert Importer(db).run(open_source("jsonl", rows, db.settings)).inserted == 0


def test_ledger_file_reapplies_erasures_in_a_fresh_store(
    db: Database, seeded: dict[str, Any], tmp_path: Path
) -> None:
    """The live store is lost: a fresh store, the old backup and the ledger file suffice."""
    ledger = tmp_path / "erasures.jsonl"
    live = Database(
        load_settings(
            database_url=db.url.render_as_string(hide_password=False), erasure_ledger_path=ledger
        )
    )
    try:
        path = tmp_path / "old.bak"
        backup(live, path, fmt="jsonl")
        receipt = erasure.erase_subject(live, ALICE, actor="officer")
        assert receipt.data["ledger"] == "appended"
        entry = erasure.read_ledger(ledger)[0]
        assert ALICE not in json.dumps(entry) and entry["memory_ids"]
    finally:
        live.dispose()
    fresh = Database(
        load_settings(database_url=f"sqlite:///{tmp_path / 'fresh.db'}", erasure_ledger_path=ledger)
    )
    try:
        report = restore(fresh, path, actor="ops")  # a store that was never initialised
        assert report.ok and report.ledger_entries == 1 and len(report.reapplied) == 1
        assert search_everything(fresh, ALICE_NEEDLES) == []
        assert _subjects(fresh) == {BOB} and _chain_ok(fresh)
        with fresh.session() as s:
            digests = set(
                s.scalars(select(Tombstone.subject_digest).where(Tombstone.kind == "subject"))
            )
        assert digests == {entry["subject_digest"]}
    finally:
        fresh.dispose()


def test_restore_without_any_ledger_brings_the_data_back(
    db: Database, seeded: dict[str, Any], tmp_path: Path
) -> None:
    """The control case: what the ledger protects against (no tombstones anywhere)."""
    path = tmp_path / "old.bak"
    backup(db, path, fmt="jsonl")
    fresh = Database(load_settings(database_url=f"sqlite:///{tmp_path / 'fresh.db'}"))
    try:
        report = restore(fresh, path, actor="ops")
        assert report.reapplied == [] and ALICE in _subjects(fresh)
    finally:
        fresh.dispose()


def _corrupt_files(tmp_path: Path, good_jsonl: Path) -> dict[str, tuple[Path, str]]:
    garbage = tmp_path / "garbage.bak"
    garbage.write_bytes(b"\x00\x01 this is not a backup" * 10)
    lines = good_jsonl.read_bytes().splitlines(keepends=True)
    truncated = tmp_path / "truncated.bak"
    truncated.write_bytes(b"".join(lines[:-3]))
    tampered = tmp_path / "tampered.bak"
    tampered.write_bytes(b"".join(lines[:-2]).replace(b"Bob prefers", b"Bob despises") + lines[-1])
    half_gz = tmp_path / "half.bak.gz"
    half_gz.write_bytes(gzip.compress(good_jsonl.read_bytes())[:200])
    foreign = tmp_path / "foreign.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE t (x TEXT)")
    conn.commit()
    conn.close()
    damaged = tmp_path / "damaged.db"
    data = bytearray((tmp_path / "good.db").read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)
    damaged.write_bytes(bytes(data))
    future = tmp_path / "future.bak"  # well-formed, hash and all, from a newer memaudit
    header = json.loads(lines[0])
    header["revision"] = "9999"
    body = [json.dumps(header).encode() + b"\n", *lines[1:-1]]
    trailer = json.loads(lines[-1])
    trailer["sha256"] = hashlib.sha256(b"".join(body)).hexdigest()
    future.write_bytes(b"".join(body) + json.dumps(trailer).encode() + b"\n")
    return {
        "garbage": (garbage, "not a memaudit backup"),
        "truncated": (truncated, "truncated"),
        "tampered": (tampered, "content hash does not match"),
        "half_gz": (half_gz, "cannot read it"),
        "foreign": (foreign, "not a memaudit store"),
        "damaged": (damaged, "SQLite"),
        "future": (future, "does not know"),
    }


def test_bad_backups_give_a_clear_error_and_leave_the_store_alone(
    db: Database, seeded: dict[str, Any], tmp_path: Path
) -> None:
    good = tmp_path / "good.jsonl"
    backup(db, good, fmt="jsonl")
    sqlite_src = Database(load_settings(database_url=f"sqlite:///{tmp_path / 'src.db'}"))
    sqlite_src.upgrade()
    backup(sqlite_src, tmp_path / "good.db")
    sqlite_src.dispose()
    before = _counts(db)
    for name, (path, message) in _corrupt_files(tmp_path, good).items():
        with pytest.raises(InputError, match=message):
            restore(db, path, actor="ops")
        assert _counts(db) == before, name
    assert _chain_ok(db) and ALICE in _subjects(db)


def test_backup_refuses_to_overwrite_and_checks_the_format(
    db: Database, seeded: dict[str, Any], tmp_path: Path
) -> None:
    path = tmp_path / "b.bak"
    backup(db, path)
    with pytest.raises(InputError, match="exists"):
        backup(db, path)
    backup(db, path, overwrite=True)
    if db.dialect == "postgresql":
        with pytest.raises(InputError, match="SQLite store"):
            backup(db, tmp_path / "c.bak", fmt="sqlite")
    with pytest.raises(InputError, match="does not exist"):
        backup(db, tmp_path / "nope" / "b.bak")


def test_cli_backup_and_restore(
    db: Database,
    seeded: dict[str, Any],
    run_cli,
    db_url: str,
    tmp_path: Path,  # type: ignore[no-untyped-def]
) -> None:
    env = ("--database-url", db_url)
    path = tmp_path / "cli.bak"
    made = run_cli(*env, "backup", str(path))
    assert made.code == 0 and json.loads(made.out)["rows"]["memories"] > 0
    assert run_cli(*env, "erase", ALICE, "--by", "officer", "--yes").code == 0
    refused = run_cli(*env, "restore", str(path), "--by", "ops")
    assert refused.code == 2 and "--yes" in refused.err
    done = run_cli(*env, "restore", str(path), "--by", "ops", "--yes")
    assert done.code == 0, done.err
    assert json.loads(done.out)["reapplied"][0]["verified"] is True
    assert run_cli(*env, "verify-erasure", ALICE).code == 0
    bad = tmp_path / "bad.bak"
    bad.write_text("{}\n")
    failed = run_cli(*env, "restore", str(bad), "--by", "ops", "--yes")
    assert failed.code == 2 and "not a memaudit backup" in failed.err
