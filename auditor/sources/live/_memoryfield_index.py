"""The SQLite vector index of a Memoryfield: which rows belong to which page; remove, stash
and put back rows; compact.

SEEDS.md gives a Memoryfield "an optional SQLite vector index" but no schema, so none is
assumed. An index is any entry that is not a page and starts with the SQLite header. A row
belongs to a page when one of its text values (or a string inside a JSON text value):

* is the page's relative path, possibly with a ``#fragment`` (``notes/a.md#3``) or a leading
  folder (``/home/agent/field/notes/a.md``);
* is the page's front-matter uuid (or ``mf_<uuid>``);
* is a chunk of the page's text: at least :data:`CHUNK_MIN_CHARS` characters (white space
  collapsed) found in this page and in no other one;

or when it points at such a row through a declared foreign key or a ``<table>_id`` column
(``chunk_id`` -> ``chunks``), so the vectors of a chunk go with it.

Ordinary tables and FTS3/4/5 tables with their own content are edited; FTS tables with
external content are rebuilt from it; contentless FTS tables and other virtual tables
(``vec0`` of sqlite-vec, ``rtree``) cannot be edited here (Python's ``sqlite3`` may not load
extensions) and are listed in :attr:`IndexDb.opaque`. Shadow tables of virtual tables are
never edited directly.

This module only edits a private copy of an index; the caller puts the copy in place.
"""

from __future__ import annotations

import base64
import functools
import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from auditor.errors import InputError

__all__ = [
    "CHUNK_MIN_CHARS",
    "SQLITE_MAGIC",
    "IndexDb",
    "IndexEditError",
    "PageLinker",
    "PageRef",
    "Row",
    "decode_rows",
    "encode_rows",
]

SQLITE_MAGIC = b"SQLite format 3\x00"
#: The shortest text value taken as a chunk of a page.
CHUNK_MIN_CHARS = 24
#: Page text above this size disables chunk matching (its gram table would be too big).
_CHUNK_TEXT_LIMIT = 64 * 1024 * 1024
_GRAM = 16
_STRIDE = 8  # CHUNK_MIN_CHARS >= _GRAM + _STRIDE - 1: every chunk holds an indexed gram
_JSON_MAX = 1 << 20
_PATH_MAX = 4096
_IN_BATCH = 500
_FTS = frozenset({"fts3", "fts4", "fts5"})
_WS = re.compile(r"\s+")
#: ``USING module``; what follows is checked without a regex (the old single pattern,
#: ``\s*(?:\((.*)\))?\s*;?\s*\Z``, took cubic time on a run of blanks)
_USING = re.compile(r"\bUSING\s+(\w+)", re.IGNORECASE)
_BLANKS = re.compile(r"\s*")
_CONTENT = re.compile(
    r"(?:^|,)\s*content\s*=\s*(?:'((?:[^']|'')*)'|\"((?:[^\"]|\"\")*)\"|([^\s,)]*))",
    re.IGNORECASE,
)
_ID_COLUMN = re.compile(r"^(\w+?)_?id$", re.IGNORECASE)
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


class IndexEditError(InputError):
    """The index cannot be opened or edited; the message names no row content."""


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _edit_errors(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """SQLite errors (a corrupt page, a full disk) as :class:`IndexEditError`."""

    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return fn(*args, **kwargs)
        except sqlite3.Error as exc:
            raise IndexEditError(f"cannot edit the index ({type(exc).__name__})") from None

    return wrapper


def normalise(text: str) -> str:
    """Text with white space runs collapsed to one space, stripped."""
    return _WS.sub(" ", text).strip()


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@dataclass(frozen=True)
class PageRef:
    """What identifies one page in an index.

    Attributes:
        key: the page's relative path in the Memoryfield (where an index points).
        uuid: its front-matter uuid, canonical, or None.
        text: its text (the Markdown body).
    """

    key: str
    uuid: str | None
    text: str


@dataclass
class Row:
    """One index row: its table, key (``(rowid,)`` or primary key values) and values."""

    table: str
    key: tuple[Any, ...]
    values: dict[str, Any]
    page: str | None = None


class PageLinker:
    """Tells which page a row value points to (see the module docstring).

    Args:
        pages: every page of the Memoryfield (a value shared by two pages links to none).
    """

    def __init__(self, pages: Sequence[PageRef]) -> None:
        self._paths = {p.key: p.key for p in pages}
        self._uuids = {p.uuid.lower(): p.key for p in pages if p.uuid}
        self._keys = [p.key for p in pages]
        self._texts = [normalise(p.text) for p in pages]
        self.chunks_enabled = sum(len(t) for t in self._texts) <= _CHUNK_TEXT_LIMIT
        self._grams: dict[str, set[int]] = {}
        if self.chunks_enabled:
            for n, text in enumerate(self._texts):
                for pos in range(0, len(text) - _GRAM + 1, _STRIDE):
                    self._grams.setdefault(text[pos : pos + _GRAM], set()).add(n)

    def _strong(self, value: str) -> str | None:
        """The page a path or uuid value names."""
        text = value.strip()
        if not text or len(text) > _PATH_MAX:
            return None
        base = text.split("#", 1)[0]
        hit = self._paths.get(base)
        slash = base.find("/")
        while hit is None and slash >= 0:
            hit = self._paths.get(base[slash + 1 :])
            slash = base.find("/", slash + 1)
        if hit is not None:
            return hit
        ident = text.lower().removeprefix("mf_")
        return self._uuids.get(ident) if _UUID.match(ident) else None

    def _chunk(self, value: str) -> str | None:
        """The one page a chunk of text comes from."""
        if not self.chunks_enabled:
            return None
        text = normalise(value)
        if len(text) < CHUNK_MIN_CHARS:
            return None
        candidates: set[int] = set()
        for offset in range(_STRIDE):
            candidates |= self._grams.get(text[offset : offset + _GRAM], set())
        owners = [n for n in candidates if text in self._texts[n]]
        return self._keys[owners[0]] if len(owners) == 1 else None

    def page_of(self, values: Iterable[Any]) -> str | None:
        """The page a row belongs to: a path or uuid first, else a chunk of text."""
        strings = [s for v in values for s in _strings(v)]
        for s in strings:
            hit = self._strong(s)
            if hit is not None:
                return hit
        for s in strings:
            hit = self._chunk(s)
            if hit is not None:
                return hit
        return None


def _strings(value: Any) -> Iterator[str]:
    """A text value, and the strings inside it when it is a JSON object or array."""
    if not isinstance(value, str):
        return
    yield value
    head = value.lstrip()[:1]
    if head not in ("{", "[") or len(value) > _JSON_MAX:
        return
    try:
        doc = json.loads(value)
    except (ValueError, RecursionError):
        return
    stack = [doc]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


@dataclass
class _Table:
    name: str
    kind: str  # "table" | "fts" (own content) | "fts-external"
    rowid: bool
    columns: list[str]  # visible columns, in SELECT * order
    insertable: list[str]  # columns an INSERT may name
    pk: list[str]
    content: str | None = None  # the content table of an external-content FTS table
    links: list[tuple[list[str], str, list[str] | None]] = field(default_factory=list)
    # (child columns, parent table, parent columns or None for the parent's key)


class IndexDb:
    """A private, writable copy of one index.

    Args:
        path: the copy (its ``-wal`` / ``-journal`` files beside it, if any, are applied).

    Raises:
        IndexEditError: not a SQLite database, or its schema cannot be read.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.touched: set[str] = set()
        self._closed = False
        self._conn = sqlite3.connect(path, isolation_level=None)
        try:
            # The file is untrusted: its triggers and views may not call functions with
            # side effects; foreign keys are followed by hand (see rows_for).
            self._conn.execute("PRAGMA trusted_schema = OFF")
            self._conn.execute("PRAGMA foreign_keys = OFF")
            self._conn.execute("PRAGMA secure_delete = ON")
            self.tables, self.opaque = self._schema()
        except sqlite3.Error as exc:
            self._conn.close()
            self._closed = True
            raise IndexEditError(f"cannot read the index ({type(exc).__name__})") from None

    # -- schema ----------------------------------------------------------------------------

    def _schema(self) -> tuple[dict[str, _Table], list[str]]:
        conn = self._conn
        entries = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table'"
        ).fetchall()
        virtual = {
            name: sql
            for name, sql in entries
            if sql and sql.lstrip().upper().startswith("CREATE VIRTUAL TABLE")
        }
        shadows = {
            name
            for name, _ in entries
            for vt in virtual
            if name != vt and name.startswith(vt + "_")
        }
        tables: dict[str, _Table] = {}
        opaque: list[str] = []
        for name, sql in entries:
            if name.startswith("sqlite_") or name in shadows:
                continue
            kind, content = "table", None
            if name in virtual:
                module, args = _module(virtual[name])
                if module not in _FTS or not self._readable(name):
                    opaque.append(f"table {name} ({module or 'virtual'})")
                    continue
                content = _content_option(args)
                if content == "":
                    opaque.append(f"table {name} ({module}, contentless)")
                    continue
                kind = "fts-external" if content else "fts"
            info = conn.execute(f"PRAGMA table_xinfo({_quote(name)})").fetchall()
            visible = [r for r in info if r[6] in (0, 2, 3)]  # hidden: 1 = virtual-table hidden
            columns = [r[1] for r in visible]
            insertable = [r[1] for r in info if r[6] == 0]
            pk = [r[1] for r in sorted((r for r in info if r[5]), key=lambda r: r[5])]
            rowid = kind != "table" or "WITHOUT ROWID" not in (sql or "").upper()
            tables[name] = _Table(name, kind, rowid, columns, insertable, pk, content)
        self._find_links(tables)
        return tables, opaque

    def _readable(self, name: str) -> bool:
        try:
            self._conn.execute(f"SELECT * FROM {_quote(name)} LIMIT 0").fetchall()
        except sqlite3.Error:
            return False
        return True

    def _find_links(self, tables: dict[str, _Table]) -> None:
        """Foreign keys (declared, or ``<table>_id`` columns) between editable tables."""
        lowered = {name.lower(): name for name in tables}
        for table in tables.values():
            if table.kind != "table":
                continue
            declared: set[str] = set()
            groups: dict[int, list[tuple[str, str, str | None]]] = {}
            for fk in self._conn.execute(f"PRAGMA foreign_key_list({_quote(table.name)})"):
                groups.setdefault(fk[0], []).append((fk[2], fk[3], fk[4]))
            for parts in groups.values():
                parent = parts[0][0]
                if parent not in tables:
                    continue
                child_cols = [p[1] for p in parts]
                targets = [p[2] for p in parts]
                declared.update(child_cols)
                parent_cols = None if any(t is None for t in targets) else [str(t) for t in targets]
                table.links.append((child_cols, parent, parent_cols))
            for column in table.columns:
                match = _ID_COLUMN.match(column)
                if column in declared or not match:
                    continue
                stem = match.group(1).lower()
                named = next(
                    (lowered[c] for c in (stem, stem + "s", stem + "es") if c in lowered), None
                )
                if named is None or named == table.name or tables[named].kind != "table":
                    continue
                table.links.append(([column], named, None))

    # -- reading ---------------------------------------------------------------------------

    def _rows(self, table: _Table, where: str = "", params: Sequence[Any] = ()) -> Iterator[Row]:
        name = _quote(table.name)
        if table.rowid:
            cursor = self._conn.execute(f"SELECT rowid, * FROM {name} {where}", params)
            names = [d[0] for d in cursor.description[1:]]
            for rec in cursor:
                yield Row(table.name, (rec[0],), dict(zip(names, rec[1:], strict=True)))
        else:
            cursor = self._conn.execute(f"SELECT * FROM {name} {where}", params)
            names = [d[0] for d in cursor.description]
            for rec in cursor:
                values = dict(zip(names, rec, strict=True))
                yield Row(table.name, tuple(values[c] for c in table.pk), values)

    @staticmethod
    def _parent_key(table: _Table, row: Row, columns: list[str] | None) -> tuple[Any, ...]:
        """The values a child row's foreign key holds when it points at ``row``."""
        columns = columns or table.pk or None
        if columns is None:
            return row.key
        return tuple(row.values.get(c) for c in columns)

    @_edit_errors
    def rows_for(
        self,
        linker: PageLinker,
        pages: set[str],
        orphan_test: Callable[[Row], bool] | None = None,
    ) -> list[Row]:
        """Rows that belong to ``pages`` (plus rows of no page that ``orphan_test`` accepts),
        and the rows that point at them.

        Args:
            linker: built from every page of the Memoryfield.
            pages: the keys of the pages whose rows are wanted.
            orphan_test: for rows that belong to no page: take it too?

        Returns:
            The rows, each with ``page`` set (None for an orphan).
        """
        chosen: dict[tuple[str, tuple[Any, ...]], Row] = {}
        scanned = [t for t in self.tables.values() if t.kind != "fts-external"]
        for table in scanned:
            for row in self._rows(table):
                page = linker.page_of(row.values.values())
                if page is not None and page in pages:
                    row.page = page
                    chosen[(table.name, row.key)] = row
                elif page is None and orphan_test is not None and orphan_test(row):
                    chosen[(table.name, row.key)] = row
        self._close_over_links(chosen)
        return list(chosen.values())

    def _close_over_links(self, chosen: dict[tuple[str, tuple[Any, ...]], Row]) -> None:
        """Add the rows that reference chosen rows (vectors of a chunk), transitively."""
        frontier = list(chosen.values())
        while frontier:
            added: list[Row] = []
            by_table: dict[str, list[Row]] = {}
            for row in frontier:
                by_table.setdefault(row.table, []).append(row)
            for child in self.tables.values():
                for child_cols, parent, parent_cols in child.links:
                    parents = by_table.get(parent)
                    if not parents:
                        continue
                    owner = {
                        self._parent_key(self.tables[parent], r, parent_cols): r.page
                        for r in parents
                    }
                    for row in self._referencing(child, child_cols, list(owner)):
                        ident = (child.name, row.key)
                        if ident in chosen:
                            continue
                        row.page = owner.get(tuple(row.values.get(c) for c in child_cols))
                        chosen[ident] = row
                        added.append(row)
            frontier = added

    def _referencing(
        self, table: _Table, columns: list[str], keys: list[tuple[Any, ...]]
    ) -> Iterator[Row]:
        if len(columns) == 1:
            values = [k[0] for k in keys if k[0] is not None]
            for start in range(0, len(values), _IN_BATCH):
                batch = values[start : start + _IN_BATCH]
                marks = ", ".join("?" * len(batch))
                yield from self._rows(table, f"WHERE {_quote(columns[0])} IN ({marks})", batch)
            return
        cond = " AND ".join(f"{_quote(c)} = ?" for c in columns)
        for key in keys:
            yield from self._rows(table, f"WHERE {cond}", key)

    # -- writing ---------------------------------------------------------------------------

    @_edit_errors
    def delete(self, rows: Sequence[Row]) -> int:
        """Delete rows (in one transaction). Returns how many were deleted."""
        deleted = 0
        with self._transaction():
            for row in rows:
                table = self.tables[row.table]
                cur = self._conn.execute(
                    f"DELETE FROM {_quote(table.name)} WHERE {self._key_condition(table)}",
                    row.key,
                )
                deleted += max(cur.rowcount, 0)
                self.touched.add(table.name)
        return deleted

    @_edit_errors
    def insert(self, rows: Sequence[Row]) -> tuple[int, int]:
        """Insert rows back with their keys (in one transaction).

        Returns:
            (rows inserted, rows skipped: their table is gone or their key is taken).
        """
        inserted = skipped = 0
        with self._transaction():
            for row in rows:
                table = self.tables.get(row.table)
                if table is None or table.kind == "fts-external":
                    skipped += 1
                    continue
                columns = [c for c in table.insertable if c in row.values]
                params = [row.values[c] for c in columns]
                if table.rowid and not self._rowid_alias(table):
                    columns, params = ["rowid", *columns], [row.key[0], *params]
                marks = ", ".join("?" * len(columns))
                names = ", ".join(_quote(c) for c in columns)
                try:
                    self._conn.execute(
                        f"INSERT INTO {_quote(table.name)} ({names}) VALUES ({marks})", params
                    )
                except sqlite3.IntegrityError:
                    skipped += 1
                    continue
                inserted += 1
                self.touched.add(table.name)
        return inserted, skipped

    def _key_condition(self, table: _Table) -> str:
        if table.rowid:
            return "rowid = ?"
        return " AND ".join(f"{_quote(c)} = ?" for c in table.pk)

    def _rowid_alias(self, table: _Table) -> bool:
        """An ``INTEGER PRIMARY KEY`` column is the rowid: insert it, not ``rowid``."""
        if table.kind != "table" or len(table.pk) != 1:
            return False
        info = self._conn.execute(f"PRAGMA table_info({_quote(table.name)})").fetchall()
        return any(r[1] == table.pk[0] and str(r[2]).upper() == "INTEGER" for r in info)

    def _transaction(self) -> _Tx:
        return _Tx(self._conn)

    @_edit_errors
    def compact(self) -> None:
        """Rebuild or merge the FTS indexes touched, refresh sampled statistics, VACUUM.

        Afterwards no free page, FTS segment or statistics sample keeps a deleted row.
        """
        conn = self._conn
        with self._transaction():
            for table in self.tables.values():
                name = _quote(table.name)
                if table.kind == "fts-external" and table.content in self.touched:
                    conn.execute(f"INSERT INTO {name}({name}) VALUES ('rebuild')")
                    conn.execute(f"INSERT INTO {name}({name}) VALUES ('optimize')")
                elif table.kind == "fts":
                    conn.execute(f"INSERT INTO {name}({name}) VALUES ('optimize')")
            stat4 = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat4'"
            ).fetchone()
            if stat4:
                conn.execute("ANALYZE")
        conn.execute("VACUUM")

    def close(self) -> None:
        """Close; a WAL is checkpointed into the file and removed.

        Raises:
            IndexEditError: a ``-wal`` file is left beside the copy.
        """
        if self._closed:
            return
        try:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error:
            pass
        self._conn.close()
        self._closed = True
        wal = self.path.with_name(self.path.name + "-wal")
        if wal.exists() and wal.stat().st_size:
            raise IndexEditError("the index's write-ahead log could not be checkpointed")
        for suffix in ("-wal", "-shm"):
            self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)


class _Tx:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on an error."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> None:
        self._conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self._conn.execute("COMMIT" if exc_type is None else "ROLLBACK")


def _module(sql: str) -> tuple[str | None, str]:
    """The module and argument text of ``... USING module(args)`` (args and ``;`` optional).

    The first ``USING`` whose rest is only ``(args)``, blanks and one ``;`` counts. Linear
    time: each blank run is read once, the end of the statement is found once.
    """
    end = len(sql.rstrip())
    if sql[:end].endswith(";"):
        end = len(sql[: end - 1].rstrip())
    for match in _USING.finditer(sql, 0, end):
        start = _BLANKS.match(sql, match.end(), end).end()  # type: ignore[union-attr]
        if start == end:
            return match.group(1).lower(), ""
        if sql[start] == "(" and sql[end - 1] == ")" and end - start >= 2:
            return match.group(1).lower(), sql[start + 1 : end - 1]
    return None, ""


def _content_option(args: str) -> str | None:
    """The ``content=`` option of an FTS table: None (own content), "" (contentless), a name."""
    match = _CONTENT.search(args)
    if not match:
        return None
    if match.group(1) is not None:
        return match.group(1).replace("''", "'")
    if match.group(2) is not None:
        return match.group(2).replace('""', '"')
    return match.group(3)


# -- stashed rows (quarantine) -------------------------------------------------------------


def _encode(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return {"b64": base64.b64encode(bytes(value)).decode("ascii")}
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        return base64.b64decode(value["b64"])
    return value


def encode_rows(rows: Sequence[Row]) -> list[dict[str, Any]]:
    """Rows as JSON-ready objects (blobs as base64)."""
    return [
        {
            "table": r.table,
            "key": [_encode(v) for v in r.key],
            "values": {k: _encode(v) for k, v in r.values.items()},
        }
        for r in rows
    ]


def decode_rows(data: Any) -> list[Row]:
    """The inverse of :func:`encode_rows`.

    Raises:
        ValueError: not what :func:`encode_rows` writes.
    """
    if not isinstance(data, list):
        raise ValueError("expected a list of rows")
    rows: list[Row] = []
    for item in data:
        if not (
            isinstance(item, dict)
            and isinstance(item.get("table"), str)
            and isinstance(item.get("key"), list)
            and isinstance(item.get("values"), dict)
        ):
            raise ValueError("malformed row")
        rows.append(
            Row(
                item["table"],
                tuple(_decode(v) for v in item["key"]),
                {str(k): _decode(v) for k, v in item["values"].items()},
            )
        )
    return rows
