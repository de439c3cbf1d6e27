"""Finding a subject's data anywhere: needles, matching, a generic search of the database.

Used by :mod:`auditor.erasure`, :mod:`auditor.backup` and the connectors' erasure
verification (:mod:`auditor.connectors`). A *needle* is a string that
must not remain after an erasure (the subject id, a fact, a PII value). Values are stored
in several shapes, so each needle is searched in each of its *forms*: as written, and as
JSON escapes it (``json.dumps`` with and without ``ensure_ascii``: SQLite's JSON columns
hold ``\\uXXXX`` escapes, PostgreSQL's ``jsonb::text`` holds the characters).

Matching is case-insensitive and respects word boundaries where the needle starts or ends
with a word character (``user:al`` does not match ``user:alice``). SQL does a cheap,
wider pre-filter (``ILIKE`` on a prefix of each form, bound parameters, escaped); Python
confirms every candidate with the exact rule. Results name places and count rows; they
never carry the values found.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Boolean,
    Column,
    Connection,
    Date,
    DateTime,
    Interval,
    LargeBinary,
    MetaData,
    Numeric,
    Table,
    Text,
    Time,
    cast,
    inspect,
    or_,
    select,
    text,
)
from sqlalchemy.exc import SAWarning, SQLAlchemyError
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.types import Integer, TypeEngine, _Binary

__all__ = [
    "REDACTED",
    "Hit",
    "Matcher",
    "SearchReport",
    "needle_forms",
    "redact_json",
    "search_database",
    "search_file",
]

#: What a redacted string becomes.
REDACTED = "[erased]"
#: LIKE terms per query: SQLite's expression tree is limited to a depth of 1000.
_TERMS_PER_QUERY = 100
#: The SQL pre-filter matches on this prefix of a form (SQLite limits LIKE patterns to 50 KB).
_PREFILTER_CHARS = 400
_FILE_CHUNK = 4 * 1024 * 1024
_SKIPPED_TYPES: tuple[type[TypeEngine[Any]], ...] = (
    Integer,
    Numeric,
    Boolean,
    Date,
    DateTime,
    Time,
    Interval,
)


def needle_forms(needle: str) -> tuple[str, ...]:
    """The shapes a string takes in storage: as is, and JSON-escaped both ways.

    Args:
        needle: the value.

    Returns:
        The distinct forms, sorted.
    """
    return tuple(
        sorted(
            {
                needle,
                json.dumps(needle)[1:-1],
                json.dumps(needle, ensure_ascii=False)[1:-1],
            }
        )
    )


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _text_pattern(form: str) -> str:
    head = r"(?<!\w)" if _is_word(form[0]) else ""
    tail = r"(?!\w)" if _is_word(form[-1]) else ""
    return head + re.escape(form) + tail


def _bytes_pattern(form: str) -> bytes:
    data = form.encode("utf-8")
    head = rb"(?<![A-Za-z0-9_])" if _is_word(form[0]) else b""
    tail = rb"(?![A-Za-z0-9_])" if _is_word(form[-1]) else b""
    return head + re.escape(data) + tail


def _outside(
    found: Iterator[re.Match[Any]], excluded: Iterator[re.Match[Any]]
) -> Iterator[re.Match[Any]]:
    """The matches of ``found`` that do not lie inside a match of ``excluded``."""
    spans = [(m.start(), m.end()) for m in excluded]
    for m in found:
        if not any(a <= m.start() and m.end() <= b for a, b in spans):
            yield m


class Matcher:
    """Case-insensitive, word-bounded matching of needles in any of their stored forms.

    Args:
        needles: the strings to find (empty ones are ignored).
        exclude: longer identifiers that contain a needle but are someone else's (another
            subject ``user:ines.duarte-2`` when erasing ``user:ines.duarte``, an officer
            ``daniel.ops`` when a value is ``daniel``): a needle found inside one of their
            occurrences does not count.
    """

    def __init__(self, needles: Iterable[str], *, exclude: Iterable[str] = ()) -> None:
        self.needles: tuple[str, ...] = tuple(sorted({n for n in needles if n and n.strip()}))
        forms = {f for n in self.needles for f in needle_forms(n)}
        self.forms: tuple[str, ...] = tuple(sorted(forms, key=lambda f: (-len(f), f)))
        self._text = (
            re.compile("|".join(_text_pattern(f) for f in self.forms), re.IGNORECASE)
            if self.forms
            else None
        )
        self._bytes = (
            re.compile(b"|".join(_bytes_pattern(f) for f in self.forms), re.IGNORECASE)
            if self.forms
            else None
        )
        lowered = {n.lower() for n in self.needles}
        self.exclude: tuple[str, ...] = tuple(
            sorted({e for e in exclude if e and e.strip() and e.lower() not in lowered})
        )
        ex_forms = sorted(
            {f for e in self.exclude for f in needle_forms(e)}, key=lambda f: (-len(f), f)
        )
        # no boundaries: in raw bytes a field runs into the next one ("daniel.opsOps")
        self._ex_text = (
            re.compile("|".join(re.escape(f) for f in ex_forms), re.IGNORECASE)
            if ex_forms
            else None
        )
        self._ex_bytes = (
            re.compile(b"|".join(re.escape(f.encode("utf-8")) for f in ex_forms), re.IGNORECASE)
            if ex_forms
            else None
        )
        self.max_form_bytes = max(
            (len(f.encode("utf-8")) for f in (*self.forms, *ex_forms)), default=0
        )

    def __bool__(self) -> bool:
        return bool(self.needles)

    def search(self, value: str) -> bool:
        """Whether ``value`` holds a needle.

        Args:
            value: any text.

        Returns:
            True when one of the forms occurs (case-insensitive, word-bounded) outside the
            occurrences of the excluded identifiers.
        """
        if self._text is None:
            return False
        if self._ex_text is None:
            return self._text.search(value) is not None
        return (
            next(_outside(self._text.finditer(value), self._ex_text.finditer(value)), None)
            is not None
        )

    def finditer_bytes(self, data: bytes) -> Iterator[re.Match[bytes]]:
        """Matches of the needles (UTF-8) in raw bytes.

        Args:
            data: bytes to search.

        Returns:
            An iterator of matches (ASCII case-insensitive), those inside an occurrence of an
            excluded identifier left out.
        """
        if self._bytes is None:
            return iter(())
        if self._ex_bytes is None:
            return self._bytes.finditer(data)
        return _outside(self._bytes.finditer(data), self._ex_bytes.finditer(data))

    def search_any(self, value: Any) -> bool:
        """Whether a stored value (text, bytes, JSON-like) holds a needle.

        Args:
            value: a column value.

        Returns:
            True when a needle occurs in it.
        """
        if value is None:
            return False
        if isinstance(value, (bytes, bytearray, memoryview)):
            return next(self.finditer_bytes(bytes(value)), None) is not None
        if isinstance(value, str):
            return self.search(value)
        return self.search(json.dumps(value, ensure_ascii=False, default=str))

    def conditions(self, expr: ColumnElement[Any]) -> Iterator[ColumnElement[bool]]:
        """SQL pre-filters on ``expr``: each ORs up to 100 escaped, bound ``ILIKE`` terms.

        Args:
            expr: a text expression (a column cast to text).

        Returns:
            An iterator of conditions; a row matching none of them holds no needle.
        """
        prefixes = sorted({f[:_PREFILTER_CHARS] for f in self.forms})
        for start in range(0, len(prefixes), _TERMS_PER_QUERY):
            chunk = prefixes[start : start + _TERMS_PER_QUERY]
            yield or_(*(expr.icontains(p, autoescape=True) for p in chunk))


def redact_json(value: Any, matcher: Matcher, replacement: str = REDACTED) -> tuple[Any, bool]:
    """Replace every string (and dict key) in a JSON-like value that holds a needle.

    Args:
        value: a JSON-like value.
        matcher: what to look for.
        replacement: what a matching string becomes.

    Returns:
        (the new value, whether anything changed).
    """
    if isinstance(value, str):
        return (replacement, True) if matcher.search(value) else (value, False)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        changed = False
        for k, v in value.items():
            new_k, k_changed = (
                redact_json(k, matcher, replacement) if isinstance(k, str) else (k, False)
            )
            new_v, v_changed = redact_json(v, matcher, replacement)
            if new_k in out:  # two keys redacted to the same placeholder
                new_k = f"{new_k}{len(out)}"
            out[new_k] = new_v
            changed = changed or k_changed or v_changed
        return out, changed
    if isinstance(value, (list, tuple)):
        items = [redact_json(v, matcher, replacement) for v in value]
        return [v for v, _ in items], any(c for _, c in items)
    return value, False


@dataclass(frozen=True)
class Hit:
    """Where a needle was found: a place, which kind of needle, how many rows or matches."""

    place: str
    kind: str
    count: int

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (no value: the place, the kind and the count)."""
        return {"place": self.place, "kind": self.kind, "count": self.count}


@dataclass
class SearchReport:
    """What a search looked at and what it found."""

    hits: list[Hit] = field(default_factory=list)
    tables: int = 0
    columns: int = 0
    files: int = 0
    unsearchable: list[str] = field(default_factory=list)

    def add(self, place: str, kind: str, count: int) -> None:
        """Record ``count`` finds of ``kind`` at ``place`` (nothing when zero)."""
        if count:
            self.hits.append(Hit(place, kind, count))


def _mode(type_: TypeEngine[Any]) -> str:
    if isinstance(type_, (LargeBinary, _Binary)):
        return "bytes"
    if isinstance(type_, _SKIPPED_TYPES):
        return "skip"
    return "text"


def _search_table(
    conn: Connection, table: Table, matchers: dict[str, Matcher], report: SearchReport
) -> None:
    pk = list(table.primary_key.columns)
    for col in table.columns:
        mode = _mode(col.type)
        if mode == "skip":
            continue
        report.columns += 1
        for kind, matcher in matchers.items():
            if not matcher:
                continue
            if mode == "bytes":
                count = _count_bytes_column(conn, col, matcher)
            else:
                count = _count_text_column(conn, col, pk, matcher)
            report.add(f"table {table.name}.{col.name}", kind, count)


def _count_text_column(
    conn: Connection, col: Column[Any], pk: list[Column[Any]], matcher: Matcher
) -> int:
    expr = cast(col, Text)
    seen: set[tuple[Any, ...]] = set()
    best = 0
    for condition in matcher.conditions(expr):
        in_chunk = 0
        for row in conn.execute(select(*pk, expr).where(condition)):
            value = row[-1]
            if value is None or not matcher.search(str(value)):
                continue
            in_chunk += 1
            if pk:
                seen.add(tuple(row[:-1]))
        best = max(best, in_chunk)
    return len(seen) if pk else best


def _count_bytes_column(conn: Connection, col: Column[Any], matcher: Matcher) -> int:
    count = 0
    result = conn.execution_options(yield_per=500).execute(select(col).where(col.is_not(None)))
    for (value,) in result:
        if next(matcher.finditer_bytes(bytes(value)), None) is not None:
            count += 1
    return count


def _search_statistics(
    conn: Connection, matchers: dict[str, Matcher], report: SearchReport
) -> None:
    """Planner statistics keep sample values: PostgreSQL's pg_stats, SQLite's sqlite_stat4."""
    if conn.dialect.name == "postgresql":
        rows = conn.execute(
            text(
                "SELECT tablename, attname, most_common_vals::text, histogram_bounds::text "
                "FROM pg_stats WHERE schemaname = current_schema()"
            )
        ).all()
        for kind, matcher in matchers.items():
            counts: dict[str, int] = {}
            for tablename, attname, mcv, bounds in rows:
                if matcher and any(v is not None and matcher.search(v) for v in (mcv, bounds)):
                    place = f"statistics pg_stats {tablename}.{attname}"
                    counts[place] = counts.get(place, 0) + 1
            for place, n in counts.items():
                report.add(place, kind, n)
        return
    if conn.dialect.name == "sqlite":
        exists = conn.execute(
            text("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :n"),
            {"n": "sqlite_stat4"},
        ).first()
        if exists is None:
            return
        samples = conn.execute(text("SELECT tbl, sample FROM sqlite_stat4")).all()
        for kind, matcher in matchers.items():
            counts = {}
            for tbl, sample in samples:
                if matcher and sample is not None and matcher.search_any(sample):
                    place = f"statistics sqlite_stat4 {tbl}"
                    counts[place] = counts.get(place, 0) + 1
            for place, n in counts.items():
                report.add(place, kind, n)


def search_database(conn: Connection, matchers: dict[str, Matcher]) -> SearchReport:
    """Search every table and every text, JSON and binary column of the database.

    Tables are found by reflection, so tables memaudit does not own (APScheduler's job
    store, procrastinate's queue, an FTS or vector index someone added) are searched too.
    Numeric, boolean and time columns cannot hold the needles and are skipped.

    Args:
        conn: a connection (PostgreSQL: the schema of its search path).
        matchers: needle kind (``subject id``, ``identifying value``) -> matcher.

    Returns:
        The report: hits by place and kind, and what could not be searched.
    """
    report = SearchReport()
    names = inspect(conn).get_table_names()
    metadata = MetaData()
    for name in sorted(names):
        try:
            with warnings.catch_warnings():  # e.g. an expression index: irrelevant to the data
                warnings.simplefilter("ignore", SAWarning)
                table = Table(name, metadata, autoload_with=conn)
        except SQLAlchemyError as exc:
            report.unsearchable.append(f"table {name}: {type(exc).__name__}")
            continue
        report.tables += 1
        try:
            _search_table(conn, table, matchers, report)
        except SQLAlchemyError as exc:
            report.unsearchable.append(f"table {name}: {type(exc).__name__}")
            if conn.in_transaction():
                conn.rollback()
    _search_statistics(conn, matchers, report)
    return report


def search_file(path: Path, matcher: Matcher) -> int:
    """How often the needles occur in a file (a log, a database file), read in chunks.

    Args:
        path: the file.
        matcher: what to look for.

    Returns:
        The number of matches.

    Raises:
        OSError: the file cannot be read.
    """
    if not matcher:
        return 0
    overlap = matcher.max_form_bytes + 8
    count = 0
    buf = b""
    with path.open("rb") as fh:
        while True:
            chunk = fh.read(_FILE_CHUNK)
            eof = not chunk
            buf += chunk
            limit = len(buf) if eof else max(0, len(buf) - overlap)
            for m in matcher.finditer_bytes(buf):
                if m.start() < limit:
                    count += 1
            buf = buf[limit:]
            if eof:
                return count
