"""The registry of live sources: configuration, secret references, opening a connector.

Sources are stored in the ``sources`` table (``memaudit sources add``) or declared in the
TOML settings file as ``[sources.NAME]`` tables (read-only: change the file to change
them). A source's options are JSON for its kind (``docs/sources.md``); they never hold a
secret in clear. A secret is referred to as ``${ENV_VAR}`` (an environment variable) or
``${secret:NAME}`` (the file ``MEMAUDIT_SECRETS_DIR/NAME``); references are resolved only
by :func:`connect`, and resolved options are handed to the connector and nowhere else:
they are never stored, logged, printed or put in an error message.

:func:`check_options` refuses, at ``add`` time, a URL with a literal password
(``postgresql://u:pw@host/db``, or ``?password=pw``) and a literal value under a key that
names a secret (``password``, ``api_key``, ``token``, ...).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

import structlog
from sqlalchemy import delete, func, select, update

from auditor.config import Settings
from auditor.errors import ConfigError, InputError, NotFoundError
from auditor.lifecycle import audit_log
from auditor.lifecycle.audit_key import audit_key
from auditor.schedules import parse_schedule
from auditor.sources.live import KINDS, open_connector
from auditor.sources.live.base import Connector, SourceConfig, valid_source_name
from auditor.store.db import Database
from auditor.store.models import SourceAction, SourceRow, SourceWatermark

__all__ = [
    "SourceInfo",
    "add_source",
    "check_options",
    "config_sources",
    "connect",
    "get_source",
    "list_sources",
    "remove_source",
    "resolve_options",
    "set_enabled",
    "watermark_name",
]

log = structlog.get_logger(__name__)

#: ``${ENV_VAR}`` or ``${secret:NAME}``.
_REF = re.compile(
    r"\$\{(?:secret:(?P<file>[A-Za-z0-9_.-]{1,128})|(?P<env>[A-Za-z_][A-Za-z0-9_]{0,127}))\}"
)
#: Option keys whose values are secrets (compared lower-case, ``-`` read as ``_``).
_SECRET_KEY = re.compile(
    r"(^|_)(password|passwd|pwd|secret|token|api_?key|apikey|access_?key|private_?key|"
    r"credentials?|auth|authorization|client_secret|dsn_password)($|_)"
)
_MAX_OPTIONS_BYTES = 1_000_000


def watermark_name(name: str) -> str:
    """The ``source_watermarks`` row that holds a source's sync cursor."""
    return f"source:{name}"


@dataclass(frozen=True)
class SourceInfo:
    """A configured source as listed (options are not resolved).

    Attributes:
        config: name, kind, options (with ``${...}`` references), schedule, write-back.
        enabled: whether the daemon syncs it.
        origin: ``database`` (``memaudit sources add``) or ``config`` (the TOML file).
        created_at, updated_at: when it was added or last changed (database sources).
        last_sync: what the last sync recorded (time, status, counts), or None.
    """

    config: SourceConfig
    enabled: bool = True
    origin: str = "database"
    created_at: datetime | None = None
    updated_at: datetime | None = None
    last_sync: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (options keep their references; no secret is resolved)."""
        return {
            "name": self.config.name,
            "kind": self.config.kind,
            "schedule": self.config.schedule,
            "write_back": self.config.write_back,
            "enabled": self.enabled,
            "origin": self.origin,
            "options": self.config.options,
            "created_at": self.created_at.isoformat() if self.created_at else None,
            "updated_at": self.updated_at.isoformat() if self.updated_at else None,
            "last_sync": self.last_sync or None,
        }


# -- secrets ------------------------------------------------------------------------------


def _only_reference(value: str) -> bool:
    return _REF.fullmatch(value.strip()) is not None


def _secret_key(key: str) -> bool:
    return _SECRET_KEY.search(key.lower().replace("-", "_")) is not None


def _check_url(source: str, where: str, value: str) -> None:
    if "://" not in value:
        return
    try:
        parts = urlsplit(value.strip())
        password = parts.password
        query = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:
        return  # not a URL after all
    if password and not _only_reference(password):
        raise InputError(
            f"source {source!r}: option {where} holds a URL with a password in clear; write "
            "the password as ${ENV_VAR} or ${secret:NAME} (a file in MEMAUDIT_SECRETS_DIR)"
        )
    for key, item in query:
        if _secret_key(key) and item and not _only_reference(item):
            raise InputError(
                f"source {source!r}: option {where} holds a URL whose {key!r} parameter is a "
                "secret in clear; write it as ${ENV_VAR} or ${secret:NAME}"
            )


def check_options(source: str, options: Mapping[str, Any]) -> None:
    """Refuse options that hold a secret in clear.

    Args:
        source: the source's name (for the message).
        options: the options as they would be stored.

    Raises:
        InputError: naming the option (never its value).
    """

    def walk(value: Any, where: str, key: str) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                walk(v, f"{where}.{k}" if where else str(k), str(k))
        elif isinstance(value, list | tuple):
            for i, v in enumerate(value):
                walk(v, f"{where}[{i}]", key)
        elif isinstance(value, str):
            if key and _secret_key(key) and value.strip() and not _only_reference(value):
                raise InputError(
                    f"source {source!r}: option {where} is a secret in clear; write it as "
                    "${ENV_VAR} or ${secret:NAME} (a file in MEMAUDIT_SECRETS_DIR)"
                )
            _check_url(source, where, value)

    walk(options, "", "")


def _read_reference(source: str, match: re.Match[str], secrets_dir: Path | None) -> str:
    env = match.group("env")
    if env is not None:
        value = os.environ.get(env)
        if value is None:
            raise ConfigError(f"source {source!r}: environment variable {env} is not set")
        return value
    name = match.group("file")
    if secrets_dir is None:
        raise ConfigError(
            f"source {source!r}: refers to secret {name!r} but MEMAUDIT_SECRETS_DIR is not set"
        )
    if name in (".", "..") or "/" in name:
        raise ConfigError(f"source {source!r}: invalid secret name {name!r}")
    path = secrets_dir / name
    try:
        return path.read_text(encoding="utf-8").rstrip("\r\n")
    except OSError as exc:
        raise ConfigError(
            f"source {source!r}: cannot read secret {name!r} from MEMAUDIT_SECRETS_DIR: "
            f"{exc.strerror or type(exc).__name__}"
        ) from None


def _resolve_string(source: str, value: str, secrets_dir: Path | None) -> str:
    if "${" not in value:
        return value

    def plain(text: str) -> str:
        return _REF.sub(lambda m: _read_reference(source, m, secrets_dir), text)

    def quoted(text: str) -> str:
        return _REF.sub(lambda m: quote(_read_reference(source, m, secrets_dir), safe=""), text)

    scheme, sep, rest = value.partition("://")
    if not sep:
        return plain(value)
    authority, slash, tail = rest.partition("/")
    userinfo, at, host = authority.rpartition("@")
    if not at:
        return plain(value)
    # a secret inside the user:password part of a URL is percent-encoded ('@', '/', ':')
    return f"{plain(scheme)}://{quoted(userinfo)}@{plain(host)}{slash}{plain(tail)}"


def resolve_options(
    source: str, options: Mapping[str, Any], secrets_dir: Path | str | None = None
) -> dict[str, Any]:
    """Options with every ``${ENV_VAR}`` and ``${secret:NAME}`` replaced by its value.

    Args:
        source: the source's name (for messages).
        options: the stored options.
        secrets_dir: where ``${secret:NAME}`` files are (default ``MEMAUDIT_SECRETS_DIR``).

    Raises:
        ConfigError: a variable is not set or a secret file cannot be read (named; never
            its value).
    """
    folder = secrets_dir if secrets_dir is not None else os.environ.get("MEMAUDIT_SECRETS_DIR")
    base = Path(folder) if folder else None

    def walk(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [walk(v) for v in value]
        if isinstance(value, str):
            return _resolve_string(source, value, base)
        return value

    resolved: dict[str, Any] = walk(dict(options))
    return resolved


# -- validation ---------------------------------------------------------------------------


def _connector_class(kind: str) -> type[Connector] | None:
    module_name, _, class_name = KINDS[kind].partition(":")
    try:
        cls: type[Connector] = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError):
        return None  # checked again when the source is opened
    return cls


def _validate(config: SourceConfig) -> SourceConfig:
    if not valid_source_name(config.name):
        raise InputError(
            f"invalid source name {config.name!r}: lower-case letters, digits, '_' and '-', "
            "1 to 64 characters, starting with a letter or digit"
        )
    if config.kind not in KINDS:
        raise InputError(
            f"source {config.name!r}: unknown kind {config.kind!r}; kinds: {', '.join(KINDS)}"
        )
    if not isinstance(config.options, Mapping):
        raise InputError(f"source {config.name!r}: options must be a mapping")
    try:
        size = len(json.dumps(config.options, sort_keys=True))
    except (TypeError, ValueError):
        raise InputError(f"source {config.name!r}: options must be JSON values") from None
    if size > _MAX_OPTIONS_BYTES:
        raise InputError(f"source {config.name!r}: options are over {_MAX_OPTIONS_BYTES:,} bytes")
    try:
        parse_schedule(config.schedule, f"source {config.name}")
    except ValueError as exc:
        raise InputError(str(exc)) from None
    check_options(config.name, config.options)
    if config.write_back:
        cls = _connector_class(config.kind)
        if cls is not None and not cls.supports:
            raise InputError(
                f"source {config.name!r}: the {config.kind} kind cannot carry anything back "
                "(no write-back support); add it without --write-back"
            )
    return config


# -- configuration file -------------------------------------------------------------------


def config_sources(settings: Settings) -> dict[str, SourceInfo]:
    """Sources declared in the settings (``[sources.NAME]`` tables of the TOML file).

    Each table holds ``kind``, and optionally ``options`` (a table), ``mapping`` (a path
    to a mapping YAML, read into ``options.mapping``), ``schedule``, ``write_back`` and
    ``enabled``.

    Raises:
        ConfigError: a declared source is invalid (named, with the problem).
    """
    out: dict[str, SourceInfo] = {}
    for name, table in (settings.sources or {}).items():
        if not isinstance(table, Mapping):
            raise ConfigError(f"config: [sources.{name}] must be a table")
        unknown = set(table) - {"kind", "options", "mapping", "schedule", "write_back", "enabled"}
        if unknown:
            raise ConfigError(f"config: [sources.{name}] has unknown keys {sorted(unknown)}")
        options = dict(table.get("options") or {})
        if table.get("mapping"):
            options["mapping"] = load_mapping(Path(str(table["mapping"])))
        try:
            config = _validate(
                SourceConfig(
                    name=str(name),
                    kind=str(table.get("kind", "")),
                    options=options,
                    schedule=str(table.get("schedule", "every 15m")),
                    write_back=bool(table.get("write_back", False)),
                )
            )
        except InputError as exc:
            raise ConfigError(f"config: {exc}") from None
        out[config.name] = SourceInfo(config, bool(table.get("enabled", True)), "config")
    return out


def load_mapping(path: Path) -> dict[str, Any]:
    """Read a mapping YAML file (a SQL table mapping, ...) into a dict.

    Raises:
        InputError: the file cannot be read or is not a YAML mapping.
    """
    from auditor import safe_yaml  # bounded: no aliases, anchors or tags; size and depth

    data = safe_yaml.load_file(path)
    if not isinstance(data, dict):
        raise InputError(f"{path}: a mapping file must hold a YAML mapping")
    return data


# -- the registry ---------------------------------------------------------------------------


def _row_config(row: SourceRow) -> SourceConfig:
    return SourceConfig(
        name=row.name,
        kind=row.kind,
        options=dict(row.options or {}),
        schedule=row.schedule,
        write_back=bool(row.write_back),
    )


def add_source(
    db: Database,
    config: SourceConfig,
    *,
    enabled: bool = True,
    replace: bool = False,
    actor: str = "memaudit",
) -> SourceConfig:
    """Validate a source and store it.

    Args:
        db: the store.
        config: the source (options with ``${...}`` references for secrets).
        enabled: whether the daemon syncs it.
        replace: change an existing source of that name instead of refusing.
        actor: recorded in the audit log (``source.added`` / ``source.changed``).

    Raises:
        InputError: invalid name, kind, schedule or options; a secret in clear; the name
            exists (without ``replace``) or is declared in the config file.
    """
    config = _validate(config)
    if config.name in config_sources(db.settings):
        raise InputError(f"source {config.name!r} is declared in the config file; change it there")
    with db.write() as session:
        row = session.get(SourceRow, config.name)
        if row is not None and not replace:
            raise InputError(f"source {config.name!r} exists already (remove it first)")
        action = "source.changed" if row is not None else "source.added"
        if row is None:
            row = SourceRow(name=config.name)
            session.add(row)
        row.kind = config.kind
        row.options = dict(config.options)
        row.schedule = config.schedule
        row.write_back = config.write_back
        row.enabled = enabled
        session.flush()
        audit_log.append(
            session,
            actor=actor,
            action=action,
            target_type="source",
            target_ids=[config.name],
            details={
                "kind": config.kind,
                "schedule": config.schedule,
                "write_back": config.write_back,
                "enabled": enabled,
            },
            key=audit_key(db.settings),
        )
    log.info("source_added", source=config.name, kind=config.kind, write_back=config.write_back)
    return config


def remove_source(db: Database, name: str, *, actor: str = "memaudit", force: bool = False) -> None:
    """Remove a source (its memories stay in memaudit; its cursor is dropped).

    Args:
        db: the store.
        name: the source.
        actor: recorded in the audit log.
        force: remove even while erase actions for it are pending (they are cancelled).

    Raises:
        NotFoundError: no such source in the database.
        InputError: declared in the config file, or erase actions still wait for it.
    """
    if name in config_sources(db.settings):
        raise InputError(f"source {name!r} is declared in the config file; remove it there")
    with db.write() as session:
        row = session.get(SourceRow, name)
        if row is None:
            raise NotFoundError(f"no source named {name!r}")
        pending = session.scalar(
            select(func.count())
            .select_from(SourceAction)
            .where(
                SourceAction.source == name,
                SourceAction.status == "pending",
                SourceAction.action == "erase",
            )
        )
        if pending and not force:
            raise InputError(
                f"source {name!r} has {pending} erasure(s) waiting to be carried into it; "
                "run `memaudit sources sync` first, or --force to cancel them"
            )
        session.execute(
            update(SourceAction)
            .where(SourceAction.source == name, SourceAction.status == "pending")
            .values(status="cancelled", subject=None, external_id=None, error="source removed")
        )
        session.delete(row)
        session.execute(delete(SourceWatermark).where(SourceWatermark.name == watermark_name(name)))
        audit_log.append(
            session,
            actor=actor,
            action="source.removed",
            target_type="source",
            target_ids=[name],
            details={"pending_actions_cancelled": int(pending or 0)},
            key=audit_key(db.settings),
        )


def set_enabled(db: Database, name: str, enabled: bool, *, actor: str = "memaudit") -> None:
    """Enable or disable a database source's scheduled syncs.

    Raises:
        NotFoundError: no such source in the database.
    """
    with db.write() as session:
        row = session.get(SourceRow, name)
        if row is None:
            raise NotFoundError(f"no source named {name!r}")
        row.enabled = enabled
        audit_log.append(
            session,
            actor=actor,
            action="source.enabled" if enabled else "source.disabled",
            target_type="source",
            target_ids=[name],
            details={},
            key=audit_key(db.settings),
        )


def list_sources(db: Database) -> list[SourceInfo]:
    """Every configured source (database and config file), by name."""
    found = dict(config_sources(db.settings))
    with db.session() as session:
        for row in session.scalars(select(SourceRow)):
            if row.name in found:
                continue  # the config file wins
            found[row.name] = SourceInfo(
                _row_config(row), bool(row.enabled), "database", row.created_at, row.updated_at
            )
        marks = {
            wm.name: dict(wm.details or {})
            for wm in session.scalars(
                select(SourceWatermark).where(SourceWatermark.name.startswith("source:"))
            )
        }
    out = []
    for name in sorted(found):
        info = found[name]
        last = marks.get(watermark_name(name), {})
        out.append(
            SourceInfo(
                info.config, info.enabled, info.origin, info.created_at, info.updated_at, last
            )
        )
    return out


def get_source(db: Database, name: str) -> SourceInfo:
    """One source as configured (options unresolved).

    Raises:
        NotFoundError: no such source.
    """
    declared = config_sources(db.settings).get(name)
    if declared is not None:
        return declared
    with db.session() as session:
        row = session.get(SourceRow, name)
        if row is None:
            raise NotFoundError(f"no source named {name!r}")
        return SourceInfo(
            _row_config(row), bool(row.enabled), "database", row.created_at, row.updated_at
        )


@contextlib.contextmanager
def connect(db: Database, source: str | SourceConfig) -> Iterator[Connector]:
    """Open a source's connector with its secrets resolved; closed at the end of the block.

    Args:
        db: the store (gives the settings).
        source: a source name, or a config (e.g. one not stored yet, for ``test``).

    Raises:
        NotFoundError: no such source.
        ConfigError: a secret reference cannot be resolved.
        InputError: the kind is unknown.
    """
    config = get_source(db, source).config if isinstance(source, str) else source
    resolved = SourceConfig(
        name=config.name,
        kind=config.kind,
        options=resolve_options(config.name, config.options),
        schedule=config.schedule,
        write_back=config.write_back,
    )
    connector = open_connector(resolved, db.settings)
    try:
        yield connector
    finally:
        try:
            connector.close()
        except Exception as exc:  # noqa: BLE001 - closing must not hide the real outcome
            log.warning("source_close_failed", source=config.name, error_type=type(exc).__name__)
