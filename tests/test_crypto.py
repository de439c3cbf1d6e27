"""Encryption at rest with a key per subject: sealing, transparent reads, crypto-shredding,
row binding, the key store's files, and the migration of a plaintext store."""

from __future__ import annotations

import os
import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select, text, update

from auditor.config import load_settings
from auditor.sources.files import open_source
from auditor.sources.importer import Importer
from auditor.store.crypto import SHREDDED, EncryptionUnavailableError, RowMismatchError
from auditor.store.crypto_migrate import count_plain, migrate_store
from auditor.store.db import Database
from auditor.store.models import Consent, Memory
from auditor.store.subject_keys import (
    KeyStoreError,
    LocalKeyStore,
    SubjectKeyStore,
    keystore_for,
    shred_file,
)
from auditor.testing import make_record, write_jsonl

SECRET = "passport number X1234567 and home at 12 Rosewood Lane"


def _raw(db: Database, column: str, memory_id: str) -> str:
    with db.engine.connect() as conn:
        value = conn.execute(
            text(f"SELECT {column} FROM memories WHERE memory_id = :m"), {"m": memory_id}
        ).scalar_one()
    return str(value)


def _memory(mid: str, subject: str = "user:alice", fact: str = SECRET) -> Memory:
    now = datetime(2026, 1, 5, tzinfo=UTC)
    return Memory(
        memory_id=mid,
        subject=subject,
        fact=fact,
        source_uri="https://mail.example/alice/42",
        trust_tier="user",
        content_hash="0" * 64,
        created_at=now,
        updated_at=now,
    )


def _import(db: Database, tmp_path: Path, records: list[dict[str, object]]) -> None:
    path = write_jsonl(tmp_path / "in.jsonl", records)
    report = Importer(db).run(open_source("jsonl", path, db.settings))
    assert report.ok, report


# -- the key store -------------------------------------------------------------------------


def test_keystore_contract_create_exists_destroy(tmp_path: Path) -> None:
    store = LocalKeyStore(tmp_path / "keys", os.urandom(32))
    assert isinstance(store, SubjectKeyStore)
    assert store.data_key("user:alice", create=False) is None
    assert not store.exists("user:alice")
    key = store.data_key("user:alice", create=True)
    assert key is not None and len(key) == 32
    assert store.exists("user:alice")
    assert store.data_key("user:alice", create=True) == key  # stable, never replaced
    assert store.data_key("user:bob", create=True) != key
    assert store.destroy("user:alice") is True
    assert not store.exists("user:alice")
    assert store.data_key("user:alice", create=False) is None
    assert store.destroy("user:alice") is False
    assert store.exists("user:bob")
    assert "keys" in store.describe()


def test_key_files_are_private_and_name_nobody(tmp_path: Path) -> None:
    store = LocalKeyStore(tmp_path / "keys", os.urandom(32))
    key = store.data_key("user:alice.smith", create=True)
    assert key is not None
    assert stat.S_IMODE((tmp_path / "keys").stat().st_mode) == 0o700
    for path in (tmp_path / "keys").iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert "alice" not in path.name
        assert key not in path.read_bytes()  # wrapped, never the raw data key


def test_destroy_overwrites_the_key_bytes_before_unlinking(tmp_path: Path) -> None:
    store = LocalKeyStore(tmp_path / "keys", os.urandom(32))
    store.data_key("user:alice", create=True)
    (path,) = store.key_files()
    before = path.read_bytes()
    twin = tmp_path / "twin"
    os.link(path, twin)  # a second name on the same inode sees what destroy did to it
    assert store.destroy("user:alice")
    after = twin.read_bytes()
    assert len(after) == len(before) and after != before
    assert not path.exists()


def test_shred_file_of_missing_file_is_false(tmp_path: Path) -> None:
    assert shred_file(tmp_path / "nope") is False


def test_wrong_master_key_is_a_clear_error(tmp_path: Path) -> None:
    LocalKeyStore(tmp_path / "keys", os.urandom(32)).data_key("user:a", create=True)
    other = LocalKeyStore(tmp_path / "keys", os.urandom(32))
    with pytest.raises(KeyStoreError, match="master key"):
        other.data_key("user:a", create=False)


def test_rewrap_keeps_data_keys_under_a_new_master(tmp_path: Path) -> None:
    old, new = os.urandom(32), os.urandom(32)
    store = LocalKeyStore(tmp_path / "keys", old)
    key = store.data_key("user:a", create=True)
    assert store.rewrap(new) == 2  # the naming key and one subject key
    fresh = LocalKeyStore(tmp_path / "keys", new)
    assert fresh.data_key("user:a", create=False) == key
    with pytest.raises(KeyStoreError):
        LocalKeyStore(tmp_path / "keys", old).data_key("user:a", create=False)


def test_malformed_master_key_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from auditor.errors import ConfigError

    monkeypatch.setenv("MEMAUDIT_MASTER_KEY", "not-hex")
    with pytest.raises(ConfigError, match="MEMAUDIT_MASTER_KEY.*64 hex"):
        keystore_for(load_settings(database_url="sqlite:///x.db"))


def test_encryption_off_by_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMAUDIT_ENCRYPTION", "off")
    assert keystore_for(load_settings(database_url="sqlite:///x.db")) is None


# -- sealing in the store (SQLite and PostgreSQL) ------------------------------------------


def test_orm_writes_are_sealed_and_read_back_in_clear(db: Database) -> None:
    assert db.cipher is not None
    with db.write() as s:
        s.add(_memory("m1"))
        s.add(Consent(subject="user:alice", category="health", source="signed form #7"))
    raw = _raw(db, "fact", "m1")
    assert raw.startswith("enc1:") and "X1234567" not in raw
    assert _raw(db, "source_uri", "m1").startswith("enc1:")
    with db.engine.connect() as conn:
        assert str(conn.execute(text("SELECT source FROM consents")).scalar_one()).startswith(
            "enc1:"
        )
    with db.session() as s:
        m = s.get(Memory, "m1")
        assert m is not None and m.fact == SECRET
        assert type(m.fact) is str  # exact str: C extensions (RE2) refuse subclasses
        assert m.source_uri == "https://mail.example/alice/42"
        assert s.scalar(select(Consent.source)) == "signed form #7"
        assert s.scalar(select(Memory.fact).where(Memory.memory_id == "m1")) == SECRET


def test_bulk_import_and_update_paths_are_sealed(db: Database, tmp_path: Path) -> None:
    _import(db, tmp_path, [make_record(memory_id="b1", fact=SECRET)])
    assert _raw(db, "fact", "b1").startswith("enc1:")
    _import(db, tmp_path, [make_record(memory_id="b1", fact=SECRET + " (moved)")])
    raw = _raw(db, "fact", "b1")
    assert raw.startswith("enc1:") and "Rosewood" not in raw
    with db.session() as s:
        assert s.scalar(select(Memory.fact).where(Memory.memory_id == "b1")) == SECRET + " (moved)"
    assert count_plain(db) == {"memories": 0, "consents": 0}


def test_each_subject_has_its_own_key_and_shredding_one_leaves_the_other(db: Database) -> None:
    with db.write() as s:
        s.add(_memory("a1", "user:alice"))
        s.add(_memory("b1", "user:bob", "bob likes chess"))
    kid_a = _raw(db, "fact", "a1").split(":")[1]
    kid_b = _raw(db, "fact", "b1").split(":")[1]
    assert kid_a != kid_b
    assert db.keystore is not None and db.keystore.destroy("user:alice")
    assert db.cipher is not None
    db.cipher.forget("user:alice")
    with db.session() as s:
        assert s.scalar(select(Memory.fact).where(Memory.memory_id == "a1")) == SHREDDED
        assert s.scalar(select(Memory.fact).where(Memory.memory_id == "b1")) == "bob likes chess"
    # new text for the erased subject gets a new key, never the destroyed one
    with db.write() as s:
        s.add(_memory("a2", "user:alice", "new text"))
    new_kid = _raw(db, "fact", "a2").split(":")[1]
    assert new_kid[:32] == kid_a[:32] and new_kid != kid_a  # same subject, a fresh key
    with db.session() as s:  # the old ciphertext stays unreadable
        assert s.scalar(select(Memory.fact).where(Memory.memory_id == "a1")) == SHREDDED
        assert s.scalar(select(Memory.fact).where(Memory.memory_id == "a2")) == "new text"


def test_subject_change_reseals_under_the_new_subjects_key(db: Database) -> None:
    with db.write() as s:
        s.add(_memory("m1", "user:alice"))
    before = _raw(db, "fact", "m1").split(":")[1]
    with db.write() as s:
        m = s.get(Memory, "m1")
        assert m is not None
        m.subject = "user:carol"
    after = _raw(db, "fact", "m1").split(":")[1]
    assert after[:32] != before[:32]
    assert db.keystore is not None and db.keystore.destroy("user:alice")
    assert db.cipher is not None
    db.cipher.forget("user:alice")
    with db.session() as s:
        assert s.scalar(select(Memory.fact).where(Memory.memory_id == "m1")) == SECRET


def test_ciphertext_copied_to_another_row_is_refused(db: Database) -> None:
    with db.write() as s:
        s.add(_memory("m1", fact="the real m1"))
        s.add(_memory("m2", fact="the real m2"))
    stolen = _raw(db, "fact", "m1")
    with db.engine.begin() as conn:
        conn.execute(text("UPDATE memories SET fact = :f WHERE memory_id = 'm2'"), {"f": stolen})
    with db.session() as s, pytest.raises(RowMismatchError, match="another row"):
        s.get(Memory, "m2")


def test_ciphertext_moved_to_another_column_does_not_open(db: Database) -> None:
    with db.write() as s:
        s.add(_memory("m1"))
    with db.engine.begin() as conn:
        conn.execute(text("UPDATE memories SET source_uri = fact WHERE memory_id = 'm1'"))
    with db.session() as s, pytest.raises(KeyStoreError, match="does not open"):
        s.scalar(select(Memory.source_uri).where(Memory.memory_id == "m1"))


def test_encrypted_store_without_key_fails_clearly(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    with db.write() as s:
        s.add(_memory("m1"))
    monkeypatch.setenv("MEMAUDIT_ENCRYPTION", "off")
    plain = Database(db.settings, url=db.url.render_as_string(hide_password=False))
    try:
        assert plain.cipher is None
        with (
            plain.session() as s,
            pytest.raises(EncryptionUnavailableError, match="no master key"),
        ):
            s.scalar(select(Memory.fact))
    finally:
        plain.dispose()


# -- migration of a plaintext store --------------------------------------------------------


def test_migrate_is_resumable_idempotent_and_leaves_no_clear_text_on_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'plain.db'}"
    monkeypatch.setenv("MEMAUDIT_ENCRYPTION", "off")
    plain = Database(load_settings(database_url=url))
    plain.upgrade()
    secrets_ = [f"Kilimanjaro-{i:03d} passport" for i in range(7)]
    with plain.write() as s:
        for i, fact in enumerate(secrets_):
            s.add(_memory(f"m{i}", f"user:s{i % 3}", fact))
        s.add(Consent(subject="user:s0", category="health", source="Kilimanjaro-consent"))
    with plain.session() as s:
        version_before = s.scalar(select(Memory.version).where(Memory.memory_id == "m0"))
        changed_before = s.scalar(select(Memory.changed_at).where(Memory.memory_id == "m0"))
    plain.dispose()
    assert b"Kilimanjaro-003" in (tmp_path / "plain.db").read_bytes()

    monkeypatch.delenv("MEMAUDIT_ENCRYPTION")
    db = Database(load_settings(database_url=url))
    assert count_plain(db) == {"memories": 7, "consents": 1}

    calls: list[tuple[str, int, int]] = []

    def stop_after_first_batch(table: str, done: int, total: int) -> None:
        calls.append((table, done, total))
        raise KeyboardInterrupt  # a stopped migration

    with pytest.raises(KeyboardInterrupt):
        migrate_store(db, batch=3, progress=stop_after_first_batch)
    assert calls == [("memories", 3, 7)]
    assert count_plain(db) == {"memories": 4, "consents": 1}  # the first batch is committed

    seen: list[tuple[str, int, int]] = []
    report = migrate_store(db, batch=3, progress=lambda *a: seen.append(a))
    assert report.sealed == {"memories": 4, "consents": 1}
    assert seen[-1] == ("consents", 1, 1)
    assert report.vacuumed and report.remaining == {"memories": 0, "consents": 0}
    again = migrate_store(db, batch=3)
    assert again.sealed == {"memories": 0, "consents": 0}  # idempotent

    with db.session() as s:
        facts = {mid: f for mid, f in s.execute(select(Memory.memory_id, Memory.fact))}
        assert facts == {f"m{i}": f for i, f in enumerate(secrets_)}
        assert s.scalar(select(Memory.version).where(Memory.memory_id == "m0")) == version_before
        assert s.scalar(select(Memory.changed_at).where(Memory.memory_id == "m0")) == changed_before
    db.dispose()
    for path in tmp_path.glob("plain.db*"):
        if path.is_file():
            assert b"Kilimanjaro" not in path.read_bytes(), path


def test_migrate_refuses_without_encryption(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from auditor.errors import ConfigError

    monkeypatch.setenv("MEMAUDIT_ENCRYPTION", "off")
    db = Database(load_settings(database_url=f"sqlite:///{tmp_path / 'p.db'}"))
    db.upgrade()
    with pytest.raises(ConfigError, match="encryption is off"):
        migrate_store(db)
    db.dispose()


def test_update_statement_setting_plain_fact_is_refused(db: Database) -> None:
    from auditor.errors import StoreError

    with db.write() as s:
        s.add(_memory("m1"))
    with pytest.raises(StoreError, match="memories.fact"), db.write() as s:
        s.execute(
            update(Memory).where(Memory.memory_id == "m1").values(fact="changed in clear"),
            execution_options={"synchronize_session": False},
        )
    with db.session() as s:
        assert s.scalar(select(Memory.fact).where(Memory.memory_id == "m1")) == SECRET
    assert count_plain(db)["memories"] == 0


# -- init and the CLI ----------------------------------------------------------------------


def _no_test_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMAUDIT_MASTER_KEY", raising=False)
    monkeypatch.delenv("MEMAUDIT_KEY_DIR", raising=False)


def test_init_creates_a_private_master_key_and_turns_encryption_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli
) -> None:  # type: ignore[no-untyped-def]
    _no_test_keys(monkeypatch)
    url = f"sqlite:///{tmp_path / 'm.db'}"
    res = run_cli("--database-url", url, "init")
    assert res.code == 0, res.err
    key = tmp_path / "m.db.master-key"
    assert "encryption at rest: on" in res.err and str(key) in res.err
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert len(bytes.fromhex(key.read_text().strip())) == 32
    assert key.read_text().strip() not in res.err + res.out
    before = key.read_text()
    again = run_cli("--database-url", url, "init")
    assert again.code == 0 and key.read_text() == before  # never replaced
    assert "encryption at rest: on, master key" in again.err
    db = Database(load_settings(database_url=url))
    try:
        assert db.cipher is not None
        with db.write() as s:
            s.add(_memory("m1"))
        assert _raw(db, "fact", "m1").startswith("enc1:")
        assert (tmp_path / "m.db.keys").is_dir()
    finally:
        db.dispose()
    status = run_cli("--database-url", url, "keys", "status", "--json")
    assert status.code == 0, status.err
    assert '"encryption": "on"' in status.out and '"subject_keys": 1' in status.out


def test_init_with_encryption_off_creates_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli
) -> None:  # type: ignore[no-untyped-def]
    _no_test_keys(monkeypatch)
    monkeypatch.setenv("MEMAUDIT_ENCRYPTION", "off")
    url = f"sqlite:///{tmp_path / 'm.db'}"
    res = run_cli("--database-url", url, "init")
    assert res.code == 0, res.err
    assert "encryption at rest: off" in res.err
    assert not (tmp_path / "m.db.master-key").exists()


def test_init_on_postgresql_without_key_folder_says_so(
    pg_schema_url: str, monkeypatch: pytest.MonkeyPatch, run_cli
) -> None:  # type: ignore[no-untyped-def]
    _no_test_keys(monkeypatch)
    res = run_cli("--database-url", pg_schema_url, "init")
    assert res.code == 0, res.err
    assert "encryption at rest: off" in res.err and "MEMAUDIT_KEY_DIR" in res.err


def test_encrypt_store_command_seals_a_plaintext_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli
) -> None:  # type: ignore[no-untyped-def]
    _no_test_keys(monkeypatch)
    url = f"sqlite:///{tmp_path / 'm.db'}"
    monkeypatch.setenv("MEMAUDIT_ENCRYPTION", "off")
    assert run_cli("--database-url", url, "init").code == 0
    plain = Database(load_settings(database_url=url))
    with plain.write() as s:
        for i in range(5):
            s.add(_memory(f"m{i}", fact=f"Timbuktu{i} secret"))
    plain.dispose()
    monkeypatch.delenv("MEMAUDIT_ENCRYPTION")
    res = run_cli("--database-url", url, "init")  # creates the master key
    assert res.code == 0 and "5 rows are still in clear" in res.err
    status = run_cli("--database-url", url, "keys", "status")
    assert "memories: 5 rows in clear" in status.out
    res = run_cli("--database-url", url, "encrypt-store", "--batch", "2")
    assert res.code == 0, res.err
    assert "memories: 2/5 sealed" in res.err and "memories: 5/5 sealed" in res.err
    assert "rows still in clear: 0" in res.out and "vacuumed: yes" in res.out
    assert b"Timbuktu" not in (tmp_path / "m.db").read_bytes()
    res = run_cli("--database-url", url, "keys", "migrate", "--json")
    assert res.code == 0 and '"memories": 0' in res.out


def test_rotate_master_rewraps_and_replaces_the_key_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli
) -> None:  # type: ignore[no-untyped-def]
    _no_test_keys(monkeypatch)
    url = f"sqlite:///{tmp_path / 'm.db'}"
    assert run_cli("--database-url", url, "init").code == 0
    db = Database(load_settings(database_url=url))
    with db.write() as s:
        s.add(_memory("m1"))
    db.dispose()
    old = (tmp_path / "m.db.master-key").read_text()
    res = run_cli("--database-url", url, "keys", "rotate-master")
    assert res.code == 0, res.err
    assert "re-wrapped 2 key files" in res.err
    assert (tmp_path / "m.db.master-key").read_text() != old
    assert sorted(p.name for p in tmp_path.glob("m.db.master-key*")) == ["m.db.master-key"]
    assert stat.S_IMODE((tmp_path / "m.db.master-key").stat().st_mode) == 0o600
    db = Database(load_settings(database_url=url))
    try:
        with db.session() as s:
            assert s.scalar(select(Memory.fact)) == SECRET
    finally:
        db.dispose()


# -- copies of the store -------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["sqlite", "jsonl"])
def test_backups_carry_ciphertext_and_restore_readable(
    db: Database, tmp_path: Path, fmt: str
) -> None:
    from auditor.erasure.backup import backup, restore

    if fmt == "sqlite" and db.dialect != "sqlite":
        fmt = "jsonl"  # PostgreSQL backs up as JSONL only
    with db.write() as s:
        s.add(_memory("m1", fact="Ouagadougou-7 is where alice was born"))
        s.add(Consent(subject="user:alice", category="health", source="Ouagadougou-form"))
    path = tmp_path / f"b.{fmt}"
    backup(db, path, fmt=fmt)
    assert b"Ouagadougou" not in path.read_bytes()
    with db.write() as s:
        m = s.get(Memory, "m1")
        assert m is not None
        m.fact = "changed after the backup"
    restore(db, path, actor="admin")
    with db.session() as s:
        assert s.scalar(select(Memory.fact).where(Memory.memory_id == "m1")) == (
            "Ouagadougou-7 is where alice was born"
        )
        assert s.scalar(select(Consent.source)) == "Ouagadougou-form"
    assert count_plain(db) == {"memories": 0, "consents": 0}


@pytest.mark.pg
def test_migrate_on_postgresql_seals_and_vacuums(
    pg_schema_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMAUDIT_ENCRYPTION", "off")
    plain = Database(load_settings(database_url=pg_schema_url))
    plain.upgrade()
    with plain.write() as s:
        for i in range(4):
            s.add(_memory(f"m{i}", fact=f"Reykjavik-{i} secret"))
    plain.dispose()
    monkeypatch.delenv("MEMAUDIT_ENCRYPTION")
    db = Database(load_settings(database_url=pg_schema_url))
    try:
        report = migrate_store(db, batch=3)
        assert report.sealed["memories"] == 4 and report.vacuumed
        assert count_plain(db) == {"memories": 0, "consents": 0}
        assert _raw(db, "fact", "m2").startswith("enc1:")
        with db.session() as s:
            assert s.scalar(select(Memory.fact).where(Memory.memory_id == "m2")) == (
                "Reykjavik-2 secret"
            )
    finally:
        db.dispose()


def test_writers_keep_plain_str_values_after_a_write(db: Database) -> None:
    from sqlalchemy import insert

    mem = _memory("m1")
    with db.write() as s:
        s.add(mem)
    assert type(mem.fact) is str and type(mem.source_uri) is str  # RE2 refuses subclasses
    row = {
        "memory_id": "m2",
        "subject": "user:bob",
        "fact": "bob's text",
        "trust_tier": "user",
        "content_hash": "0" * 64,
    }
    with db.write() as s:
        s.execute(insert(Memory), [row])
    assert type(row["fact"]) is str and row["fact"] == "bob's text"
    assert _raw(db, "fact", "m2").startswith("enc1:")
