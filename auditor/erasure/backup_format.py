"""The backup file's format: its markers, how columns are encoded, and reading a JSONL backup.

A JSONL backup is a header line (format, version, schema revision, tables and their
columns with a kind each), one line per row (``{"t": table, "v": [values]}``) and an end
marker with the row counts and the sha256 of every line before it. :func:`_check_jsonl`
reads a whole file once and checks it without writing anything; :func:`_load_jsonl` then
copies its rows into a scratch database. Both are :mod:`auditor.erasure.backup`'s
internals (written by its ``_backup_jsonl``), not an interface of the package.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import JSON, LargeBinary, MetaData, Table, delete, insert
from sqlalchemy.exc import SQLAlchemyError

from auditor.errors import InputError
from auditor.store.db import Database
from auditor.store.types import UTCDateTime

__all__ = [
    "BACKUP_FORMAT",
    "FORMAT_VERSION",
    "GZIP_MAGIC",
    "SQLITE_MAGIC",
    "_BATCH",
    "_MAX_LINE_BYTES",
    "_check_jsonl",
    "_decode",
    "_encode",
    "_kind",
    "_load_jsonl",
    "_open_lines",
]

BACKUP_FORMAT = "memaudit-backup"
FORMAT_VERSION = 1
SQLITE_MAGIC = b"SQLite format 3\x00"
GZIP_MAGIC = b"\x1f\x8b"
_BATCH = 1000
_MAX_LINE_BYTES = 64 * 1024 * 1024


# -- column codecs ---------------------------------------------------------------------


def _kind(col: Any) -> str:
    type_ = col.type
    if isinstance(type_, UTCDateTime):
        return "datetime"
    if isinstance(type_, LargeBinary):
        return "bytes"
    if isinstance(type_, JSON):
        return "json"
    return "value"


def _encode(value: Any, kind: str) -> Any:
    if value is None:
        return None
    if kind == "datetime":
        return value.astimezone(UTC).isoformat()
    if kind == "bytes":
        return base64.b64encode(bytes(value)).decode("ascii")
    return value


def _decode(value: Any, kind: str) -> Any:
    if value is None:
        return None
    if kind == "datetime":
        parsed = datetime.fromisoformat(value)
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC).replace(tzinfo=None)  # a reflected SQLite DATETIME
    if kind == "bytes":
        return base64.b64decode(value)
    return value


# -- reading a JSONL backup ----------------------------------------------------------------


def _open_lines(path: Path) -> Iterator[bytes]:
    """The lines of a (possibly gzip-compressed) JSONL backup, each at most 64 MB."""
    with path.open("rb") as fh:
        compressed = fh.read(2) == GZIP_MAGIC
        fh.seek(0)
        stream: Any = gzip.GzipFile(fileobj=fh, mode="rb") if compressed else fh
        try:
            while True:
                line = stream.readline(_MAX_LINE_BYTES + 1)
                if not line:
                    return
                if len(line) > _MAX_LINE_BYTES:
                    raise InputError(f"backup {path}: a line is longer than 64 MB")
                yield line
        except (OSError, EOFError) as exc:
            raise InputError(f"backup {path}: cannot read it ({type(exc).__name__})") from None


def _check_jsonl(path: Path) -> tuple[dict[str, Any], dict[str, int]]:
    """Read the whole file once: header, row shapes, counts and hash. Nothing is written."""
    digest = hashlib.sha256()
    header: dict[str, Any] | None = None
    counts: dict[str, int] = {}
    widths: dict[str, int] = {}
    trailer: dict[str, Any] | None = None
    for n, line in enumerate(_open_lines(path), 1):
        if trailer is not None:
            raise InputError(f"backup {path} line {n}: data after the end marker")
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise InputError(f"backup {path} line {n}: not JSON (corrupt or truncated)") from None
        if not isinstance(obj, dict):
            raise InputError(f"backup {path} line {n}: not a JSON object")
        if header is None:
            if obj.get("format") != BACKUP_FORMAT or not isinstance(obj.get("tables"), list):
                raise InputError(f"backup {path}: not a memaudit backup (no memaudit header)")
            if obj.get("format_version") != FORMAT_VERSION:
                raise InputError(
                    f"backup {path}: format version {obj.get('format_version')} is not "
                    f"supported (this memaudit reads version {FORMAT_VERSION})"
                )
            header = obj
            widths = {t["name"]: len(t["columns"]) for t in obj["tables"]}
            digest.update(line)
            continue
        if obj.get("end") is True:
            trailer = obj
            continue
        digest.update(line)
        name, values = obj.get("t"), obj.get("v")
        if name not in widths or not isinstance(values, list) or len(values) != widths[name]:
            raise InputError(f"backup {path} line {n}: not a row of a table in the header")
        counts[name] = counts.get(name, 0) + 1
    if header is None:
        raise InputError(f"backup {path} is empty")
    if trailer is None:
        raise InputError(f"backup {path} has no end marker: it is truncated")
    if trailer.get("sha256") != digest.hexdigest():
        raise InputError(f"backup {path}: the content hash does not match (the file was changed)")
    expected = {k: v for k, v in (trailer.get("rows") or {}).items() if v}
    if expected != counts:
        raise InputError(f"backup {path}: row counts do not match its end marker")
    return header, counts


def _load_jsonl(path: Path, header: dict[str, Any], scratch: Database) -> None:
    metadata = MetaData()
    with scratch.engine.begin() as conn:
        tables: dict[str, tuple[Table, list[tuple[str, str]]]] = {}
        for spec in header["tables"]:
            name = spec["name"]
            try:
                tbl = Table(name, metadata, autoload_with=conn)
            except SQLAlchemyError:
                raise InputError(
                    f"backup {path}: table {name} does not exist at schema {header['revision']}"
                ) from None
            cols = [(str(c), str(k)) for c, k in spec["columns"]]
            missing = [c for c, _k in cols if c not in tbl.c]
            if missing:
                raise InputError(
                    f"backup {path}: column {name}.{missing[0]} does not exist at schema "
                    f"{header['revision']}"
                )
            tables[name] = (tbl, cols)
        for tbl, _cols in reversed(list(tables.values())):  # rows the migrations seeded
            conn.execute(delete(tbl))
        batch: list[dict[str, Any]] = []
        current: str | None = None

        def flush() -> None:
            if batch and current is not None:
                conn.execute(insert(tables[current][0]), batch)
                batch.clear()

        for n, line in enumerate(_open_lines(path), 1):
            if n == 1:
                continue
            obj = json.loads(line)
            if obj.get("end") is True:
                break
            name = obj["t"]
            if name != current:
                flush()
                current = name
            cols = tables[name][1]
            try:
                batch.append({c: _decode(v, k) for (c, k), v in zip(cols, obj["v"], strict=True)})
            except (ValueError, TypeError):
                raise InputError(f"backup {path} line {n}: a value does not decode") from None
            if len(batch) >= _BATCH:
                flush()
        flush()
