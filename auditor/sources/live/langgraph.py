"""LangGraph long-term memory stores: ``SqliteStore`` and ``PostgresStore``, audited in place.

Both stores keep items in ``store(prefix, key, value, created_at, updated_at, expires_at,
ttl_minutes)`` (``prefix`` is the namespace tuple joined with ``.``; ``value`` is JSON text on
SQLite, ``jsonb`` on PostgreSQL) and, when the app configured an embedding index,
``store_vectors(prefix, key, field_name, embedding, ...)``. What they hide:

* **orphan vectors**: SQLite runs with foreign keys off, so ``store.delete`` leaves the
  deleted item's embeddings behind (PostgreSQL enforces the cascade). Each orphan row is
  yielded as a ``deleted`` memory with ``orphan_vector = true`` and
  ``retained_in = "langgraph.store_vectors"``; the fact is a placeholder naming the field
  (the tables keep no text beside the vector);
* **expired but unswept** items: expired rows are served until ``sweep_ttl()`` runs
  (PostgresStore hides them only with ``omit_expired``). They are yielded ``active`` with
  their ``expires_at`` and ``expired_unswept = true``. SQLite holds ``expires_at`` in two
  formats (Python's adapter on ``put``: ``2026-05-01 10:00:00.123456+00:00``;
  ``DATETIME()`` on a TTL refresh: ``2026-05-01 10:00:00``): both are read.

Reading never needs LangGraph: the tables are read with SQLAlchemy (SQLite through a
read-only ``file:...?mode=ro`` URI connection, so a running app is not disturbed).
Write-back needs the ``sources`` extra (``pip install 'memaudit[sources]'``):

* ``quarantine``: the item is moved through the store's API into the namespace
  ``(<quarantine_namespace>, *original namespace)``: ``store.put`` of
  ``{"__memaudit_quarantine__": {...}, "value": <original value>}`` with ``index=False``,
  then ``store.delete`` of the original. Its embedding rows are re-pointed at the copy
  (one ``UPDATE store_vectors``: the API has no call for it), so nothing is re-embedded
  and nothing is orphaned. The app's agent, which reads its own namespaces, no longer sees
  it; a search over the whole store (an empty namespace prefix) still would.
* ``restore``: the reverse (the original value back at its key, the TTL it had, its
  vectors re-pointed, the copy deleted). If the app wrote the key again meanwhile, its
  newer item wins and the quarantined copy is dropped.
* ``erase_subject``: deletes the subject's items (quarantined copies included) and every
  vector row of the subject's namespaces (orphans included) in one transaction, then
  compacts (SQLite: WAL checkpoint ``TRUNCATE``, ``VACUUM``, checkpoint again; PostgreSQL:
  ``VACUUM (ANALYZE)`` of both tables) and verifies by searching every table and column
  of the database (and, on SQLite, the bytes of the file, its WAL and journal) for the
  subject id, the subject's namespace strings and the identifying values given.
  Erasure does not rely on ``PRAGMA secure_delete`` (it sets it, but the rebuild is what
  removes the text from free pages).

Options (``[[sources]] options``):

``path`` (SQLite) / ``url`` and ``schema`` (PostgreSQL)
    Where the store is. ``url`` is a SQLAlchemy or libpq URL; ``schema`` sets the
    search path of every connection.
``subject_from``
    How the memaudit subject derives from the namespace: ``{element = N, prefix =
    "user:"}`` (namespace element ``N``, negative counts from the end, with ``prefix``
    prepended), or an integer ``N`` (same, prefix ``user:``). Default: the first element
    that already looks like a subject (``user:42``); an item without one is reported as
    unreadable.
``text_field``
    Dotted path of the memory text in the value (``content``, ``memory.text``). Default:
    the first text under ``content``, ``text``, ``memory`` or ``data`` (one level of
    nesting), else the whole value as JSON.
``namespace``
    memaudit namespace of every item. Default: the LangGraph namespace without the
    subject element, joined with ``.`` (``("memories", "42")`` -> ``memories``).
``source_type`` (default ``inferred``), ``kind`` (default ``semantic``)
    Provenance and kind of every item (the value cannot claim a trust tier).
``quarantine_namespace``
    First namespace element of quarantined copies (default ``memaudit_quarantine``).

The connectors' code is split by job; this module has the two dialects (the engine, the
store API object, compaction, the files to search):

* :mod:`auditor.sources.live.langgraph_base`: what both share, :class:`_LangGraphConnector`
  (options, tables, records, the pull, write-back, the erasure's deletes and verification);
* :mod:`auditor.sources.live.langgraph_values`: external ids, namespaces, timestamps,
  values and the subject rule.
"""

from __future__ import annotations

import contextlib
import re
import sqlite3
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import URL, Connection, Engine, create_engine, make_url, table, text
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.pool import NullPool

from auditor.config import Settings
from auditor.errors import InputError
from auditor.sources.live.base import ErasureResult, SourceConfig
from auditor.sources.live.langgraph_base import _LangGraphConnector

__all__ = ["LangGraphPostgresConnector", "LangGraphSqliteConnector"]

_SCHEMA = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
_BUSY_SECONDS = 30.0
_CHECKPOINT_TRIES = 10


# -- SQLite -----------------------------------------------------------------------------


class LangGraphSqliteConnector(_LangGraphConnector):
    """A LangGraph ``SqliteStore`` file (option ``path``)."""

    kind = "langgraph-sqlite"
    _kind_options = frozenset({"path"})

    def __init__(self, config: SourceConfig, settings: Settings) -> None:
        super().__init__(config, settings)
        raw = config.options.get("path")
        if not isinstance(raw, str) or not raw.strip():
            raise InputError(f"source {config.name!r} ({self.kind}): option 'path' is required")
        self.path = Path(raw).expanduser()

    def _check_file(self) -> Path:
        path = self.path.resolve()
        if not path.is_file():
            raise InputError(f"source {self.config.name!r}: {self.path}: no such file")
        return path

    def _make_engine(self, *, writable: bool) -> Engine:
        path = self._check_file()
        if writable:

            def creator() -> sqlite3.Connection:
                return sqlite3.connect(path, timeout=_BUSY_SECONDS, check_same_thread=False)

        else:
            uri = f"file:{quote(str(path))}?mode=ro"

            def creator() -> sqlite3.Connection:
                return sqlite3.connect(
                    uri, uri=True, timeout=_BUSY_SECONDS, check_same_thread=False
                )

        return create_engine("sqlite+pysqlite://", creator=creator, poolclass=NullPool)

    def _time_param(self, value: datetime) -> Any:
        # CURRENT_TIMESTAMP text: 'YYYY-MM-DD HH:MM:SS' (UTC), compared as text
        return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")

    @contextlib.contextmanager
    def _open_store(self) -> Iterator[Any]:
        module = self._require_langgraph("langgraph.store.sqlite")
        path = self._check_file()
        conn = sqlite3.connect(
            path, timeout=_BUSY_SECONDS, check_same_thread=False, isolation_level=None
        )
        try:
            store = module.SqliteStore(conn)
            # the app owns the schema: never migrate its file from here
            store.is_setup = True
            yield store
        finally:
            conn.close()

    def _before_delete(self, conn: Connection) -> None:
        conn.exec_driver_sql("PRAGMA secure_delete = ON")

    def _files(self) -> list[Path]:
        path = self.path.resolve()
        return [path, *(path.with_name(path.name + s) for s in ("-wal", "-journal"))]

    def _compact(self, engine: Engine, result: ErasureResult) -> None:
        with engine.connect() as raw:
            conn = raw.execution_options(isolation_level="AUTOCOMMIT")
            mode = str(conn.exec_driver_sql("PRAGMA journal_mode").scalar() or "").lower()
            try:
                if mode == "wal":
                    self._checkpoint(conn, result, final=False)
                conn.exec_driver_sql("VACUUM")
                if mode == "wal":
                    self._checkpoint(conn, result, final=True)
            except SQLAlchemyError as exc:
                result.remaining.append(
                    f"compaction failed ({type(exc).__name__}): deleted text may remain in "
                    "free pages"
                )
                return
        result.notes.append(
            "compacted: VACUUM" + (" with WAL checkpoints (TRUNCATE)" if mode == "wal" else "")
        )

    def _checkpoint(self, conn: Connection, result: ErasureResult, *, final: bool) -> None:
        for attempt in range(_CHECKPOINT_TRIES):
            row = conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").first()
            if row is not None and int(row[0]) == 0:
                return
            time.sleep(0.05 * (attempt + 1))
        if final:
            result.remaining.append(
                "WAL not truncated: another connection holds a read transaction; "
                "the WAL may keep deleted text until its next checkpoint"
            )


# -- PostgreSQL -------------------------------------------------------------------------


class LangGraphPostgresConnector(_LangGraphConnector):
    """A LangGraph ``PostgresStore`` (options ``url`` and, optionally, ``schema``)."""

    kind = "langgraph-postgres"
    _kind_options = frozenset({"url", "schema"})

    def __init__(self, config: SourceConfig, settings: Settings) -> None:
        super().__init__(config, settings)
        raw = config.options.get("url")
        if not isinstance(raw, str) or not raw.strip():
            raise InputError(f"source {config.name!r} ({self.kind}): option 'url' is required")
        schema = config.options.get("schema")
        if schema is not None and (not isinstance(schema, str) or not _SCHEMA.match(schema)):
            raise InputError(
                f"source {config.name!r}: schema must be a plain identifier (letters, digits, _)"
            )
        self.pg_schema: str | None = schema
        try:
            url = make_url(raw.strip())
        except ArgumentError:
            raise InputError(
                f"source {config.name!r}: url is not a PostgreSQL URL (postgresql://user@host/db)"
            ) from None
        if url.get_backend_name() != "postgresql":
            raise InputError(f"source {config.name!r}: url is not a PostgreSQL URL")
        if schema is not None:
            options = url.query.get("options")
            existing = options if isinstance(options, str) else " ".join(options or ())
            url = url.update_query_dict({"options": f"{existing} -csearch_path={schema}".strip()})
        self._url: URL = url

    def _make_engine(self, *, writable: bool) -> Engine:
        url = self._url.set(drivername="postgresql+psycopg")
        engine = create_engine(url, poolclass=NullPool)
        if not writable:
            engine = engine.execution_options(postgresql_readonly=True)
        return engine

    def _conninfo(self) -> str:
        return self._url.set(drivername="postgresql").render_as_string(hide_password=False)

    @contextlib.contextmanager
    def _open_store(self) -> Iterator[Any]:
        module = self._require_langgraph("langgraph.store.postgres")
        with module.PostgresStore.from_conn_string(self._conninfo()) as store:
            yield store

    def _compact(self, engine: Engine, result: ErasureResult) -> None:
        try:
            with engine.connect() as raw:
                conn = raw.execution_options(isolation_level="AUTOCOMMIT")
                _store, vectors, _names = self._tables(conn)
                preparer = conn.dialect.identifier_preparer
                for name in ["store"] + (["store_vectors"] if vectors is not None else []):
                    quoted = preparer.format_table(table(name))
                    conn.execute(text(f"VACUUM (ANALYZE) {quoted}"))
        except SQLAlchemyError as exc:
            result.notes.append(
                f"VACUUM failed ({type(exc).__name__}): dead rows stay until autovacuum"
            )
            return
        result.notes.append(
            "compacted: VACUUM (ANALYZE) store tables; PostgreSQL may keep deleted rows in "
            "its WAL, archives and the data files' free space until overwritten"
        )
