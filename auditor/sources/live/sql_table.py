"""The generic SQL-table connector: any application table that holds agent memories.

Options (``memaudit sources add NAME --kind sql-table --option url=... --mapping m.yaml``):

* ``url``: a SQLAlchemy URL (``postgresql+psycopg://app@db/app``, ``sqlite:////data/app.db``);
  its password only as ``${ENV_VAR}`` or ``${secret:NAME}``.
* ``mapping``: the table and its columns (YAML, see ``docs/sources.md``)::

      table: agent_memories          # required
      schema: public                 # optional
      columns:
        id: id                       # required: the row's stable id (the external id)
        subject: user_id             # required: whom the row is about (erasure key)
        text: content                # required: the memory text
        created_at: created_at       # optional columns from here on
        updated_at: updated_at       # incremental pulls (cursor: last updated_at + id)
        expires_at: expires_at
        supersedes: replaces_id      # the id of the row this one replaced
        status: state                # write-back of quarantine / restore needs it
        namespace: app_name
        category: kind
      subject_prefix: "user:"        # memaudit subject = prefix + column value ("" : as is)
      namespace: my-app              # when no namespace column (default: the source name)
      kind: semantic                 # the memaudit kind of every row
      source_type: inferred          # provenance type (trust tier policy), default import
      status_values:                 # column value -> memaudit status
        active: active
        archived: deleted
        hidden: quarantined
      write_back:                    # values written back (default: the first value
        quarantine: hidden           #   mapped to quarantined / active)
        restore: active
      vacuum_after_erase: false      # PostgreSQL: VACUUM the table after an erasure

Guarantees: the table is reflected with SQLAlchemy and every statement is built from it
(bound parameters, quoted identifiers; no SQL text is formatted from values). Pulls run
in read-only transactions (PostgreSQL ``READ ONLY``, SQLite ``query_only``). Write-back
updates only the mapped status column of the given ids; erasure deletes the subject's rows
(SQLite with ``secure_delete``), then counts again and searches the text column for the
subject id and its identifying values.
"""

from __future__ import annotations

import contextlib
import decimal
import json
import uuid
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import structlog
from sqlalchemy import (
    Column,
    Connection,
    Engine,
    MetaData,
    Table,
    and_,
    create_engine,
    delete,
    func,
    literal,
    make_url,
    or_,
    select,
    type_coerce,
    update,
)
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, NoSuchTableError, SQLAlchemyError
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.types import NullType

from auditor.config import Settings
from auditor.errors import InputError, StoreError
from auditor.records import STATUSES
from auditor.sources.files.base import SourceItem
from auditor.sources.live.base import (
    Connector,
    ErasureResult,
    NotSupported,
    SourceConfig,
    memory_id_for,
)
from auditor.store.residue import Matcher, search_file

__all__ = ["SqlTableConnector"]

log = structlog.get_logger(__name__)

_REQUIRED = ("id", "subject", "text")
_OPTIONAL = (
    "created_at",
    "updated_at",
    "expires_at",
    "supersedes",
    "status",
    "namespace",
    "category",
)
_YIELD_PER = 1000
_MAX_SEARCH_VALUES = 200
_ID_CHUNK = 500


def _encode(value: Any) -> Any:
    """A cursor value as JSON (type-tagged where JSON has no type for it)."""
    if isinstance(value, datetime):
        return {"dt": value.isoformat()}
    if isinstance(value, date):
        return {"d": value.isoformat()}
    if isinstance(value, uuid.UUID):
        return {"uuid": str(value)}
    if isinstance(value, decimal.Decimal):
        return {"dec": str(value)}
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(type(value).__name__)


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if "dt" in value:
            return datetime.fromisoformat(value["dt"])
        if "d" in value:
            return date.fromisoformat(value["d"])
        if "uuid" in value:
            return uuid.UUID(value["uuid"])
        if "dec" in value:
            return decimal.Decimal(value["dec"])
        raise ValueError("unknown cursor tag")
    return value


def _iso(value: Any) -> str | None:
    """A timestamp column value as ISO 8601 (naive values are UTC), or None."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return aware.astimezone(UTC).isoformat()
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC).isoformat()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(float(value), tz=UTC).isoformat()
    if isinstance(value, str):
        raw = value.strip().replace("Z", "+00:00")
        parsed = datetime.fromisoformat(raw)
        return _iso(parsed)
    raise ValueError(f"not a time ({type(value).__name__})")


class SqlTableConnector(Connector):
    """Reads (and, with write-back, updates and erases in) one mapped SQL table."""

    kind = "sql-table"
    supports = frozenset({"quarantine", "restore", "erase"})

    def __init__(self, config: SourceConfig, settings: Settings) -> None:
        super().__init__(config, settings)
        self._name = config.name
        options = config.options
        mapping = options.get("mapping")
        if not isinstance(mapping, Mapping):
            raise InputError(
                f"source {self._name!r}: option 'mapping' (the table and its columns) is "
                "required: memaudit sources add ... --mapping FILE.yaml"
            )
        self.mapping = dict(mapping)
        table_name = self.mapping.get("table")
        if not isinstance(table_name, str) or not table_name:
            raise InputError(f"source {self._name!r}: the mapping needs 'table'")
        self._table_name = table_name
        schema = self.mapping.get("schema")
        self._schema = str(schema) if schema else None
        columns = self.mapping.get("columns")
        if not isinstance(columns, Mapping):
            raise InputError(f"source {self._name!r}: the mapping needs 'columns'")
        unknown = set(columns) - set(_REQUIRED) - set(_OPTIONAL)
        if unknown:
            raise InputError(
                f"source {self._name!r}: unknown mapped columns {sorted(unknown)}; known: "
                f"{', '.join((*_REQUIRED, *_OPTIONAL))}"
            )
        missing = [c for c in _REQUIRED if not columns.get(c)]
        if missing:
            raise InputError(
                f"source {self._name!r}: the mapping must name columns {', '.join(missing)}"
            )
        self._columns: dict[str, str] = {k: str(v) for k, v in columns.items() if v}
        prefix = self.mapping.get("subject_prefix", "user:")
        self._prefix = "" if prefix is None else str(prefix)
        values = self.mapping.get("status_values") or {}
        if not isinstance(values, Mapping):
            raise InputError(f"source {self._name!r}: status_values must be a mapping")
        self._status_map: dict[str, str] = {str(k): str(v) for k, v in values.items()}
        for value in self._status_map.values():
            if value not in STATUSES:
                raise InputError(
                    f"source {self._name!r}: status_values maps to {value!r}; memaudit "
                    f"statuses are {', '.join(STATUSES)}"
                )
        self._engine: Engine | None = None
        self._table: Table | None = None
        self._cursor: Any = None
        self._cursor_out: str | None = None

    # -- connection and table --------------------------------------------------------------

    def _engine_for(self) -> Engine:
        if self._engine is not None:
            return self._engine
        raw = self.config.options.get("url")
        if not isinstance(raw, str) or not raw:
            raise InputError(f"source {self._name!r}: option 'url' (a SQLAlchemy URL) is required")
        try:
            url = make_url(raw)
        except ArgumentError:
            raise InputError(f"source {self._name!r}: option 'url' is not a valid URL") from None
        if url.drivername == "postgresql":
            url = url.set(drivername="postgresql+psycopg")
        kwargs: dict[str, Any] = {"hide_parameters": True}
        if url.get_backend_name() == "sqlite":
            database = url.database
            if not database or database == ":memory:":
                raise InputError(f"source {self._name!r}: a SQLite source must be a file")
            if not Path(database).expanduser().is_file():
                # connecting would create an empty database: a wrong path is an error
                raise InputError(f"source {self._name!r}: the SQLite file does not exist")
            kwargs["connect_args"] = {"timeout": self.settings.sqlite_busy_timeout_ms / 1000}
        else:
            kwargs["pool_pre_ping"] = True
        try:
            self._engine = create_engine(url, **kwargs)
        except (ArgumentError, NoSuchModuleError) as exc:
            raise InputError(
                f"source {self._name!r}: cannot use {url.get_backend_name()}: {type(exc).__name__}"
            ) from None
        return self._engine

    def _reflect(self) -> Table:
        if self._table is not None:
            return self._table
        engine = self._engine_for()
        try:
            table = Table(self._table_name, MetaData(), schema=self._schema, autoload_with=engine)
        except NoSuchTableError:
            raise InputError(
                f"source {self._name!r}: no table {self._table_name!r} in the source"
            ) from None
        except SQLAlchemyError as exc:
            raise StoreError(
                f"source {self._name!r}: cannot read the table: {_first_line(exc)}"
            ) from None
        absent = [c for c in self._columns.values() if c not in table.c]
        if absent:
            raise InputError(
                f"source {self._name!r}: table {self._table_name!r} has no column(s) "
                f"{', '.join(sorted(absent))}"
            )
        self._table = table
        return table

    def _col(self, role: str) -> Column[Any]:
        return self._reflect().c[self._columns[role]]

    def _raw(self, role: str) -> ColumnElement[Any]:
        """A column read as the driver returns it (no SQLAlchemy type processing)."""
        return type_coerce(self._col(role), NullType()).label(role)

    @contextlib.contextmanager
    def _read(self) -> Iterator[Connection]:
        engine = self._engine_for()
        try:
            with engine.connect() as conn:
                if engine.dialect.name == "sqlite":
                    conn.exec_driver_sql("PRAGMA query_only = ON")
                    conn.commit()
                    try:
                        with conn.begin():
                            yield conn
                    finally:
                        conn.rollback()
                        conn.exec_driver_sql("PRAGMA query_only = OFF")
                        conn.commit()
                elif engine.dialect.name == "postgresql":
                    ro = conn.execution_options(postgresql_readonly=True)
                    with ro.begin():
                        yield ro
                else:
                    with conn.begin() as tx:
                        yield conn
                        tx.rollback()
        except SQLAlchemyError as exc:
            raise StoreError(f"source {self._name!r}: reading failed: {_first_line(exc)}") from None

    def _typed(self, role: str, values: Sequence[str]) -> list[Any]:
        """External ids / subject values converted to the column's Python type."""
        try:
            python_type = self._col(role).type.python_type
        except NotImplementedError:
            return list(values)
        out: list[Any] = []
        for value in values:
            if python_type is int:
                try:
                    out.append(int(value))
                except ValueError:
                    continue  # cannot be in an integer column
            elif python_type is uuid.UUID:
                try:
                    out.append(uuid.UUID(value))
                except ValueError:
                    continue
            else:
                out.append(value)
        return out

    # -- reading ------------------------------------------------------------------------------

    def test(self) -> dict[str, Any]:
        table = self._reflect()
        with self._read() as conn:
            rows = conn.execute(select(func.count()).select_from(table)).scalar_one()
            subjects = conn.execute(
                select(func.count(func.distinct(self._col("subject"))))
            ).scalar_one()
        return {
            "rows": int(rows),
            "subjects": int(subjects),
            "mapped_columns": sorted(self._columns),
            "incremental": "updated_at" in self._columns,
            "write_back": sorted(self._write_back_actions()),
        }

    def _write_back_actions(self) -> set[str]:
        actions = {"erase"}
        if "status" in self._columns:
            if self._value_for("quarantine") is not None:
                actions.add("quarantine")
            if self._value_for("restore") is not None:
                actions.add("restore")
        return actions

    def _selected(self) -> list[ColumnElement[Any]]:
        return [self._raw(role) for role in self._columns]

    def _parse_cursor(self, cursor: str | None) -> tuple[Any, Any] | None:
        if cursor is None or "updated_at" not in self._columns:
            return None
        try:
            data = json.loads(cursor)
            return _decode(data["u"]), _decode(data["i"])
        except (ValueError, KeyError, TypeError):
            log.warning("source_cursor_unreadable", source=self._name)
            return None  # a cursor this connector cannot use: full pull

    def pull(self, cursor: str | None) -> Iterator[SourceItem]:
        position = self._parse_cursor(cursor)
        self._cursor = position
        self._cursor_out = cursor if position is not None else None
        with self._read() as conn:
            yield from self._pull(conn, position)

    def _pull(self, conn: Connection, position: tuple[Any, Any] | None) -> Iterator[SourceItem]:
        query = select(*self._selected()).select_from(self._reflect())
        id_raw = type_coerce(self._col("id"), NullType())
        if "updated_at" in self._columns:
            up_raw = type_coerce(self._col("updated_at"), NullType())
            ordered = query.where(up_raw.is_not(None)).order_by(up_raw, id_raw)
            if position is not None:
                at, last_id = position
                ordered = ordered.where(
                    or_(
                        up_raw > literal(at, NullType()),
                        and_(
                            up_raw == literal(at, NullType()), id_raw > literal(last_id, NullType())
                        ),
                    )
                )
            queries = [ordered, query.where(up_raw.is_(None)).order_by(id_raw)]
        else:
            queries = [query.order_by(id_raw)]
        for stmt in queries:
            result = conn.execute(stmt.execution_options(yield_per=_YIELD_PER))
            for row in result.mappings():
                item = self._item(dict(row))
                if "updated_at" in self._columns and row["updated_at"] is not None:
                    self._advance(row["updated_at"], row["id"])
                yield item

    def _advance(self, at: Any, row_id: Any) -> None:
        try:
            self._cursor_out = json.dumps({"u": _encode(at), "i": _encode(row_id)}, sort_keys=True)
        except TypeError:
            self._cursor_out = None  # a type the cursor cannot hold: full pulls then

    def next_cursor(self) -> str | None:
        return self._cursor_out

    def live_ids(self) -> set[str] | None:
        with self._read() as conn:
            result = conn.execute(
                select(self._raw("id")).execution_options(yield_per=_YIELD_PER * 10)
            )
            return {str(value) for value in result.scalars() if value is not None}

    def _status(self, value: Any) -> tuple[str | None, str]:
        """(memaudit status or None, source_status) for a status column value."""
        if value is None:
            return None, "live"
        key = str(value)
        status = self._status_map.get(key) or (key if key in STATUSES else None)
        if status is None:
            return None, "unknown"
        return status, "live" if status == "active" else status

    def _item(self, row: dict[str, Any]) -> SourceItem:
        raw_id = row["id"]
        if raw_id is None:
            return SourceItem("a row with no id", error="the id column is empty")
        external = str(raw_id)
        where = f"row {external[:80]}"
        subject_value = row.get("subject")
        if subject_value is None or str(subject_value).strip() == "":
            return SourceItem(where, error="the subject column is empty", external_id=external)
        fact = row.get("text")
        if isinstance(fact, bytes):
            try:
                fact = fact.decode("utf-8")
            except UnicodeDecodeError:
                return SourceItem(where, error="the text is not UTF-8", external_id=external)
        if fact is None:
            return SourceItem(where, error="the text column is empty", external_id=external)
        mapping = self.mapping
        record: dict[str, Any] = {
            "subject": f"{self._prefix}{subject_value}",
            "fact": fact if isinstance(fact, str) else str(fact),
            "namespace": str(row.get("namespace") or mapping.get("namespace") or self._name),
            "kind": str(mapping.get("kind", "semantic")),
            "source": {
                "type": str(mapping.get("source_type", "import")),
                "uri": f"sql-table://{self._name}/{external}",
            },
            "source_name": self._name,
            "source_kind": self.kind,
            "external_id": external,
        }
        if row.get("category") is not None:
            record["category"] = str(row["category"])
        elif mapping.get("category"):
            record["category"] = str(mapping["category"])
        try:
            for role in ("created_at", "updated_at", "expires_at"):
                if role in row:
                    stamp = _iso(row[role])
                    if stamp is not None:
                        record[role] = stamp
        except ValueError:
            return SourceItem(where, error=f"the {role} column is not a time", external_id=external)
        if row.get("supersedes") not in (None, ""):
            record["supersedes"] = memory_id_for(self._name, str(row["supersedes"]))
        if "status" in self._columns:
            status, source_status = self._status(row.get("status"))
            if status is not None:
                record["status"] = status
            record["source_status"] = source_status
            if row.get("status") is not None:
                record["source_status_value"] = str(row["status"])[:64]
        else:
            record["source_status"] = "live"
        return SourceItem(where, raw=record, external_id=external)

    # -- write-back --------------------------------------------------------------------------------

    def _value_for(self, action: str) -> str | None:
        configured = (self.mapping.get("write_back") or {}).get(action)
        if configured is not None:
            return str(configured)
        wanted = "quarantined" if action == "quarantine" else "active"
        for value, status in self._status_map.items():
            if status == wanted:
                return value
        return wanted if not self._status_map else None

    def _set_status(self, action: str, external_ids: Sequence[str]) -> None:
        if "status" not in self._columns:
            raise NotSupported(
                f"source {self._name!r} ({self.kind}): no status column is mapped, so it "
                f"cannot {action}"
            )
        value = self._value_for(action)
        if value is None:
            raise NotSupported(
                f"source {self._name!r} ({self.kind}): no status value is mapped for {action} "
                "(mapping write_back or status_values)"
            )
        table = self._reflect()
        ids = self._typed("id", external_ids)
        engine = self._engine_for()
        try:
            with engine.begin() as conn:
                for start in range(0, len(ids), _ID_CHUNK):
                    conn.execute(
                        update(table)
                        .where(self._col("id").in_(ids[start : start + _ID_CHUNK]))
                        .values({self._columns["status"]: value})
                    )
        except SQLAlchemyError as exc:
            raise StoreError(
                f"source {self._name!r}: {action} failed: {_first_line(exc)}"
            ) from None

    def quarantine(self, external_ids: Sequence[str]) -> None:
        self._set_status("quarantine", external_ids)

    def restore(self, external_ids: Sequence[str]) -> None:
        self._set_status("restore", external_ids)

    def erase_subject(self, subject: str, values: Sequence[str] = ()) -> ErasureResult:
        result = ErasureResult()
        table = self._reflect()
        place = f"{self._table_name}"
        if self._prefix and not subject.startswith(self._prefix):
            result.notes.append(
                f"the subject is not of the form {self._prefix}<value>; nothing to delete"
            )
            return result
        subject_values = self._typed("subject", [subject[len(self._prefix) :]])
        engine = self._engine_for()
        subject_col = self._col("subject")
        try:
            with engine.begin() as conn:
                if engine.dialect.name == "sqlite":
                    conn.exec_driver_sql("PRAGMA secure_delete = ON")
                deleted = conn.execute(delete(table).where(subject_col.in_(subject_values)))
                result.counts[place] = int(deleted.rowcount or 0)
            if engine.dialect.name == "postgresql":
                if self.mapping.get("vacuum_after_erase"):
                    with engine.connect() as conn:
                        auto = conn.execution_options(isolation_level="AUTOCOMMIT")
                        name = engine.dialect.identifier_preparer.format_table(table)
                        auto.exec_driver_sql(f"VACUUM (ANALYZE) {name}")  # quoted identifier
                    result.notes.append(f"vacuumed {place}")
                else:
                    result.notes.append(
                        f"PostgreSQL keeps dead row versions of {place} until VACUUM "
                        "(set vacuum_after_erase: true in the mapping)"
                    )
            self._verify(subject, subject_values, values, result)
        except SQLAlchemyError as exc:
            raise StoreError(f"source {self._name!r}: erasure failed: {_first_line(exc)}") from None
        result.notes.append(f"only the mapped table {place} is erased and searched")
        return result

    def _verify(
        self,
        subject: str,
        subject_values: list[Any],
        values: Sequence[str],
        result: ErasureResult,
    ) -> None:
        place = self._table_name
        text_col = type_coerce(self._col("text"), NullType())
        with self._read() as conn:
            left = conn.execute(
                select(func.count())
                .select_from(self._reflect())
                .where(self._col("subject").in_(subject_values))
            ).scalar_one()
            if left:
                result.remaining.append(f"{place}.{self._columns['subject']} ({left} rows)")
            minimum = self.settings.erasure_min_value_chars
            needles = [subject] + sorted(
                {v for v in values if isinstance(v, str) and len(v.strip()) >= minimum}
            )[:_MAX_SEARCH_VALUES]
            text_place = f"{place}.{self._columns['text']}"
            for index, needle in enumerate(needles):
                found = conn.execute(
                    select(func.count())
                    .select_from(self._reflect())
                    .where(func.lower(text_col).contains(needle.strip().lower(), autoescape=True))
                ).scalar_one()
                if found:
                    kind = "subject id" if index == 0 else "identifying value"
                    result.remaining.append(f"{text_place}: {kind} ({found} rows)")
            result.searched.append(
                f"{text_place} (rows, {len(needles)} value(s) incl. the subject id), "
                f"{place}.{self._columns['subject']} (the subject's value)"
            )
        self._verify_file(needles[1:], result)

    def _verify_file(self, needles: Sequence[str], result: ErasureResult) -> None:
        """SQLite: the bytes of the database file, its WAL and journal. Text the
        application deleted earlier (without ``secure_delete``) stays in free pages, and
        other tables are not mapped: both are found here, by place and count."""
        engine = self._engine_for()
        database = engine.url.database
        if engine.dialect.name != "sqlite" or not database or database == ":memory:":
            return
        matcher = Matcher(needles)
        for suffix in ("", "-wal", "-journal"):
            path = Path(f"{database}{suffix}")
            if not path.is_file():
                continue
            label = f"database file{suffix}"
            result.searched.append(f"{label} (every byte, {len(needles)} value(s))")
            if not matcher:
                continue
            try:
                found = search_file(path, matcher)
            except OSError as exc:
                result.remaining.append(f"{label}: unreadable ({exc.__class__.__name__})")
                continue
            if found:
                result.remaining.append(
                    f"{label}: identifying value ({found} match(es) in free pages, other "
                    "tables or indexes: VACUUM the application's database)"
                )
        with contextlib.suppress(SQLAlchemyError), self._read() as conn:
            free = conn.exec_driver_sql("PRAGMA freelist_count").scalar()
            if free:
                result.notes.append(
                    f"{free} free page(s) in the database file: text deleted before "
                    "secure_delete was on may stay there until VACUUM (searched for the "
                    "subject's values only)"
                )

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None
            self._table = None


def _first_line(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    lines = str(orig).strip().splitlines()
    return lines[0][:300] if lines else type(exc).__name__
