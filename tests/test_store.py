"""Schema and migrations: the migrations build exactly the models, upgrades keep data."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import text

from auditor.config import load_settings
from auditor.errors import ConfigError, StoreError
from auditor.lifecycle.machine import Lifecycle
from auditor.store.db import HEAD_REVISION, Database
from auditor.store.models import Base, Memory, foreign_table
from auditor.testing import make_record


def test_migrations_match_the_models(db: Database) -> None:
    with db.engine.connect() as conn:
        diff = compare_metadata(
            MigrationContext.configure(
                conn,
                opts={
                    "compare_type": True,
                    "include_object": lambda o, name, type_, r, c: (
                        not (type_ == "table" and foreign_table(name))
                    ),
                },
            ),
            Base.metadata,
        )
    assert diff == []


def test_upgrade_from_first_revision_keeps_memories(db_url: str) -> None:
    db = Database(load_settings(database_url=db_url))
    cfg = db.alembic_config()
    with db.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0001")
    with db.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO memories (memory_id, subject, namespace, kind, category, fact, "
                "trust_tier, status, status_source, created_at, updated_at, access_count, "
                "content_hash, extra, version) VALUES ('old', 'user:a', 'd', 'semantic', 'note', "
                "'kept', 'user', 'active', 'source', :t, :t, 0, 'h', '{}', 1)"
            ),
            {"t": datetime(2026, 1, 1, 12, 0)},
        )
    before, after = db.upgrade()
    assert (before, after) == ("0001", db.head_revision())
    m = Lifecycle(db).get("old")
    assert m.fact == "kept" and m.changed_at == datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    db.dispose()


def test_require_schema_names_the_fix(tmp_path: Path) -> None:
    db = Database(load_settings(database_url=f"sqlite:///{tmp_path / 'x.db'}"))
    with pytest.raises(StoreError, match="memaudit init"):
        db.require_schema()
    db.upgrade()
    db.require_schema()
    db.dispose()


def test_the_recorded_head_revision_is_alembics_head(tmp_path: Path) -> None:
    # require_schema compares with HEAD_REVISION instead of loading Alembic: a new
    # migration must move it too
    db = Database(load_settings(database_url=f"sqlite:///{tmp_path / 'x.db'}"))
    assert HEAD_REVISION == db.head_revision()
    db.dispose()


def test_current_revision_reads_what_alembic_reads(db_url: str) -> None:
    db = Database(load_settings(database_url=db_url))

    def alembics() -> str | None:
        with db.engine.connect() as conn:
            return MigrationContext.configure(conn).get_current_revision()

    assert db.current_revision() is None and alembics() is None
    cfg = db.alembic_config()
    for revision in ("0001", "0003", "head"):
        with db.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, revision)
        assert db.current_revision() == alembics() is not None
    assert db.current_revision() == HEAD_REVISION
    db.require_schema()
    db.dispose()


def test_require_schema_names_an_old_schema(tmp_path: Path) -> None:
    db = Database(load_settings(database_url=f"sqlite:///{tmp_path / 'x.db'}"))
    cfg = db.alembic_config()
    with db.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "0005")
    with pytest.raises(StoreError, match=f"at schema 0005, this memaudit needs {HEAD_REVISION}"):
        db.require_schema()
    db.dispose()


def test_missing_sqlite_folder_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="folder does not exist"):
        Database(load_settings(database_url=f"sqlite:///{tmp_path / 'no' / 'x.db'}"))


def test_naive_datetimes_from_code_are_refused(db: Database) -> None:
    Lifecycle(db).add(make_record(memory_id="a"), actor="t")
    with pytest.raises(StoreError), db.write() as s:
        m = s.get(Memory, "a")
        assert m is not None
        m.expires_at = datetime(2026, 1, 1)  # naive
        s.flush()


def test_0007_rewrites_chain_findings_to_their_memories_at_fault(
    db: Database, tmp_path: Path
) -> None:
    """A store scanned before 0007 holds chain findings linking the newer memory too; after
    the upgrade they link the memory at fault, and a re-scan meets them again (same
    fingerprint: nothing resolved, nothing new, a dismissal kept)."""
    from sqlalchemy import delete, select, update

    from auditor.rulepack.pack import load_pack
    from auditor.scan.findings import fingerprint
    from auditor.scan.scanner import Scanner
    from auditor.sources.files import open_source
    from auditor.sources.importer import Importer
    from auditor.store.models import Finding, FindingMemory
    from auditor.testing import write_jsonl

    rows = [
        make_record(memory_id="old", subject="user:c", fact="Lives in Busan.", status="active"),
        make_record(memory_id="new", subject="user:c", fact="Moved to Seoul.", supersedes="old"),
        make_record(memory_id="t", subject="user:d", fact="Uses vim.", status="superseded"),
        make_record(memory_id="h1", subject="user:d", fact="Uses emacs.", supersedes="t"),
        make_record(memory_id="h2", subject="user:d", fact="Uses nano.", supersedes="t"),
    ]
    Importer(db).run(open_source("jsonl", write_jsonl(tmp_path / "m.jsonl", rows), db.settings))
    pack = load_pack(Path(__file__).parents[1] / "rules" / "lifecycle")
    Scanner(db, pack).run(full=True)
    old_layout = {"MA-LIF-004": ["old", "new"], "MA-LIF-003": ["t", "h1", "h2"]}
    with db.session() as s:
        found = {f.rule_id: f for f in s.scalars(select(Finding))}
        assert set(found) == set(old_layout)
        for rule_id, ids in old_layout.items():  # put the findings back in the old layout
            f = found[rule_id]
            hashes = {m: s.get(Memory, m).content_hash for m in ids}
            s.execute(delete(FindingMemory).where(FindingMemory.finding_id == f.finding_id))
            s.add_all(
                FindingMemory(finding_id=f.finding_id, memory_id=m, position=i)
                for i, m in enumerate(ids)
            )
            evidence = {**f.evidence, "content_hashes": hashes}
            evidence.pop("context_ids")
            s.execute(
                update(Finding)
                .where(Finding.finding_id == f.finding_id)
                .values(
                    fingerprint=fingerprint(rule_id, ids, [hashes[m] for m in ids]),
                    evidence=evidence,
                    status="dismissed" if rule_id == "MA-LIF-003" else "open",
                )
            )
        s.commit()
    cfg = db.alembic_config()
    with db.engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.stamp(cfg, "0006")
    assert db.upgrade() == ("0006", HEAD_REVISION)
    with db.session() as s:
        after = {f.rule_id: f for f in s.scalars(select(Finding))}
        links = {
            r: [link.memory_id for link in sorted(f.memories, key=lambda x: x.position)]
            for r, f in after.items()
        }
        assert links == {"MA-LIF-004": ["old"], "MA-LIF-003": ["h1", "h2"]}
        assert after["MA-LIF-004"].evidence["context_ids"] == ["new"]
        assert set(after["MA-LIF-003"].evidence["content_hashes"]) == {"h1", "h2"}
    summary = Scanner(db, pack).run(full=True)
    assert (summary.findings_new, summary.findings_resolved) == (0, 0)
    with db.session() as s:
        assert s.get(Finding, after["MA-LIF-003"].finding_id).status == "dismissed"
