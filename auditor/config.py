"""Settings: environment variables ``MEMAUDIT_*``, an optional TOML file, secret files.

Precedence, highest first: keyword arguments, environment (``MEMAUDIT_DATABASE_URL``;
nested values with ``__``, e.g. ``MEMAUDIT_TRUST_POLICY__TOOL_OUTPUT=agent``), files in
``MEMAUDIT_SECRETS_DIR`` (one file per setting, e.g. ``audit_hmac_key``), the TOML file named
by ``MEMAUDIT_CONFIG`` (or ``--config``), then the defaults below. Every field is documented in
the README's configuration table; a test keeps the two in step.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Literal
from urllib.parse import unquote

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from auditor.errors import ConfigError
from auditor.vocab import TRUST_TIERS, TrustTier

__all__ = ["DEFAULT_DATABASE_URL", "TIERS", "Settings", "load_settings", "tier_rank"]

#: Settings that are secrets: accepted from the environment or a secret file, never from
#: the TOML file (which tends to be committed or shared).
SECRET_SETTINGS = frozenset({"audit_hmac_key"})

DEFAULT_DATABASE_URL = "sqlite:///memaudit.db"
#: The audit HMAC key's file in ``MEMAUDIT_SECRETS_DIR`` (pydantic's secret-file name).
SECRET_FILE_NAME = "memaudit_audit_hmac_key"
#: The audit HMAC key's file beside a SQLite store: ``<database>`` + this suffix.
KEY_FILE_SUFFIX = ".audit-hmac-key"


#: SQLAlchemy's grammar of a URL string (``sqlalchemy.engine.url._parse_url``), so that the
#: settings read a SQLite URL's file without importing SQLAlchemy (every command reads the
#: settings; a listing's start-up is measured). A test keeps the two readings equal.
_URL = re.compile(
    r"""
        (?P<name>[\w\+]+)://
        (?:
            (?P<username>[^:/]*)
            (?::(?P<password>[^@]*))?
        @)?
        (?:
            (?:
                \[(?P<ipv6host>[^/\?]+)\] |
                (?P<ipv4host>[^/:\?]+)
            )?
            (?::(?P<port>[^/\?]*))?
        )?
        (?:/(?P<database>[^\?]*))?
        (?:\?(?P<query>.*))?
    """,
    re.X,
)


def _sqlite_database(database_url: str) -> str | None:
    """The database file named by a SQLite URL (None: another store, in memory, a URI).

    Raises:
        ValueError: the URL's port is not a number (as SQLAlchemy's ``make_url`` does).
    """
    parsed = _URL.match(database_url)
    if parsed is None:
        return None  # SQLAlchemy cannot parse it either
    if parsed["port"]:
        int(parsed["port"])  # SQLAlchemy's reading of the port, and its error
    backend = parsed["name"].split("+", 1)[0]
    database = None if parsed["database"] is None else unquote(parsed["database"])
    if backend != "sqlite" or not database or database == ":memory:":
        return None
    if database.startswith("file:"):
        return None
    return database


def sqlite_path(database_url: str) -> Path | None:
    """The database file of a SQLite URL, resolved (None: another store, in memory, a URI)."""
    database = _sqlite_database(database_url)
    return None if database is None else Path(database).expanduser().resolve()


def sqlite_key_file(database_url: str) -> Path | None:
    """The audit HMAC key file beside a SQLite database file (None for other stores).

    ``memaudit init`` creates it (:mod:`auditor.erasure.keys`); settings read it when no
    key is given (``MEMAUDIT_AUDIT_HMAC_KEY`` or the secrets folder win).
    """
    database = _sqlite_database(database_url)
    if database is None:
        return None
    return Path(database).expanduser().resolve().with_name(Path(database).name + KEY_FILE_SUFFIX)


#: Trust tiers from highest to lowest.
TIERS: tuple[str, ...] = TRUST_TIERS

Tier = TrustTier


def tier_rank(tier: str) -> int:
    """Return a tier's rank: higher is more trusted (system 3 ... external 0)."""
    try:
        return len(TIERS) - 1 - TIERS.index(tier)
    except ValueError:
        raise ConfigError(
            f"unknown trust tier {tier!r}; expected one of {', '.join(TIERS)}"
        ) from None


#: Daemon jobs and their default schedules (see auditor.daemon.runner).
DEFAULT_SCHEDULE: dict[str, str] = {
    "incremental_scan": "every 5m",
    "full_scan": "30 2 * * *",
    "expiry_sweep": "every 15m",
    "retention_purge": "0 3 * * *",
    "audit_verify": "every 1h",
    "judge_batches": "every 10m",
    "erasure_queue": "every 5m",
    "source_sync": "every 1m",
}


def _default_trust_policy() -> dict[str, Tier]:
    return {
        "system": "system",
        "explicit_statement": "user",
        "inferred": "agent",
        "import": "agent",
        "tool_output": "external",
        "external_content": "external",
        "unknown": "external",
    }


class Settings(BaseSettings):
    """memaudit's settings; every field maps to ``MEMAUDIT_<NAME>``."""

    model_config = SettingsConfigDict(
        env_prefix="MEMAUDIT_",
        env_nested_delimiter="__",
        extra="forbid",
    )

    database_url: str = Field(
        DEFAULT_DATABASE_URL,
        description="SQLAlchemy URL of the store: sqlite:///path.db or postgresql+psycopg://...",
    )
    log_level: Literal["debug", "info", "warning", "error"] = Field(
        "warning", description="Lowest log level written (the daemon logs at info)."
    )
    log_format: Literal["auto", "console", "json"] = Field(
        "auto", description="auto: console on a terminal, JSON otherwise (daemons, pipes)."
    )
    trust_policy: dict[str, Tier] = Field(
        default_factory=_default_trust_policy,
        description="Maps source.type to a trust tier; 'unknown' covers missing or new types.",
    )
    import_batch_size: int = Field(
        1000, ge=1, le=100_000, description="Records written per transaction during an import."
    )
    max_fact_bytes: int = Field(
        262_144, ge=1024, description="Largest fact (UTF-8 bytes) an import accepts."
    )
    max_record_bytes: int = Field(
        1_048_576, ge=1024, description="Largest JSONL line or kv/state file entry accepted."
    )
    max_source_file_bytes: int = Field(
        268_435_456,
        ge=1024,
        description="Largest whole-document source (kv, state JSON) read into memory.",
    )
    memoryfield_max_entries: int = Field(
        100_000, ge=1, description="Most entries a Memoryfield zip may hold."
    )
    memoryfield_max_page_bytes: int = Field(
        4_194_304, ge=1024, description="Largest uncompressed Memoryfield page accepted."
    )
    memoryfield_max_total_bytes: int = Field(
        1_073_741_824, ge=1024, description="Largest total uncompressed size of a Memoryfield zip."
    )
    memoryfield_max_ratio: float = Field(
        200.0, gt=1, description="Largest compression ratio of one zip entry (zip-bomb guard)."
    )
    audit_hmac_key: SecretStr | None = Field(
        None,
        description="Optional key: audit events are chained with HMAC-SHA256 instead of SHA-256, "
        "so the chain cannot be rebuilt without it. Env or secret file only.",
    )
    rules_dir: Path | None = Field(
        None, description="The rule pack's folder (default: the rules/ folder shipped with it)."
    )
    schedule: dict[str, str] = Field(
        default_factory=lambda: dict(DEFAULT_SCHEDULE),
        description="Daemon job -> schedule: a crontab line ('30 2 * * *'), 'every 5m' / "
        "'every 1h' / 'every 30s', or 'off'.",
    )
    retention_days: int = Field(
        30, ge=0, description="Days a soft-deleted memory is kept before the purge job erases it."
    )
    leader_poll_seconds: float = Field(
        5.0, gt=0, le=300, description="How often a standby daemon tries to become the leader."
    )
    health_host: str = Field(
        "127.0.0.1", description="Address /healthz and /metrics listen on (0.0.0.0 in containers)."
    )
    sqlite_busy_timeout_ms: int = Field(
        30_000, ge=0, description="How long a SQLite writer waits for the write lock."
    )
    # -- scan shards
    scan_shards: int = Field(
        16,
        ge=1,
        le=1024,
        description=(
            "Shards a scan is split into (by subject hash); replicas and worker processes "
            "share them (several per core, so that the last ones even the loads out)."
        ),
    )
    scan_workers: int = Field(
        0,
        ge=0,
        le=256,
        description=(
            "Worker processes that scan a run's shards in `memaudit scan` and the in-process "
            "daemon (0 = one per CPU core; 1 = scan in the calling process)."
        ),
    )
    task_queue: Literal["auto", "inline", "procrastinate"] = Field(
        "auto",
        description=(
            "Who runs a daemon scan's shards: auto = procrastinate on PostgreSQL, in-process "
            "on SQLite; inline = always in-process."
        ),
    )
    worker_heartbeat_seconds: float = Field(
        10.0, gt=0, description="How often a shard worker tells the queue it is alive."
    )
    worker_stall_seconds: float = Field(
        30.0,
        gt=0,
        description="A worker silent this long is dead: its shard is given to another.",
    )
    # -- accounts and dashboard
    password_min_length: int = Field(
        12,
        ge=8,
        le=1024,
        description="Shortest password a local dashboard account may have (characters).",
    )
    sign_in_max_failures: int = Field(
        5,
        ge=0,
        description="Failed sign-ins in a row that lock an account for a while (0: never lock).",
    )
    sign_in_lockout_seconds: int = Field(
        900, ge=1, description="How long an account stays locked after too many failed sign-ins."
    )
    sign_in_max_concurrent: int = Field(
        2,
        ge=1,
        le=64,
        description="Password checks (argon2, 64 MiB each) one process runs at once; "
        "more wait (see sign_in_wait_seconds).",
    )
    sign_in_wait_seconds: float = Field(
        5.0,
        gt=0,
        le=60,
        description="How long a sign-in waits for a free password check before it is told "
        "'busy, try again'.",
    )
    sign_in_account_rate: int = Field(
        10,
        ge=1,
        description="Sign-in attempts per user name per sign_in_rate_window_seconds (per process).",
    )
    sign_in_global_rate: int = Field(
        120,
        ge=1,
        description="Sign-in attempts for all user names per sign_in_rate_window_seconds "
        "(per process).",
    )
    sign_in_rate_window_seconds: int = Field(
        60, ge=1, description="The sliding window of the sign-in rate limits (seconds)."
    )
    max_note_chars: int = Field(
        2_000,
        ge=100,
        le=100_000,
        description="Longest reason or note (review, erasure, lifecycle) in characters.",
    )
    max_correction_chars: int = Field(
        10_000,
        ge=100,
        le=1_000_000,
        description="Longest correction a user may type for one memory (characters).",
    )
    oidc_issuer: str | None = Field(
        None,
        description="The only OIDC issuer (iss claim) accepted at sign-in (unset: any issuer "
        "the dashboard's OIDC client trusts; accounts are still bound to issuer and sub).",
    )
    oidc_auto_provision: bool = Field(
        False,
        description="Create a 'user' account for an unknown OIDC identity with a verified "
        "e-mail (bound to subject 'user:' + the oidc_subject_claim); never officer or admin.",
    )
    oidc_subject_claim: str = Field(
        "sub",
        min_length=1,
        description="The OIDC claim whose value names an auto-provisioned user's subject.",
    )

    # -- erasure
    erasure_requires_approval: bool = Field(
        False,
        description="An erasure requested by the subject (a user) waits for an officer's "
        "approval (memaudit erasure approve); officers' requests run at once.",
    )
    erasure_vacuum: bool = Field(
        True,
        description="After an erasure or a restore, VACUUM so deleted text leaves the free "
        "pages (SQLite: rebuild the file; PostgreSQL: VACUUM the touched tables).",
    )
    erasure_min_value_chars: int = Field(
        6,
        ge=3,
        le=1000,
        description="Shortest identifying value (a fact, a PII span) an erasure's "
        "verification searches for; shorter ones match unrelated text.",
    )
    erasure_ledger_path: Path | None = Field(
        None,
        description="Append-only file of executed erasures (digests and memory ids only) that "
        "memaudit restore re-applies; default: beside a SQLite store, none for PostgreSQL.",
    )

    # -- live sources (auditor.sources.sync)
    sources: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="Live sources declared in the TOML file as [sources.NAME] tables (kind, "
        "options, mapping, schedule, write_back, enabled); secrets only as ${ENV} or "
        "${secret:NAME}. See docs/sources.md.",
    )
    source_full_sync_hours: float = Field(
        24.0,
        ge=0,
        description="A source whose connector cannot list its ids gets a full pull (which "
        "detects deletions) when its last one is older than this (0: every sync is full).",
    )
    source_action_max_attempts: int = Field(
        5,
        ge=1,
        le=1000,
        description="Tries of a write-back action (quarantine, restore, erase in a source) "
        "before it is marked failed.",
    )

    @field_validator("schedule")
    @classmethod
    def _schedule_ok(cls, value: dict[str, str]) -> dict[str, str]:
        from auditor.schedules import parse_schedule

        merged = dict(DEFAULT_SCHEDULE)
        merged.update(value)
        for job, spec in merged.items():
            if job not in DEFAULT_SCHEDULE:
                raise ValueError(f"unknown job {job!r}; jobs: {', '.join(DEFAULT_SCHEDULE)}")
            parse_schedule(spec, job)
        return merged

    @field_validator("trust_policy")
    @classmethod
    def _policy_has_unknown(cls, value: dict[str, Tier]) -> dict[str, Tier]:
        merged = _default_trust_policy()
        merged.update(value)
        return merged

    @model_validator(mode="after")
    def _key_beside_store(self) -> Settings:
        """No key given: read the one ``memaudit init`` created beside a SQLite store."""
        if self.audit_hmac_key is None:
            path = sqlite_key_file(self.database_url)
            if path is not None and path.is_file():
                key = path.read_text(encoding="utf-8").strip()
                if key:
                    self.audit_hmac_key = SecretStr(key)
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [
            init_settings,
            env_settings,
            file_secret_settings,
        ]
        config_file = os.environ.get("MEMAUDIT_CONFIG")
        if config_file:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=Path(config_file)))
        return tuple(sources)

    def audit_key(self) -> bytes | None:
        """The audit HMAC key (digests of subject ids are keyed with it), if one is set."""
        if self.audit_hmac_key is None:
            return None
        return self.audit_hmac_key.get_secret_value().encode("utf-8")

    def tier_for(self, source_type: str | None) -> str:
        """Return the trust tier the policy gives a ``source.type`` (None: unknown)."""
        if source_type is None:
            return self.trust_policy["unknown"]
        return self.trust_policy.get(source_type, self.trust_policy["unknown"])


def _refuse_secrets_in_file(config_file: str | Path | None) -> None:
    if not config_file:
        return
    import tomllib

    from auditor.limits import MAX_CONFIG_FILE_BYTES

    size = Path(config_file).stat().st_size
    if size > MAX_CONFIG_FILE_BYTES:
        raise ConfigError(
            f"config file {config_file} is {size:,} bytes, over the limit of "
            f"{MAX_CONFIG_FILE_BYTES:,}"
        )
    try:
        with Path(config_file).open("rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {config_file} is not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"config file {config_file} is nested too deeply") from None
    found = sorted(SECRET_SETTINGS & set(data))
    if found:
        raise ConfigError(
            f"config file {config_file} sets {', '.join(found)}: secrets are read only from "
            "the environment (MEMAUDIT_AUDIT_HMAC_KEY) or a secret file (MEMAUDIT_SECRETS_DIR)"
        )


def load_settings(config_file: str | Path | None = None, **overrides: Any) -> Settings:
    """Load settings, turning every validation problem into one :class:`ConfigError`.

    Args:
        config_file: a TOML file; overrides ``MEMAUDIT_CONFIG``.
        **overrides: explicit values (highest precedence); ``None`` values are ignored.

    Raises:
        ConfigError: the file is missing or unreadable, or a value is invalid.
    """
    clean = {k: v for k, v in overrides.items() if v is not None}
    previous = os.environ.get("MEMAUDIT_CONFIG")
    try:
        if config_file is not None:
            path = Path(config_file)
            if not path.is_file():
                raise ConfigError(f"config file not found: {path}")
            os.environ["MEMAUDIT_CONFIG"] = str(path)
        elif previous and not Path(previous).is_file():
            raise ConfigError(f"config file not found: {previous} (from MEMAUDIT_CONFIG)")
        _refuse_secrets_in_file(config_file or os.environ.get("MEMAUDIT_CONFIG"))
        secrets_dir = os.environ.get("MEMAUDIT_SECRETS_DIR") or None
        if secrets_dir is not None and not Path(secrets_dir).is_dir():
            raise ConfigError(f"MEMAUDIT_SECRETS_DIR is not a folder: {secrets_dir}")
        kwargs: dict[str, Any] = {"_secrets_dir": secrets_dir, **clean}
        return Settings(**kwargs)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'settings'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ConfigError(f"invalid settings: {problems}") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read settings: {exc}") from None
    finally:
        if config_file is not None:
            if previous is None:
                os.environ.pop("MEMAUDIT_CONFIG", None)
            else:
                os.environ["MEMAUDIT_CONFIG"] = previous
