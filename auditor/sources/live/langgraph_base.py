"""What the two LangGraph connectors share: :class:`_LangGraphConnector`, the base of
:class:`~auditor.sources.live.langgraph.LangGraphSqliteConnector` and
:class:`~auditor.sources.live.langgraph.LangGraphPostgresConnector`.

What the connectors read and write is described in :mod:`auditor.sources.live.langgraph`,
their module. This one holds all of it but the dialect: the common options, the tables read
(``store``, ``store_vectors``), the canonical records of items and orphan vectors, the
Connector interface (test, pull, the cursor, live ids), quarantine and restore through
LangGraph's store API, and the erasure's deletes and verification. Each dialect gives the
engine, the store API object, the time parameter of a cursor, the compaction and the files
to search; the values and ids are :mod:`auditor.sources.live.langgraph_values`'.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, ClassVar

import structlog
from sqlalchemy import (
    Connection,
    Engine,
    and_,
    bindparam,
    column,
    delete,
    exists,
    func,
    inspect,
    literal_column,
    or_,
    select,
    table,
    update,
)
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.sql.expression import TableClause

from auditor.config import Settings
from auditor.errors import InputError, StoreError
from auditor.records import KINDS, SOURCE_TYPES
from auditor.sources.files._common import show_name
from auditor.sources.files.base import SourceItem
from auditor.sources.live.base import (
    Connector,
    ErasureResult,
    NotSupported,
    SourceConfig,
    memory_id_for,
)
from auditor.sources.live.langgraph_values import (
    _CONTROL,
    SubjectRule,
    _category,
    _iso,
    _load_value,
    _location,
    _number,
    _parse_cursor,
    _Row,
    item_external_id,
    join_namespace,
    memory_text,
    parse_external_id,
    parse_time,
    split_prefix,
    vector_external_id,
)
from auditor.store.residue import Matcher, search_database, search_file

__all__ = ["_LangGraphConnector"]

log = structlog.get_logger(__name__)

#: Where a vector row without an item is retained (``extra.retained_in``).
RETAINED_IN = "langgraph.store_vectors"
QUARANTINE_MARK = "__memaudit_quarantine__"
DEFAULT_QUARANTINE_NS = "memaudit_quarantine"
#: An incremental pull re-reads this much before the cursor (SQLite's CURRENT_TIMESTAMP
#: has whole seconds; a long transaction commits rows stamped before it ends).
CURSOR_OVERLAP = timedelta(minutes=1)
_CHUNK = 500

_COMMON_OPTIONS = frozenset(
    {"subject_from", "text_field", "namespace", "source_type", "kind", "quarantine_namespace"}
)


class _LangGraphConnector(Connector):
    """Shared by the SQLite and PostgreSQL kinds (see the module docstring)."""

    supports: ClassVar[frozenset[str]] = frozenset({"quarantine", "restore", "erase"})
    _kind_options: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, config: SourceConfig, settings: Settings) -> None:
        super().__init__(config, settings)
        opts = dict(config.options)
        unknown = set(opts) - _COMMON_OPTIONS - self._kind_options
        if unknown:
            known = ", ".join(sorted(_COMMON_OPTIONS | self._kind_options))
            raise InputError(
                f"source {config.name!r} ({self.kind}): unknown options "
                f"{', '.join(sorted(map(str, unknown)))}; known: {known}"
            )
        self.subject_rule = SubjectRule.parse(config.name, opts.get("subject_from"))
        self.text_field = self._opt_text(opts, "text_field")
        self.namespace = self._opt_text(opts, "namespace")
        if self.namespace is not None and (
            _CONTROL.search(self.namespace) or self.namespace != self.namespace.strip()
        ):
            raise InputError(f"source {config.name!r}: namespace must be plain text")
        self.source_type = self._opt_text(opts, "source_type") or "inferred"
        if self.source_type not in SOURCE_TYPES:
            raise InputError(
                f"source {config.name!r}: source_type must be one of {', '.join(SOURCE_TYPES)}"
            )
        self.memory_kind = self._opt_text(opts, "kind") or "semantic"
        if self.memory_kind not in KINDS:
            raise InputError(f"source {config.name!r}: kind must be one of {', '.join(KINDS)}")
        self.quarantine_ns = self._opt_text(opts, "quarantine_namespace") or DEFAULT_QUARANTINE_NS
        if "." in self.quarantine_ns or _CONTROL.search(self.quarantine_ns):
            raise InputError(
                f"source {config.name!r}: quarantine_namespace must be one namespace label (no '.')"
            )
        self._engine: Engine | None = None
        self._cursor_seen: datetime | None = None

    def _opt_text(self, opts: Mapping[str, Any], name: str) -> str | None:
        value = opts.get(name)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip() or len(value) > 256:
            raise InputError(f"source {self.config.name!r}: {name} must be non-empty text")
        return value

    # -- connections (per dialect) ------------------------------------------------------

    def _make_engine(self, *, writable: bool) -> Engine:  # pragma: no cover - abstract
        raise NotImplementedError

    def _read_engine(self) -> Engine:
        if self._engine is None:
            self._engine = self._make_engine(writable=False)
        return self._engine

    @contextlib.contextmanager
    def _open_store(self) -> Iterator[Any]:  # pragma: no cover - abstract
        raise NotImplementedError
        yield None

    def _compact(self, engine: Engine, result: ErasureResult) -> None:  # pragma: no cover
        raise NotImplementedError

    def _files(self) -> list[Path]:
        return []

    def close(self) -> None:
        if self._engine is not None:
            self._engine.dispose()
            self._engine = None

    # -- tables -------------------------------------------------------------------------

    def _tables(self, conn: Connection) -> tuple[TableClause, TableClause | None, set[str]]:
        """The store table, the vectors table (None when the app has no index) and the
        store's column names.

        Raises:
            InputError: there is no LangGraph store here.
        """
        schema = None  # PostgreSQL: the search path (option ``schema``) decides
        insp = inspect(conn)
        if not insp.has_table("store", schema=schema):
            raise InputError(
                f"source {self.config.name!r}: no LangGraph store table 'store' here "
                "(has the app called store.setup()?)"
            )
        names = {c["name"] for c in insp.get_columns("store", schema=schema)}
        missing = {"prefix", "key", "value"} - names
        if missing:
            raise InputError(
                f"source {self.config.name!r}: table 'store' lacks columns "
                f"{', '.join(sorted(missing))}: not a LangGraph store"
            )
        wanted = ("prefix", "key", "value", "created_at", "updated_at", "expires_at", "ttl_minutes")
        store = table("store", *(column(n) for n in wanted if n in names), schema=schema)
        vectors: TableClause | None = None
        if insp.has_table("store_vectors", schema=schema):
            vectors = table(
                "store_vectors",
                column("prefix"),
                column("key"),
                column("field_name"),
                column("created_at"),
                column("updated_at"),
                schema=schema,
            )
        return store, vectors, names

    def _rows(self, conn: Connection, since: datetime | None) -> Iterator[_Row]:
        store, vectors, names = self._tables(conn)
        c = store.c
        vec_count: Any = literal_column("0")
        if vectors is not None:
            v = vectors.c
            vec_count = (
                select(func.count())
                .select_from(vectors)
                .where(and_(v.prefix == c.prefix, v.key == c.key))
                .scalar_subquery()
            )
        opt = {
            n: c[n] if n in names else literal_column("NULL")
            for n in ("created_at", "updated_at", "expires_at", "ttl_minutes")
        }
        query = select(
            c.prefix,
            c.key,
            c.value,
            opt["created_at"],
            opt["updated_at"],
            opt["expires_at"],
            opt["ttl_minutes"],
            vec_count,
        ).order_by(c.prefix, c.key)
        if since is not None and "updated_at" in names:
            bound = self._time_param(since - CURSOR_OVERLAP)
            conds = [c.updated_at >= bindparam("since", bound), c.updated_at.is_(None)]
            if "expires_at" in names:  # a TTL refresh moves expires_at, not updated_at
                conds.append(c.expires_at.is_not(None))
            # quarantined copies: moved with a fresh updated_at, re-read anyway (cheap)
            query = query.where(or_(*conds))
        for row in conn.execution_options(yield_per=500).execute(query):
            yield _Row(
                prefix=str(row[0]),
                key=str(row[1]),
                value=row[2],
                created_at=row[3],
                updated_at=row[4],
                expires_at=row[5],
                ttl_minutes=row[6],
                vectors=int(row[7] or 0),
            )

    def _time_param(self, value: datetime) -> Any:
        return value

    def _orphans(self, conn: Connection) -> Iterator[tuple[str, str, str, Any, Any]]:
        store, vectors, _ = self._tables(conn)
        if vectors is None:
            return
        v, s = vectors.c, store.c
        query = (
            select(v.prefix, v.key, v.field_name, v.created_at, v.updated_at)
            .where(~exists().where(and_(s.prefix == v.prefix, s.key == v.key)))
            .order_by(v.prefix, v.key, v.field_name)
        )
        for row in conn.execution_options(yield_per=500).execute(query):
            yield str(row[0]), str(row[1]), str(row[2]), row[3], row[4]

    @contextlib.contextmanager
    def _connect(self) -> Iterator[Connection]:
        try:
            with self._read_engine().connect() as conn:
                yield conn
        except SQLAlchemyError as exc:
            raise StoreError(
                f"source {self.config.name!r} ({self.kind}): cannot read the store: "
                f"{type(exc).__name__}"
            ) from None

    # -- mapping to canonical records ---------------------------------------------------

    def _original(self, namespace: tuple[str, ...]) -> tuple[tuple[str, ...], bool]:
        """(the app's namespace, whether this is a quarantined copy)."""
        if len(namespace) > 1 and namespace[0] == self.quarantine_ns:
            return namespace[1:], True
        return namespace, False

    def _namespace_for(self, namespace: tuple[str, ...]) -> str:
        if self.namespace is not None:
            return self.namespace
        i = self.subject_rule.index(namespace)
        rest = [label for j, label in enumerate(namespace) if j != i]
        shown = show_name(join_namespace(rest), 200).strip() if rest else ""
        return shown or self.config.name

    def _base(self, external_id: str) -> dict[str, Any]:
        return {
            "memory_id": memory_id_for(self.config.name, external_id),
            "source": {
                "type": self.source_type,
                "uri": f"{self.kind}://{self.config.name}/{external_id}",
            },
            "source_name": self.config.name,
            "source_kind": self.kind,
            "external_id": external_id,
        }

    def _item(self, row: _Row, now: datetime) -> SourceItem:
        """The item of one store row (an error item when it cannot be read)."""
        namespace, quarantined = self._original(split_prefix(row.prefix))
        external_id = item_external_id(join_namespace(namespace), row.key)
        where = _location("item", external_id)
        try:
            value = _load_value(row.value, self.settings.max_record_bytes)
        except ValueError as exc:
            return SourceItem(where, error=str(exc), external_id=external_id)
        meta: Mapping[str, Any] = {}
        if quarantined:
            if not isinstance(value, Mapping) or QUARANTINE_MARK not in value:
                return SourceItem(
                    where,
                    error=f"in the namespace reserved for quarantine ({self.quarantine_ns!r}) "
                    "but not written by memaudit; set quarantine_namespace to another label",
                    external_id=external_id,
                )
            raw_meta = value.get(QUARANTINE_MARK)
            meta = raw_meta if isinstance(raw_meta, Mapping) else {}
            value = value.get("value")
        subject = self.subject_rule.subject(namespace)
        if subject is None:
            return SourceItem(
                where,
                error="its namespace names no subject; set the source's subject_from option",
                external_id=external_id,
            )
        # a quarantined copy does not expire (its TTL is kept in the mark for a restore)
        expires = None if quarantined else parse_time(row.expires_at)
        expired_unswept = expires is not None and expires <= now
        created = parse_time(meta.get("created_at")) if quarantined else None
        raw = self._base(external_id)
        raw.update(
            {
                "subject": subject,
                "namespace": self._namespace_for(namespace),
                "kind": self.memory_kind,
                "category": _category(value),
                "fact": memory_text(value, self.text_field),
                "status": "quarantined" if quarantined else "active",
                "created_at": _iso(created or parse_time(row.created_at)),
                "updated_at": _iso(parse_time(row.updated_at)),
                "expires_at": _iso(expires),
                "source_status": (
                    "quarantined" if quarantined else ("expired" if expired_unswept else "live")
                ),
                "langgraph_namespace": list(namespace),
                "langgraph_key": row.key,
            }
        )
        if row.expires_at is not None and expires is None and not quarantined:
            raw["expires_at_unreadable"] = True
        if expired_unswept:
            raw["expired_unswept"] = True
        if row.ttl_minutes is not None:
            raw["ttl_minutes"] = _number(row.ttl_minutes)
        if row.vectors:
            raw["vector_fields"] = row.vectors
            raw["embedding_ref"] = f"{RETAINED_IN}:{external_id}"
        confidence = value.get("confidence") if isinstance(value, Mapping) else None
        if isinstance(confidence, int | float) and not isinstance(confidence, bool):
            if 0.0 <= float(confidence) <= 1.0:
                raw["confidence"] = float(confidence)
        return SourceItem(where, raw=raw, external_id=external_id)

    def _orphan_item(
        self, prefix: str, key: str, field_name: str, created: Any, updated: Any
    ) -> SourceItem:
        namespace, _quarantined = self._original(split_prefix(prefix))
        external_id = vector_external_id(prefix, key, field_name)
        where = _location("vector", external_id)
        subject = self.subject_rule.subject(namespace)
        if subject is None:
            return SourceItem(
                where,
                error="its namespace names no subject; set the source's subject_from option",
                external_id=external_id,
            )
        raw = self._base(external_id)
        raw.update(
            {
                "subject": subject,
                "namespace": self._namespace_for(namespace),
                "kind": self.memory_kind,
                "category": "note",
                "fact": (
                    f"[orphan embedding of field {show_name(field_name, 64)!r} of the deleted "
                    f"item {show_name(key, 64)!r}: LangGraph keeps no text beside the vector]"
                ),
                "status": "deleted",
                "created_at": _iso(parse_time(created)),
                "updated_at": _iso(parse_time(updated)),
                "source_status": "orphan",
                # only the vector is kept, not the text: MA-SRC-003 (orphan vector) is the
                # one finding; no retained_in, which would also fire MA-SRC-001 ("keeps
                # its text") on a placeholder
                "orphan_vector": True,
                "embedding_ref": f"{RETAINED_IN}:{external_id}",
                "langgraph_namespace": list(namespace),
                "langgraph_key": key,
                "langgraph_field": field_name,
            }
        )
        return SourceItem(where, raw=raw, external_id=external_id)

    # -- the Connector interface --------------------------------------------------------

    def test(self) -> dict[str, Any]:
        now = datetime.now(UTC)
        counts = {
            "items": 0,
            "subjects": 0,
            "namespaces": 0,
            "quarantined": 0,
            "expired_unswept": 0,
            "orphan_vectors": 0,
            "unreadable": 0,
        }
        subjects: set[str] = set()
        namespaces: set[str] = set()
        with self._connect() as conn:
            _store, vectors, _names = self._tables(conn)
            counts["vectors_table"] = int(vectors is not None)
            for row in self._rows(conn, None):
                item = self._item(row, now)
                if item.raw is None:
                    counts["unreadable"] += 1
                    continue
                counts["items"] += 1
                subjects.add(item.raw["subject"])
                namespaces.add(row.prefix)
                counts["quarantined"] += item.raw["status"] == "quarantined"
                counts["expired_unswept"] += bool(item.raw.get("expired_unswept"))
            counts["orphan_vectors"] = sum(1 for _ in self._orphans(conn))
        counts["subjects"] = len(subjects)
        counts["namespaces"] = len(namespaces)
        return counts

    def pull(self, cursor: str | None) -> Iterator[SourceItem]:
        since = _parse_cursor(cursor)
        self._cursor_seen = since
        now = datetime.now(UTC)
        with self._connect() as conn:
            rows = list(self._rows(conn, since)) if since is None else None
            source_rows = rows if rows is not None else self._rows(conn, since)
            yield from self._yield_items(source_rows, now)
            for prefix, key, field_name, created, updated in self._orphans(conn):
                yield self._orphan_item(prefix, key, field_name, created, updated)

    def _yield_items(
        self, rows: Iterator[_Row] | list[_Row], now: datetime
    ) -> Iterator[SourceItem]:
        originals: set[tuple[str, str]] = set()
        pending: list[_Row] = []
        for row in rows:
            namespace, quarantined = self._original(split_prefix(row.prefix))
            if quarantined:
                pending.append(row)  # after the originals: a live original wins
            else:
                originals.add((row.prefix, row.key))
            updated = parse_time(row.updated_at)
            if updated is not None and (self._cursor_seen is None or updated > self._cursor_seen):
                self._cursor_seen = updated
            if not quarantined:
                yield self._item(row, now)
        for row in pending:
            namespace, _q = self._original(split_prefix(row.prefix))
            if (join_namespace(namespace), row.key) in originals:
                continue  # the app wrote the key again: its item is what it serves
            yield self._item(row, now)

    def next_cursor(self) -> str | None:
        if self._cursor_seen is None:
            return None
        return f"updated_at:{self._cursor_seen.isoformat()}"

    def live_ids(self) -> set[str] | None:
        ids: set[str] = set()
        with self._connect() as conn:
            store, _vectors, _names = self._tables(conn)
            for prefix, key in conn.execute(select(store.c.prefix, store.c.key)):
                namespace, _q = self._original(split_prefix(str(prefix)))
                ids.add(item_external_id(join_namespace(namespace), str(key)))
            for prefix, key, field_name, _c, _u in self._orphans(conn):
                ids.add(vector_external_id(prefix, key, field_name))
        return ids

    # -- write-back ---------------------------------------------------------------------

    def _require_langgraph(self, module: str) -> Any:
        try:
            return importlib.import_module(module)
        except ImportError:
            raise NotSupported(
                f"source {self.config.name!r} ({self.kind}): write-back goes through "
                "LangGraph's store API; install it with: pip install 'memaudit[sources]'"
            ) from None

    def _targets(self, external_ids: Sequence[str]) -> list[tuple[tuple[str, ...], str]]:
        out: list[tuple[tuple[str, ...], str]] = []
        for external_id in external_ids:
            prefix, key, field_name = parse_external_id(external_id)
            if field_name is not None:
                continue  # an orphan vector is served to nobody: nothing to take out
            out.append((split_prefix(prefix), key))
        return out

    def _move_vectors(
        self, engine: Engine, src: tuple[str, ...], dst: tuple[str, ...], key: str
    ) -> int:
        with engine.begin() as conn:
            _store, vectors, _names = self._tables(conn)
            if vectors is None:
                return 0
            v = vectors.c
            result = conn.execute(
                update(vectors)
                .where(and_(v.prefix == join_namespace(src), v.key == key))
                .values(prefix=join_namespace(dst))
            )
            return int(result.rowcount or 0)

    def _keep_created(
        self, engine: Engine, namespace: tuple[str, ...], key: str, created: Any
    ) -> None:
        """Give a restored item back its original ``created_at`` (``put`` sets now; the
        API has no call for it): the item is the same memory, not a new one."""
        when = parse_time(created) if isinstance(created, str) else None
        if when is None:
            return
        when = when.astimezone(UTC)
        value: Any = when
        if engine.dialect.name == "sqlite":  # SqliteStore's own text form
            value = when.strftime("%Y-%m-%d %H:%M:%S" + (".%f" if when.microsecond else ""))
        with engine.begin() as conn:
            store, _vectors, _names = self._tables(conn)
            c = store.c
            conn.execute(
                update(store)
                .where(and_(c.prefix == join_namespace(namespace), c.key == key))
                .values(created_at=value)
            )

    def _ttl_of(self, engine: Engine, namespace: tuple[str, ...], key: str) -> Any:
        with engine.connect() as conn:
            store, _vectors, names = self._tables(conn)
            if "ttl_minutes" not in names:
                return None
            c = store.c
            return conn.execute(
                select(c.ttl_minutes).where(
                    and_(c.prefix == join_namespace(namespace), c.key == key)
                )
            ).scalar()

    def quarantine(self, external_ids: Sequence[str]) -> None:
        targets = self._targets(external_ids)
        if not targets:
            return
        engine = self._make_engine(writable=True)
        moved = missing = 0
        try:
            with self._open_store() as store:
                for namespace, key in targets:
                    qns = (self.quarantine_ns, *namespace)
                    item = store.get(namespace, key, refresh_ttl=False)
                    if item is None:
                        if store.get(qns, key, refresh_ttl=False) is None:
                            missing += 1
                        continue
                    ttl = self._ttl_of(engine, namespace, key)
                    meta = {
                        "namespace": list(namespace),
                        "key": key,
                        "quarantined_at": datetime.now(UTC).isoformat(),
                        "created_at": _iso(parse_time(item.created_at)),
                        "ttl_minutes": _number(ttl) if ttl is not None else None,
                        "by": "memaudit",
                    }
                    store.put(
                        qns,
                        key,
                        {QUARANTINE_MARK: meta, "value": item.value},
                        index=False,
                        ttl=None,
                    )
                    self._move_vectors(engine, namespace, qns, key)
                    store.delete(namespace, key)
                    moved += 1
        finally:
            engine.dispose()
        log.info("langgraph_quarantined", source=self.config.name, items=moved, not_found=missing)

    def restore(self, external_ids: Sequence[str]) -> None:
        targets = self._targets(external_ids)
        if not targets:
            return
        engine = self._make_engine(writable=True)
        restored = dropped = missing = 0
        try:
            with self._open_store() as store:
                for namespace, key in targets:
                    qns = (self.quarantine_ns, *namespace)
                    copy = store.get(qns, key, refresh_ttl=False)
                    if copy is None or not isinstance(copy.value, Mapping):
                        missing += 1
                        continue
                    if QUARANTINE_MARK not in copy.value:
                        missing += 1
                        continue
                    if store.get(namespace, key, refresh_ttl=False) is not None:
                        # the app wrote the key again: its newer item stays
                        self._delete_vectors(engine, qns, key)
                        store.delete(qns, key)
                        dropped += 1
                        continue
                    meta = copy.value.get(QUARANTINE_MARK)
                    ttl = meta.get("ttl_minutes") if isinstance(meta, Mapping) else None
                    value = copy.value.get("value")
                    if not isinstance(value, Mapping):
                        value = {"value": value}
                    ttl_arg = float(ttl) if isinstance(ttl, int | float) and ttl > 0 else None
                    store.put(namespace, key, dict(value), index=False, ttl=ttl_arg)
                    created = meta.get("created_at") if isinstance(meta, Mapping) else None
                    self._keep_created(engine, namespace, key, created)
                    self._move_vectors(engine, qns, namespace, key)
                    store.delete(qns, key)
                    restored += 1
        finally:
            engine.dispose()
        log.info(
            "langgraph_restored",
            source=self.config.name,
            items=restored,
            superseded_by_app=dropped,
            not_found=missing,
        )

    def _delete_vectors(self, engine: Engine, namespace: tuple[str, ...], key: str) -> None:
        with engine.begin() as conn:
            _store, vectors, _names = self._tables(conn)
            if vectors is not None:
                v = vectors.c
                conn.execute(
                    delete(vectors).where(and_(v.prefix == join_namespace(namespace), v.key == key))
                )

    # -- erasure ------------------------------------------------------------------------

    def _subject_prefixes(self, conn: Connection, subject: str) -> list[str]:
        store, vectors, _names = self._tables(conn)
        found: set[str] = set()
        sources = [store] + ([vectors] if vectors is not None else [])
        for tbl in sources:
            for (prefix,) in conn.execute(select(tbl.c.prefix).distinct()):
                namespace, _q = self._original(split_prefix(str(prefix)))
                if self.subject_rule.subject(namespace) == subject:
                    found.add(str(prefix))
        return sorted(found)

    def erase_subject(self, subject: str, values: Sequence[str] = ()) -> ErasureResult:
        result = ErasureResult()
        engine = self._make_engine(writable=True)
        try:
            try:
                with engine.begin() as conn:
                    self._before_delete(conn)
                    prefixes = self._subject_prefixes(conn, subject)
                    store, vectors, _names = self._tables(conn)
                    n_items = n_vectors = 0
                    for start in range(0, len(prefixes), _CHUNK):
                        chunk = prefixes[start : start + _CHUNK]
                        if vectors is not None:
                            n_vectors += int(
                                conn.execute(
                                    delete(vectors).where(vectors.c.prefix.in_(chunk))
                                ).rowcount
                                or 0
                            )
                        n_items += int(
                            conn.execute(delete(store).where(store.c.prefix.in_(chunk))).rowcount
                            or 0
                        )
            except SQLAlchemyError as exc:
                raise StoreError(
                    f"source {self.config.name!r} ({self.kind}): erasure failed: "
                    f"{type(exc).__name__}"
                ) from None
            result.counts["langgraph.store"] = n_items
            result.counts["langgraph.store_vectors"] = n_vectors
            self._compact(engine, result)
            self._verify(engine, subject, prefixes, values, result)
        finally:
            engine.dispose()
        log.info(
            "langgraph_erased",
            source=self.config.name,
            items=result.counts.get("langgraph.store", 0),
            vectors=result.counts.get("langgraph.store_vectors", 0),
            verified=result.verified,
        )
        return result

    def _before_delete(self, conn: Connection) -> None:
        """Dialect set-up inside the erasure's transaction (SQLite: secure_delete)."""

    def _verify(
        self,
        engine: Engine,
        subject: str,
        prefixes: Sequence[str],
        values: Sequence[str],
        result: ErasureResult,
    ) -> None:
        shortest = self.settings.erasure_min_value_chars
        kept = [v for v in values if isinstance(v, str) and len(v.strip()) >= shortest]
        if len(kept) < len(values):
            result.notes.append(
                f"{len(values) - len(kept)} identifying values shorter than {shortest} "
                "characters were not searched for"
            )
        matchers = {
            "subject id": Matcher([subject, *prefixes]),
            "identifying value": Matcher(kept),
        }
        try:
            with engine.connect() as conn:
                left = self._subject_prefixes(conn, subject)
                if left:
                    result.remaining.append(
                        f"langgraph store: {len(left)} namespaces of the subject"
                    )
                report = search_database(conn, matchers)
        except SQLAlchemyError as exc:
            result.remaining.append(f"verification failed: {type(exc).__name__}")
            return
        for hit in report.hits:
            result.remaining.append(f"{hit.place}: {hit.kind} ({hit.count})")
        for place in report.unsearchable:
            result.remaining.append(f"not searchable: {place}")
        for path in self._files():
            if not path.exists():
                continue
            for kind, matcher in matchers.items():
                try:
                    count = search_file(path, matcher)
                except OSError as exc:
                    result.remaining.append(f"file {path.name}: unreadable ({exc.strerror})")
                    break
                if count:
                    result.remaining.append(f"file {path.name}: {kind} ({count})")
        result.notes.append(
            f"verified: searched {report.tables} tables, {report.columns} columns"
            + (f", {len(self._files())} files" if self._files() else "")
            + f" for the subject id, {len(prefixes)} namespaces and {len(kept)} values"
        )
