"""Settings: defaults, environment, TOML file, secret files; documented in the README."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from auditor.config import DEFAULT_DATABASE_URL, Settings, load_settings, tier_rank
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
