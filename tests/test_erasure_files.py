"""Files that can hold personal data are created 0600 (issue 11 item 5).

The SQLite database and its ``-wal`` / ``-shm`` files (mirrored memories, the secrets a scan
found), ``memaudit init`` tightening a store created before, receipts written with
``erasure receipt -o``, the erasure ledger and backups, under a umask that would otherwise
make them world-readable.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from auditor.config import load_settings
from auditor.erasure import requests as erasure
from auditor.erasure.backup import backup
from auditor.sources.files import open_source
from auditor.sources.importer import Importer
from auditor.store.db import Database
from auditor.testing import make_record, write_jsonl


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def _open_umask() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _store(tmp_path: Path) -> Database:
    db = Database(load_settings(database_url=f"sqlite:///{tmp_path / 'store.db'}"))
    db.upgrade()
    rows = [make_record(memory_id="m1", subject="user:ann", fact="Ann's door code is 4417")]
    report = Importer(db).run(
        open_source("jsonl", write_jsonl(tmp_path / "in.jsonl", rows), db.settings)
    )
    assert report.ok
    return db


def test_a_new_sqlite_store_and_its_wal_are_private(tmp_path: Path) -> None:
    db = _store(tmp_path)
    try:
        with db.engine.connect() as conn:  # keeps the WAL and shared memory files open
            path = tmp_path / "store.db"
            assert _mode(path) == 0o600
            for suffix in ("-wal", "-shm"):
                extra = Path(f"{path}{suffix}")
                assert extra.exists() and _mode(extra) == 0o600, suffix
            conn.rollback()
    finally:
        db.dispose()


def test_init_tightens_a_store_created_world_readable(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    path.touch(mode=0o644)
    os.chmod(path, 0o644)
    db = Database(load_settings(database_url=f"sqlite:///{path}"))
    try:
        db.upgrade()
        assert _mode(path) == 0o600
        wal = Path(f"{path}-wal")
        if wal.exists():
            assert _mode(wal) == 0o600
    finally:
        db.dispose()


def test_receipt_ledger_and_backups_are_private(
    tmp_path: Path,
    run_cli,  # type: ignore[no-untyped-def]
) -> None:
    db = _store(tmp_path)
    url = db.url.render_as_string(hide_password=False)
    sqlite_copy = tmp_path / "backup.db"
    jsonl_copy = tmp_path / "backup.jsonl.gz"
    backup(db, sqlite_copy)
    backup(db, jsonl_copy, fmt="jsonl")
    assert _mode(sqlite_copy) == 0o600 and _mode(jsonl_copy) == 0o600
    receipt = erasure.erase_subject(db, "user:ann", actor="officer")
    ledger = erasure.ledger_path(db)
    assert ledger is not None and _mode(ledger) == 0o600
    out = tmp_path / "receipt.json"
    saved = run_cli(
        "--database-url", url, "erasure", "receipt", str(receipt.request_id), "-o", str(out)
    )
    assert saved.code == 0, saved.err
    assert _mode(out) == 0o600 and json.loads(out.read_text()) == receipt.as_dict()
    db.dispose()
