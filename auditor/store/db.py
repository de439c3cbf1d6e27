"""Engine and session factory for SQLite (embedded default) and PostgreSQL (psycopg 3).

SQLite runs in WAL mode with foreign keys on; write transactions start with
``BEGIN IMMEDIATE`` so two writers queue for the lock (up to ``sqlite_busy_timeout_ms``)
instead of failing half-way. PostgreSQL runs at READ COMMITTED; optimistic concurrency
(the ``version`` column) and the locked audit head keep racing writers honest.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, create_engine, event, inspect, make_url, text
from sqlalchemy.engine import URL
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from auditor.config import Settings
from auditor.errors import ConfigError, StoreError
from auditor.store import crypto_events
from auditor.store.crypto import FieldCipher
from auditor.store.subject_keys import SubjectKeyStore, keystore_for_url

if TYPE_CHECKING:
    from alembic.config import Config as AlembicConfig

__all__ = ["HEAD_REVISION", "Database", "redact_url"]

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
#: The newest migration's revision id. :meth:`Database.require_schema` (every command that
#: reads the store) compares the database with it instead of loading Alembic to read the
#: migration scripts; a test keeps it equal to Alembic's head (``tests/test_store.py``).
HEAD_REVISION = "0007"
#: Alembic's bookkeeping table (its default name; ``migrations/env.py`` keeps it).
VERSION_TABLE = "alembic_version"


def redact_url(url: str | URL) -> str:
    """Render a database URL with its password hidden (safe for logs and errors)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unparseable database URL>"


def _parse_url(url: str) -> URL:
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise ConfigError(
            "database URL is not valid; expected e.g. sqlite:///memaudit.db or "
            "postgresql+psycopg://user@host/db"
        ) from None
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise ConfigError(
            f"unsupported database {parsed.get_backend_name()!r}: use sqlite or postgresql"
        )
    if parsed.get_backend_name() == "postgresql" and parsed.get_driver_name() != "psycopg":
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


class Database:
    """One store: an engine plus session factories.

    Args:
        settings: memaudit settings (the URL and SQLite lock timeout come from there).
        url: overrides ``settings.database_url``.
    """

    def __init__(self, settings: Settings, url: str | None = None) -> None:
        self.settings = settings
        self.url = _parse_url(url or settings.database_url)
        self.dialect = self.url.get_backend_name()
        kwargs: dict[str, Any] = {"hide_parameters": True}
        if self.dialect == "sqlite":
            database = self.url.database
            if database and database != ":memory:":
                parent = Path(database).expanduser().resolve().parent
                if not parent.is_dir():
                    raise ConfigError(f"SQLite database folder does not exist: {parent}")
                _create_private(Path(database).expanduser().resolve())
            kwargs["connect_args"] = {
                "timeout": settings.sqlite_busy_timeout_ms / 1000,
                "check_same_thread": False,
            }
        else:
            kwargs["pool_pre_ping"] = True
        try:
            self.engine: Engine = create_engine(self.url, **kwargs)
        except (ArgumentError, NoSuchModuleError) as exc:
            raise ConfigError(f"cannot use database {redact_url(self.url)}: {exc}") from None
        if self.dialect == "sqlite":
            self._setup_sqlite(self.engine, settings.sqlite_busy_timeout_ms)
        crypto_events.install()
        self.keystore: SubjectKeyStore | None = None
        self.cipher: FieldCipher | None = None
        self.refresh_keystore()
        self._read = sessionmaker(self.engine, expire_on_commit=False)
        self._write = sessionmaker(
            self.engine.execution_options(memaudit_write=True), expire_on_commit=False
        )

    @staticmethod
    def _setup_sqlite(engine: Engine, busy_timeout_ms: int) -> None:
        @event.listens_for(engine, "connect")
        def _on_connect(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.isolation_level = None  # we issue BEGIN ourselves
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

        @event.listens_for(engine, "begin")
        def _on_begin(conn: Any) -> None:
            if conn.get_execution_options().get("memaudit_write"):
                conn.exec_driver_sql("BEGIN IMMEDIATE")
            else:
                conn.exec_driver_sql("BEGIN")

    def refresh_keystore(self) -> SubjectKeyStore | None:
        """(Re)load the subject key store and attach its cipher to the engine's dialect.

        Called at start and by ``init`` once it has created a master key. None: encryption
        is off (``MEMAUDIT_ENCRYPTION=off``, or no master key / key folder).
        """
        self.keystore = keystore_for_url(self.url.render_as_string(hide_password=False))
        self.cipher = FieldCipher(self.keystore) if self.keystore is not None else None
        self.engine.dialect.memaudit_cipher = self.cipher  # type: ignore[attr-defined]
        return self.keystore

    @property
    def display_url(self) -> str:
        """The URL with its password hidden."""
        return redact_url(self.url)

    @contextlib.contextmanager
    def session(self) -> Iterator[Session]:
        """A read session; closed (never committed) at the end, objects stay readable."""
        with self._wrap_errors(), self._read() as sess:
            yield sess

    @contextlib.contextmanager
    def write(self) -> Iterator[Session]:
        """A write transaction: committed when the block ends, rolled back on error."""
        with self._wrap_errors(), self._write() as sess, sess.begin():
            yield sess

    @contextlib.contextmanager
    def _wrap_errors(self) -> Iterator[None]:
        try:
            yield
        except DBAPIError as exc:
            if exc.connection_invalidated or _is_connect_error(exc):
                raise StoreError(
                    f"cannot reach database {self.display_url}: {_first_line(exc.orig)}"
                ) from exc
            raise StoreError(f"database error: {_first_line(exc.orig)}") from exc
        except SQLAlchemyError as exc:
            if type(exc).__name__ == "StaleDataError":  # handled by callers first
                raise
            raise StoreError(f"database error: {_first_line(exc)}") from exc

    # -- schema -------------------------------------------------------------------------

    def alembic_config(self) -> AlembicConfig:
        """An Alembic config pointing at the packaged migrations."""
        from alembic.config import Config as AlembicConfig

        cfg = AlembicConfig()
        cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
        # No URL here: migrations run on the connection handed over in ``upgrade``, so the
        # password never sits in a config object (and '%' in URLs needs no escaping).
        return cfg

    def upgrade(self) -> tuple[str | None, str]:
        """Create or migrate the schema to the newest revision.

        Returns:
            (revision before, revision after).
        """
        from alembic import command

        before = self.current_revision()
        self.restrict_files()
        cfg = self.alembic_config()
        with self._wrap_errors(), self.engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, "head")
        after = self.current_revision()
        assert after is not None  # upgrade to head always leaves a revision
        return before, after

    def restrict_files(self) -> list[Path]:
        """Make a SQLite store's files owner-only (0600): the database, its WAL and shared
        memory file hold mirrored personal data. ``init`` fixes stores created before.

        Returns:
            The files whose mode was changed.
        """
        database = self.url.database
        if self.dialect != "sqlite" or not database or database == ":memory:":
            return []
        path = Path(database).expanduser().resolve()
        changed = []
        for item in (path, Path(f"{path}-wal"), Path(f"{path}-shm"), Path(f"{path}-journal")):
            try:
                if item.exists() and item.stat().st_mode & 0o077:
                    os.chmod(item, 0o600)
                    changed.append(item)
            except OSError:
                continue  # not ours to change (another owner): SQLite reports real problems
        return changed

    def current_revision(self) -> str | None:
        """The schema revision of the database (None: not initialised).

        Read from Alembic's version table with SQLAlchemy alone, as Alembic's
        ``MigrationContext.get_current_revision`` reads it, so that the listing commands'
        schema check does not load Alembic.

        Raises:
            StoreError: the version table holds more than one revision (branched
                migrations: memaudit's history is one line).
        """
        with self._wrap_errors(), self.engine.connect() as conn:
            if not inspect(conn).has_table(VERSION_TABLE):
                return None
            rows = conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).all()
        if len(rows) > 1:
            raise StoreError(
                f"database {self.display_url} records {len(rows)} schema revisions in "
                f"{VERSION_TABLE}; expected one"
            )
        return str(rows[0][0]) if rows else None

    def head_revision(self) -> str | None:
        """The newest revision of the packaged migration scripts (read by Alembic)."""
        from alembic.script import ScriptDirectory

        return ScriptDirectory.from_config(self.alembic_config()).get_current_head()

    def require_schema(self) -> None:
        """Raise :class:`StoreError` unless the schema is at the newest revision
        (:data:`HEAD_REVISION`)."""
        current, head = self.current_revision(), HEAD_REVISION
        if current is None:
            raise StoreError(
                f"database {self.display_url} is not initialised: run `memaudit init` first"
            )
        if current != head:
            raise StoreError(
                f"database {self.display_url} is at schema {current}, this memaudit needs "
                f"{head}: run `memaudit init` to migrate"
            )

    def dispose(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()


def _create_private(path: Path) -> None:
    """Create a missing SQLite file as an empty, owner-only (0600) file.

    SQLite creates its ``-wal``, ``-shm`` and journal files with the database file's
    permissions, so they are 0600 too. An existing file is left as it is (``init`` tightens
    it: :meth:`Database.restrict_files`).
    """
    if path.exists():
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return
    except OSError:
        return  # e.g. a read-only folder: connecting reports it with SQLite's own message
    os.close(fd)


def _is_connect_error(exc: DBAPIError) -> bool:
    text = str(exc.orig).lower()
    return any(
        key in text
        for key in (
            "connection refused",
            "could not connect",
            "connection failed",
            "timeout expired",
        )
    )


def _first_line(exc: object) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
