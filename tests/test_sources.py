"""The source registry: secrets refused in clear and resolved only when opening; the CLI;
sources declared in the TOML file; the jsonl connector."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy import create_engine, select

from auditor.config import load_settings
from auditor.errors import ConfigError, InputError, NotFoundError
from auditor.sources.live.base import SourceConfig, memory_id_for
from auditor.sources.registry import (
    add_source,
    check_options,
    connect,
    get_source,
    list_sources,
    remove_source,
    resolve_options,
)
from auditor.sources.sync import sync_source
from auditor.store.db import Database
from auditor.store.models import AuditEvent, Memory, SourceRow
from auditor.testing import make_record, write_jsonl

PASSWORD = "hunter2-Sup3r"


@pytest.mark.parametrize(
    "options",
    [
        {"url": f"postgresql+psycopg://app:{PASSWORD}@db.internal/app"},
        {"url": f"postgresql://app@db/app?password={PASSWORD}"},
        {"api_key": PASSWORD},
        {"client": {"auth": {"Client-Secret": PASSWORD}}},
        {"hosts": [{"url": f"redis://:{PASSWORD}@cache:6379/0"}]},
    ],
)
def test_secrets_in_clear_are_refused_without_echoing_them(options: dict[str, Any]) -> None:
    with pytest.raises(InputError) as err:
        check_options("shop", options)
    message = str(err.value)
    assert PASSWORD not in message
    assert "source 'shop'" in message and "${ENV_VAR}" in message


@pytest.mark.parametrize(
    "options",
    [
        {"url": "postgresql+psycopg://app:${PG_PASSWORD}@db.internal/app"},
        {"url": "postgresql+psycopg://app@db.internal/app"},
        {"url": "sqlite:////data/app.db"},
        {"api_key": "${secret:mem0_key}"},
        {"token_ttl": "", "mapping": {"columns": {"id": "id"}}},
    ],
)
def test_references_and_secretless_options_are_accepted(options: dict[str, Any]) -> None:
    check_options("shop", options)


def test_add_refuses_a_password_and_stores_nothing(db: Database) -> None:
    with pytest.raises(InputError, match="password in clear"):
        add_source(
            db,
            SourceConfig(
                name="shop",
                kind="sql-table",
                options={"url": f"postgresql://u:{PASSWORD}@h/db", "mapping": {}},
            ),
        )
    with db.session() as session:
        assert session.scalars(select(SourceRow)).all() == []
        events = session.scalars(select(AuditEvent)).all()
    assert all(PASSWORD not in json.dumps(e.details) for e in events)


def test_references_are_stored_as_written_and_resolved_only_when_opened(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "pg_pass").write_text("p@ss/w:rd\n", encoding="utf-8")
    monkeypatch.setenv("MEMAUDIT_SECRETS_DIR", str(secrets))
    monkeypatch.setenv("SHOP_USER", "app")
    url = "postgresql+psycopg://${SHOP_USER}:${secret:pg_pass}@db.internal:5432/app"
    add_source(db, SourceConfig(name="shop", kind="sql-table", options={"url": url}))
    with db.session() as session:
        row = session.get(SourceRow, "shop")
        assert row is not None and row.options == {"url": url}
    assert get_source(db, "shop").config.options["url"] == url
    resolved = resolve_options("shop", {"url": url, "n": 3, "list": ["${SHOP_USER}"]})
    # the password is percent-encoded inside the URL's user info
    assert resolved["url"] == "postgresql+psycopg://app:p%40ss%2Fw%3Ard@db.internal:5432/app"
    assert resolved["n"] == 3 and resolved["list"] == ["app"]


def test_unresolvable_references_name_the_variable_not_a_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NOPE_PASS", raising=False)
    with pytest.raises(ConfigError, match="environment variable NOPE_PASS is not set"):
        resolve_options("shop", {"url": "postgresql://u:${NOPE_PASS}@h/db"})
    with pytest.raises(ConfigError, match="MEMAUDIT_SECRETS_DIR is not set"):
        resolve_options("shop", {"k": "${secret:missing}"}, secrets_dir=None)
    monkeypatch.setenv("MEMAUDIT_SECRETS_DIR", str(tmp_path))
    with pytest.raises(ConfigError, match="cannot read secret 'missing'"):
        resolve_options("shop", {"k": "${secret:missing}"})


def test_connect_hands_resolved_options_to_the_connector(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_jsonl(tmp_path / "m.jsonl", [make_record(memory_id="a")])
    monkeypatch.setenv("MEM_FILE", str(path))
    add_source(db, SourceConfig(name="notes", kind="jsonl", options={"path": "${MEM_FILE}"}))
    with connect(db, "notes") as connector:
        assert connector.config.options["path"] == str(path)
        assert connector.test() == {"items": 1, "unreadable": 0, "subjects": 1}


def test_names_kinds_schedules_and_write_back_are_validated(db: Database) -> None:
    with pytest.raises(InputError, match="invalid source name"):
        add_source(db, SourceConfig(name="Bad Name", kind="jsonl"))
    with pytest.raises(InputError, match="unknown kind 'oracle'"):
        add_source(db, SourceConfig(name="x", kind="oracle"))
    with pytest.raises(InputError, match="neither a crontab line"):
        add_source(db, SourceConfig(name="x", kind="jsonl", schedule="sometimes"))
    with pytest.raises(InputError, match="cannot carry anything back"):
        add_source(db, SourceConfig(name="x", kind="jsonl", write_back=True))
    add_source(db, SourceConfig(name="x", kind="jsonl", options={"path": "/a"}))
    with pytest.raises(InputError, match="exists already"):
        add_source(db, SourceConfig(name="x", kind="jsonl"))
    remove_source(db, "x")
    with pytest.raises(NotFoundError):
        get_source(db, "x")


def test_jsonl_source_full_pulls_detect_deleted_lines(db: Database, tmp_path: Path) -> None:
    path = tmp_path / "agent.jsonl"
    old = make_record(memory_id="old", subject="user:1", fact="Uses npm")
    new = make_record(memory_id="new", subject="user:1", fact="Uses pnpm", supersedes="old")
    other = make_record(memory_id="x", subject="user:2", fact="Likes jazz")
    write_jsonl(path, [old, new, other])
    add_source(db, SourceConfig(name="notes", kind="jsonl", options={"path": str(path)}))
    first = sync_source(db, "notes")
    assert first.status == "completed" and first.imported["inserted"] == 3
    with db.session() as session:
        by_id = {m.memory_id: m for m in session.scalars(select(Memory))}
    head = by_id[memory_id_for("notes", "new")]
    assert head.supersedes == memory_id_for("notes", "old")
    assert by_id[memory_id_for("notes", "old")].status == "superseded"
    write_jsonl(path, [old, new])
    second = sync_source(db, "notes")
    assert second.mode == "full" and second.gone == 1
    with db.session() as session:
        gone = session.get(Memory, memory_id_for("notes", "x"))
    assert gone is not None and gone.status == "deleted"


def test_jsonl_line_without_id_blocks_deletion_detection(db: Database, tmp_path: Path) -> None:
    path = tmp_path / "agent.jsonl"
    write_jsonl(path, [make_record(memory_id="a"), make_record(memory_id="b")])
    add_source(db, SourceConfig(name="notes", kind="jsonl", options={"path": str(path)}))
    sync_source(db, "notes")
    write_jsonl(path, [make_record(memory_id="a"), "{not json"])
    report = sync_source(db, "notes")
    assert report.status == "completed_with_errors" and not report.deletions_checked
    assert report.gone == 0


# -- the configuration file -------------------------------------------------------------------


def _toml(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "memaudit.toml"
    path.write_text(body, encoding="utf-8")
    return path


def test_sources_declared_in_the_config_file(db_url: str, tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "m.jsonl", [make_record(memory_id="a")])
    config = _toml(
        tmp_path,
        f'database_url = "{db_url}"\n\n[sources.notes]\nkind = "jsonl"\nschedule = "every 5m"\n'
        f'options = {{ path = "{data}" }}\n',
    )
    settings = load_settings(config)
    db = Database(settings)
    db.upgrade()
    try:
        (info,) = list_sources(db)
        assert (info.config.name, info.origin, info.config.schedule) == (
            "notes",
            "config",
            "every 5m",
        )
        assert sync_source(db, "notes").imported["inserted"] == 1
        with pytest.raises(InputError, match="declared in the config file"):
            add_source(db, SourceConfig(name="notes", kind="jsonl"))
    finally:
        db.dispose()


def test_a_secret_in_clear_in_the_config_file_is_refused(tmp_path: Path) -> None:
    config = _toml(
        tmp_path,
        '[sources.shop]\nkind = "sql-table"\n'
        f'options = {{ url = "postgresql://u:{PASSWORD}@h/d" }}\n',
    )
    settings = load_settings(config)
    db = Database(settings, url=f"sqlite:///{tmp_path / 's.db'}")
    db.upgrade()
    try:
        with pytest.raises(ConfigError) as err:
            list_sources(db)
        assert PASSWORD not in str(err.value) and "password in clear" in str(err.value)
    finally:
        db.dispose()


# -- the CLI --------------------------------------------------------------------------------


def _app_table(path: Path) -> None:
    engine = create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "CREATE TABLE facts (id INTEGER PRIMARY KEY, uid TEXT, txt TEXT, at TEXT, st TEXT)"
        )
        conn.exec_driver_sql(
            "INSERT INTO facts VALUES (1, '42', 'Prefers tea', '2026-01-01 10:00:00', 'on'), "
            "(2, '42', 'Lives near the river', '2026-01-01 11:00:00', 'on'), "
            "(3, '7', 'Plays chess', '2026-01-01 12:00:00', 'on')"
        )
    engine.dispose()


def test_cli_add_list_test_sync_actions_remove(run_cli: Any, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    app = tmp_path / "app.db"
    _app_table(app)
    mapping = tmp_path / "mapping.yaml"
    mapping.write_text(
        yaml.safe_dump(
            {
                "table": "facts",
                "columns": {
                    "id": "id",
                    "subject": "uid",
                    "text": "txt",
                    "updated_at": "at",
                    "status": "st",
                },
                "status_values": {"on": "active", "off": "quarantined"},
            }
        ),
        encoding="utf-8",
    )
    assert run_cli("--database-url", url, "init").code == 0
    refused = run_cli(
        "--database-url", url, "sources", "add", "bad", "--kind", "sql-table",
        "--option", f"url=postgresql://u:{PASSWORD}@h/db",
    )  # fmt: skip
    assert refused.code == 2 and "password in clear" in refused.err
    assert PASSWORD not in refused.out + refused.err
    added = run_cli(
        "--database-url", url, "sources", "add", "app", "--kind", "sql-table",
        "--option", f"url=sqlite:///{app}", "--mapping", str(mapping),
        "--schedule", "every 10m", "--write-back",
    )  # fmt: skip
    assert added.code == 0, added.err
    listed = run_cli("--database-url", url, "sources", "list", "--format", "json")
    (info,) = json.loads(listed.out)
    assert info["name"] == "app" and info["write_back"] and info["schedule"] == "every 10m"
    assert info["options"]["mapping"]["table"] == "facts"
    tested = run_cli("--database-url", url, "sources", "test", "app")
    assert tested.code == 0, tested.err
    counts = json.loads(tested.out)
    assert counts["rows"] == 3 and counts["subjects"] == 2 and counts["ok"] is True
    synced = run_cli("--database-url", url, "sources", "sync", "--json")
    assert synced.code == 0, synced.err
    report = json.loads(synced.out)
    assert report["sources"][0]["imported"]["inserted"] == 3
    text_run = run_cli("--database-url", url, "sources", "sync", "app")
    assert "incremental pull of 0 items" in text_run.out
    mid = memory_id_for("app", "2")
    assert run_cli("--database-url", url, "memories", "quarantine", mid, "--by", "rev").code == 0
    pending = json.loads(run_cli("--database-url", url, "sources", "actions").out)
    assert [(a["action"], a["status"]) for a in pending] == [("quarantine", "pending")]
    assert "external_id" not in pending[0] and "subject" not in pending[0]
    assert run_cli("--database-url", url, "sources", "sync").code == 0
    engine = create_engine(f"sqlite:///{app}")
    with engine.connect() as conn:
        states: dict[int, str] = dict(conn.exec_driver_sql("SELECT id, st FROM facts").all())
    engine.dispose()
    assert states == {1: "on", 2: "off", 3: "on"}
    done = json.loads(run_cli("--database-url", url, "sources", "actions", "--status", "done").out)
    assert len(done) == 1
    assert run_cli("--database-url", url, "sources", "remove", "app").code == 0
    assert (
        json.loads(run_cli("--database-url", url, "sources", "list", "--format", "json").out) == []
    )
    missing = run_cli("--database-url", url, "sources", "sync", "app")
    assert missing.code == 2 and "no source named 'app'" in missing.err
