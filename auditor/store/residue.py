"""Finding a subject's data anywhere: needles, matching, a generic search of the database.

Used by :mod:`auditor.erasure.requests`, :mod:`auditor.erasure.backup` and the connectors' erasure
verification (:mod:`auditor.sources.live`). A *needle* is a string that
must not remain after an erasure (the subject id, a fact, a PII value). Values are stored
in several shapes, so each needle is searched in each of its *forms*: as written, and as
JSON escapes it (``json.dumps`` with and without ``ensure_ascii``: SQLite's JSON columns
hold ``\\uXXXX`` escapes, PostgreSQL's ``jsonb::text`` holds the characters).

Matching is case-insensitive and respects word boundaries where the needle starts or ends
with a word character (``user:al`` does not match ``user:alice``). Every form of every
needle goes into one Aho-Corasick automaton (``pyahocorasick``), so a text, a row or a
file is searched in one pass however many needles there are (an erasure of a subject with
10,000 memories has tens of thousands). With few needles (a subject id alone) SQL does a
cheap, wider pre-filter first (``ILIKE`` on a prefix of each form, bound parameters,
escaped); with many, a table is read once in a streaming pass (:func:`search_database`,
:func:`matching_rows`). Python confirms every candidate with the exact rule, so both
paths find the same rows. Cost: linear in the rows and text searched, not rows times
needles. Results name places and count rows; they never carry the values found.
"""

from __future__ import annotations

import bisect
import json
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ahocorasick
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
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.types import Integer, String, TypeDecorator, TypeEngine, _Binary

from auditor.store.crypto import EncryptedText
from auditor.store.subject_keys import KeyStoreError

__all__ = [
    "REDACTED",
    "Hit",
    "Matcher",
    "SearchReport",
    "Span",
    "matching_rows",
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
#: Rows fetched per round trip in a streaming pass.
_BATCH_ROWS = 2000
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


def _is_word_byte(ch: str) -> bool:
    """A word character of raw bytes (as latin-1 text): ASCII letters, digits, ``_``."""
    return ch < "\x80" and (ch.isalnum() or ch == "_")


@dataclass(frozen=True)
class Span:
    """Where a needle occurs in a text or in raw bytes (the value itself is not kept)."""

    begin: int
    finish: int

    def start(self) -> int:
        """First offset of the match (as ``re.Match.start``)."""
        return self.begin

    def end(self) -> int:
        """Offset just past the match (as ``re.Match.end``)."""
        return self.finish


class _Automaton:
    """An Aho-Corasick automaton over lowered keys: every occurrence in one pass.

    Each key carries a payload (which needle, whether its ends must sit on a word
    boundary). :meth:`spans` keeps the occurrences whose boundaries hold and, like a
    regular-expression alternation, the leftmost and then longest of overlapping ones.
    """

    def __init__(self, keys: dict[str, tuple[int, bool, bool]], *, latin: bool) -> None:
        self._auto: Any = None
        self._word = _is_word_byte if latin else _is_word
        if keys:
            auto = ahocorasick.Automaton()
            for key, (index, head, tail) in keys.items():
                auto.add_word(key, (len(key), index, head, tail))
            auto.make_automaton()
            self._auto = auto

    def __bool__(self) -> bool:
        return self._auto is not None

    def raw(self, hay: str) -> Iterator[tuple[int, int, int]]:
        """(start, end, needle index) of every occurrence whose word boundaries hold."""
        if self._auto is None:
            return
        word = self._word
        size = len(hay)
        for last, (length, index, head, tail) in self._auto.iter(hay):
            start = last - length + 1
            if head and start > 0 and word(hay[start - 1]):
                continue
            if tail and last + 1 < size and word(hay[last + 1]):
                continue
            yield start, last + 1, index

    def spans(self, hay: str) -> list[tuple[int, int, int]]:
        """Non-overlapping occurrences, leftmost first and longest at each start."""
        found = sorted(self.raw(hay), key=lambda m: (m[0], m[0] - m[1]))
        out: list[tuple[int, int, int]] = []
        edge = -1
        for m in found:
            if m[0] >= edge:
                out.append(m)
                edge = m[1]
        return out


def _inside(
    spans: list[tuple[int, int, int]], ex: list[tuple[int, int, int]]
) -> list[tuple[int, int, int]]:
    """The spans that do not lie inside an excluded span."""
    if not ex:
        return spans
    return [m for m in spans if not any(a <= m[0] and m[1] <= b for a, b, _i in ex)]


def _bytes_text(data: bytes) -> str:
    """Raw bytes as text for the automaton: ASCII case folded, one character per byte."""
    return data.lower().decode("latin-1")


class Matcher:
    """Case-insensitive, word-bounded matching of needles in any of their stored forms.

    All forms of all needles go into one Aho-Corasick automaton (``pyahocorasick``), so a
    text is searched in one pass whatever the number of needles: an erasure of a subject
    with 10,000 memories searches each value once for its tens of thousands of forms.
    Text is matched on its lowered form; raw bytes ASCII case-insensitively.

    Args:
        needles: the strings to find (empty ones are ignored).
        exclude: longer identifiers that contain a needle but are someone else's (another
            subject ``user:ines.duarte-2`` when erasing ``user:ines.duarte``, an officer
            ``daniel.ops`` when a value is ``daniel``): a needle found inside one of their
            occurrences does not count.
    """

    def __init__(self, needles: Iterable[str], *, exclude: Iterable[str] = ()) -> None:
        self.needles: tuple[str, ...] = tuple(sorted({n for n in needles if n and n.strip()}))
        by_form: dict[str, int] = {}
        for index, needle in enumerate(self.needles):
            for form in needle_forms(needle):
                by_form.setdefault(form, index)
        self.forms: tuple[str, ...] = tuple(sorted(by_form, key=lambda f: (-len(f), f)))
        text_keys: dict[str, tuple[int, bool, bool]] = {}
        byte_keys: dict[str, tuple[int, bool, bool]] = {}
        for form, index in by_form.items():
            ends = (index, _is_word(form[0]), _is_word(form[-1]))
            text_keys.setdefault(form.lower(), ends)
            byte_keys.setdefault(_bytes_text(form.encode("utf-8")), ends)
        self._text = _Automaton(text_keys, latin=False)
        self._bytes = _Automaton(byte_keys, latin=True)
        lowered = {n.lower() for n in self.needles}
        self.exclude: tuple[str, ...] = tuple(
            sorted({e for e in exclude if e and e.strip() and e.lower() not in lowered})
        )
        ex_forms = {f for e in self.exclude for f in needle_forms(e)}
        # no boundaries: in raw bytes a field runs into the next one ("daniel.opsOps")
        self._ex_text = _Automaton({f.lower(): (0, False, False) for f in ex_forms}, latin=False)
        self._ex_bytes = _Automaton(
            {_bytes_text(f.encode("utf-8")): (0, False, False) for f in ex_forms}, latin=True
        )
        self.max_form_bytes = max(
            (len(f.encode("utf-8")) for f in (*self.forms, *ex_forms)), default=0
        )

    def __bool__(self) -> bool:
        return bool(self.needles)

    def _found(self, value: str, *, overlapping: bool) -> list[tuple[int, int, int]]:
        hay = value.lower()
        found = list(self._text.raw(hay)) if overlapping else self._text.spans(hay)
        if found and self._ex_text:
            found = _inside(found, list(self._ex_text.raw(hay)))
        return found

    def search(self, value: str) -> bool:
        """Whether ``value`` holds a needle.

        Args:
            value: any text.

        Returns:
            True when one of the forms occurs (case-insensitive, word-bounded) outside the
            occurrences of the excluded identifiers.
        """
        if not self._text:
            return False
        return bool(self._found(value, overlapping=True))

    def found_needles(self, value: str) -> set[str]:
        """The needles that occur in ``value`` (same rule as :meth:`search`).

        Args:
            value: any text.

        Returns:
            The needles found (the caller's own values: keep them in memory only).
        """
        if not self._text:
            return set()
        return {self.needles[i] for _s, _e, i in self._found(value, overlapping=True)}

    def offsets(self, value: str) -> list[int]:
        """Where needles start in ``value`` (same rule as :meth:`search`; lowered text).

        Args:
            value: any text (offsets refer to ``value.lower()``, which has the same length
                for the scripts memaudit stores but not for every character).

        Returns:
            The start offsets of the matches.
        """
        if not self._text:
            return []
        return [begin for begin, _e, _i in self._found(value, overlapping=True)]

    def finditer_bytes(self, data: bytes) -> Iterator[Span]:
        """Matches of the needles (UTF-8) in raw bytes.

        Args:
            data: bytes to search.

        Returns:
            An iterator of spans (ASCII case-insensitive, leftmost-longest, not
            overlapping), those inside an occurrence of an excluded identifier left out.
        """
        if not self._bytes:
            return iter(())
        hay = _bytes_text(data)
        found = self._bytes.spans(hay)
        if found and self._ex_bytes:
            found = _inside(found, list(self._ex_bytes.raw(hay)))
        return iter([Span(a, b) for a, b, _i in found])

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

    @property
    def prefilterable(self) -> bool:
        """Whether one SQL pre-filter query per column covers every form (few needles).

        With more forms, a single pass reading the column and matching here is cheaper
        than one ``ILIKE`` query per 100 forms (see :func:`matching_rows`).
        """
        return len(self.forms) <= _TERMS_PER_QUERY

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


def _decoded(col: Any) -> bool:
    """A text column whose stored form is not its text (a type decorator, e.g. encryption)."""
    type_ = getattr(col, "type", None)
    return isinstance(type_, TypeDecorator) and isinstance(getattr(type_, "impl", None), String)


def matching_rows(
    conn: Connection | Session,
    keys: Sequence[Any],
    col: Any,
    matcher: Matcher,
    *,
    where: ColumnElement[bool] | None = None,
    prefilter: bool | None = None,
) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Rows whose ``col`` (cast to text) holds a needle: (key values, the column's value).

    Few needles: one SQL pre-filter per 100 forms, confirmed here. Many needles (an
    erasure's values): one streaming pass over the column, matched by the automaton, so
    the cost grows with the rows and the text, not with rows times needles. A column whose
    type decodes its stored form (an encrypted column) is always read in a streaming pass
    and matched on its decoded text.

    Args:
        conn: a connection or session.
        keys: the columns that identify a row (a primary key).
        col: the column to search.
        matcher: what to look for.
        where: an extra condition on the rows.
        prefilter: force the SQL pre-filter (True) or the streaming pass (False); None
            chooses by the number of forms.

    Returns:
        An iterator of (keys, value) for the rows that match, each row once.
    """
    if not matcher:
        return
    if _decoded(col):  # e.g. an encrypted column: only Python sees its text
        stream = select(*keys, col).execution_options(yield_per=_BATCH_ROWS)
        if where is not None:
            stream = stream.where(where)
        for row in conn.execute(stream):
            value = row[-1]
            if value is not None and matcher.search_any(value):
                yield tuple(row[:-1]), value
        return
    expr = _as_text(col)
    if isinstance(getattr(col, "type", None), EncryptedText):
        prefilter = False  # SQL cannot see into ciphertext: decrypt and match here
    base = select(*keys, expr)
    if where is not None:
        base = base.where(where)
    if matcher.prefilterable if prefilter is None else prefilter:
        seen: set[tuple[Any, ...]] = set()
        for condition in matcher.conditions(expr):
            for row in conn.execute(base.where(condition)):
                key = tuple(row[:-1])
                if key in seen or row[-1] is None or not matcher.search(str(row[-1])):
                    continue
                seen.add(key)
                yield key, row[-1]
        return
    stream = base.where(expr.is_not(None)).execution_options(yield_per=_BATCH_ROWS)
    for row in conn.execute(stream):
        if matcher.search(str(row[-1])):
            yield tuple(row[:-1]), row[-1]


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


def _as_text(col: Any) -> Any:
    """A column as text: cast, except an encrypted column, read through its type (decrypted)."""
    return col if isinstance(getattr(col, "type", None), EncryptedText) else cast(col, Text)


def _decrypting(table: Table) -> Table:
    """Give a reflected table's encrypted columns their type, so searches see clear text."""
    from auditor.store.models import Base

    model = Base.metadata.tables.get(table.name)
    for col in table.columns:
        if model is not None and col.name in model.c:
            if isinstance(model.c[col.name].type, EncryptedText):
                col.type = model.c[col.name].type
    return table


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
    modes = [(col, _mode(col.type)) for col in table.columns]
    text_cols = [col for col, mode in modes if mode == "text"]
    byte_cols = [col for col, mode in modes if mode == "bytes"]
    report.columns += len(text_cols) + len(byte_cols)
    active = {kind: m for kind, m in matchers.items() if m}
    for col in byte_cols:
        for kind, matcher in active.items():
            report.add(
                f"table {table.name}.{col.name}", kind, _count_bytes_column(conn, col, matcher)
            )
    if not active or not text_cols:
        return
    if pk and all(m.prefilterable for m in active.values()):
        for col in text_cols:  # few needles: the database filters, one query per column
            for kind, matcher in active.items():
                count = sum(1 for _ in matching_rows(conn, pk, col, matcher, prefilter=True))
                report.add(f"table {table.name}.{col.name}", kind, count)
        return
    _pass_table(conn, table.name, text_cols, active, report)


def _pass_table(
    conn: Connection,
    name: str,
    cols: list[Column[Any]],
    matchers: dict[str, Matcher],
    report: SearchReport,
) -> None:
    """One streaming pass over a table's text columns; each row is matched once per kind.

    A row's values are joined with NUL (no needle holds one, and it is not a word
    character) and searched in one automaton pass; a match is credited to the column it
    lies in. Counts are rows per column, as with the pre-filter.
    """
    counts: dict[tuple[str, str], int] = {}
    stream = select(*(_as_text(c) for c in cols)).execution_options(yield_per=_BATCH_ROWS)
    for row in conn.execute(stream):
        parts = ["" if v is None else str(v).lower() for v in row]  # offsets of lowered text
        starts: list[int] = []
        offset = 0
        for part in parts:
            starts.append(offset)
            offset += len(part) + 1
        hay = "\x00".join(parts)
        for kind, matcher in matchers.items():
            hit_cols = {bisect.bisect_right(starts, begin) - 1 for begin in matcher.offsets(hay)}
            for index in hit_cols:
                key = (cols[index].name, kind)
                counts[key] = counts.get(key, 0) + 1
    for (col_name, kind), n in sorted(counts.items()):
        report.add(f"table {name}.{col_name}", kind, n)


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
            _search_table(conn, _decrypting(table), matchers, report)
        except (SQLAlchemyError, KeyStoreError) as exc:
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
