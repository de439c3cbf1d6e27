"""Settings: defaults, environment, TOML file, secret files; documented in the README."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from auditor.config import (
    DEFAULT_DATABASE_URL,
    Settings,
    _sqlite_database,
    load_settings,
    tier_rank,
)
from auditor.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]


def test_defaults() -> None:
    s = load_settings()
    assert s.database_url == DEFAULT_DATABASE_URL
    assert s.tier_for("explicit_statement") == "user"
    assert s.tier_for("external_content") == "external"
    assert s.tier_for(None) == "external" and s.tier_for("brand-new-type") == "external"
    assert tier_rank("system") > tier_rank("user") > tier_rank("agent") > tier_rank("external")


def test_environment_and_nested_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMAUDIT_DATABASE_URL", "sqlite:///x.db")
    monkeypatch.setenv("MEMAUDIT_TRUST_POLICY__TOOL_OUTPUT", "agent")
    s = load_settings()
    assert s.database_url == "sqlite:///x.db" and s.tier_for("tool_output") == "agent"
    assert s.tier_for("explicit_statement") == "user"  # the rest of the policy is kept


def test_toml_file_and_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "memaudit.toml"
    cfg.write_text(
        'database_url = "sqlite:///from-file.db"\nimport_batch_size = 50\n'
        '[trust_policy]\ninferred = "user"\n'
    )
    s = load_settings(cfg)
    assert (s.database_url, s.import_batch_size, s.tier_for("inferred")) == (
        "sqlite:///from-file.db",
        50,
        "user",
    )
    monkeypatch.setenv("MEMAUDIT_IMPORT_BATCH_SIZE", "70")
    assert load_settings(cfg).import_batch_size == 70  # env beats the file
    assert load_settings(cfg, import_batch_size=90).import_batch_size == 90


def test_secret_from_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "memaudit_audit_hmac_key").write_text("from-a-secret-file")
    monkeypatch.setenv("MEMAUDIT_SECRETS_DIR", str(tmp_path))
    s = load_settings()
    assert s.audit_hmac_key is not None
    assert s.audit_hmac_key.get_secret_value() == "from-a-secret-file"
    assert "from-a-secret-file" not in repr(s)
    monkeypatch.setenv("MEMAUDIT_SECRETS_DIR", str(tmp_path / "missing"))
    with pytest.raises(ConfigError, match="not a folder"):
        load_settings()


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"import_batch_size": 0}, "import_batch_size"),
        ({"log_level": "loud"}, "log_level"),
        ({"trust_policy": {"inferred": "godlike"}}, "trust_policy"),
        ({"not_a_setting": 1}, "not_a_setting"),
    ],
)
def test_invalid_values_name_the_setting(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        load_settings(**kwargs)


def test_secrets_are_refused_in_the_config_file(tmp_path: Path) -> None:
    cfg = tmp_path / "memaudit.toml"
    cfg.write_text('audit_hmac_key = "oops"\n')
    with pytest.raises(ConfigError, match="secrets are read only from the environment"):
        load_settings(cfg)
    cfg.write_text("not [valid toml\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(cfg)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="config file not found"):
        load_settings(tmp_path / "nope.toml")


def test_every_setting_is_documented_in_the_readme() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"`MEMAUDIT_([A-Z0-9_]+)`", readme))
    for name in Settings.model_fields:
        assert name.upper() in documented, f"MEMAUDIT_{name.upper()} is not in the README"


def _sqlalchemys_reading(url: str) -> str | None:
    """The SQLite file of a URL as SQLAlchemy reads it (what config used to call)."""
    from sqlalchemy import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError:
        return None
    database = parsed.database
    if parsed.get_backend_name() != "sqlite" or not database or database == ":memory:":
        return None
    return None if database.startswith("file:") else database


def _reading(read: Callable[[str], str | None], url: str) -> object:
    try:
        return read(url)
    except ValueError as exc:  # a port that is not a number
        return ("ValueError", type(exc))


URLS = [
    "sqlite:///memaudit.db",
    "sqlite:////srv/memaudit/store.db",
    "sqlite+pysqlite:///a%20b.db",
    "sqlite:///~/stores/x.db",
    "sqlite://",
    "sqlite:///",
    "sqlite:///:memory:",
    "sqlite:///%3Amemory%3A",
    "sqlite:///file:x.db?mode=ro&uri=true",
    "sqlite:///x.db?timeout=5",
    "sqlite://user:pw@host:5/x.db",
    "sqlite://host:port/x.db",
    "sqlite://[::1]/x.db",
    "SQLITE:///x.db",
    "sqlite:/x.db",
    "sqlite:x.db",
    "postgresql+psycopg://postgres@127.0.0.1:5432/test",
    "mysql://u:p@h/db",
    "not a url",
    "",
]


@pytest.mark.parametrize("url", URLS)
def test_settings_read_a_sqlite_url_as_sqlalchemy_does(url: str) -> None:
    assert _reading(_sqlite_database, url) == _reading(_sqlalchemys_reading, url)


@hypothesis_settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet="sqlite+pysq:/@[]?&=%3A.~xdb:memory1 ", max_size=40).map(
        lambda tail: "sqlite" + tail
    )
    | st.text(max_size=40)
)
def test_any_url_is_read_as_sqlalchemy_reads_it(url: str) -> None:
    assert _reading(_sqlite_database, url) == _reading(_sqlalchemys_reading, url)


def test_reading_the_settings_imports_no_sqlalchemy(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from auditor.config import load_settings, sqlite_key_file\n"
        f"s = load_settings(database_url='sqlite:///{tmp_path / 'x.db'}')\n"
        "s.audit_key(); assert sqlite_key_file(s.database_url) is not None\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sqlalchemy'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[]"
