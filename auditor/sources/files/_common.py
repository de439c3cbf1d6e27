"""Helpers shared by the source adapters (ids, names, times, whole-JSON documents)."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from auditor.config import Settings
from auditor.errors import InputError

__all__ = [
    "file_mtime_utc",
    "read_json_document",
    "reject_constant",
    "render_value",
    "show_name",
    "spread",
    "stable_id",
    "utf8_len",
]

_BOM = b"\xef\xbb\xbf"


def reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number memaudit accepts")


def stable_id(prefix: str, *parts: str) -> str:
    """A stable memory id: ``prefix`` + the first 26 hex chars of sha256 of the NUL-joined parts.

    Args:
        prefix: e.g. ``"kv_"``.
        *parts: the values that identify the item (namespace, subject, key, ...).

    Returns:
        The id; the same parts always give the same id.
    """
    digest = hashlib.sha256("\0".join(parts).encode("utf-8", errors="surrogatepass"))
    return prefix + digest.hexdigest()[:26]


def show_name(name: str, limit: int = 80) -> str:
    """A printable, bounded form of a key or entry name for locations and messages.

    Control and other non-printable characters are escaped; longer names are cut to ``limit``
    characters with an ellipsis.

    Args:
        name: the key or name.
        limit: the most characters kept.

    Returns:
        The printable form.
    """
    cut = name[:limit]
    shown = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in cut)
    return shown + ("…" if len(name) > limit else "")


def file_mtime_utc(path: Path) -> str:
    """The file's modification time as an ISO 8601 UTC string (whole seconds).

    Raises:
        InputError: the file cannot be stat'ed.
    """
    try:
        mtime = path.stat().st_mtime
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from None
    return datetime.fromtimestamp(int(mtime), tz=UTC).isoformat()


def utf8_len(text: str) -> int:
    return len(text.encode("utf-8", errors="surrogatepass"))


def render_value(value: Any) -> str:
    """A value as text: strings as they are, anything else as compact JSON (not ASCII-escaped)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def spread(sizes: list[int], total: int) -> list[int]:
    """Progress units per item: the estimates, with the rest of ``total`` given to the last.

    Args:
        sizes: an estimate per item.
        total: the whole document's size.

    Returns:
        One value per item, never negative; their sum is ``total`` when there are items.
    """
    out: list[int] = []
    left = total
    for size in sizes:
        step = max(0, min(size, left))
        out.append(step)
        left -= step
    if out and left > 0:
        out[-1] += left
    return out


class _Pairs:
    """An ``object_pairs_hook`` that builds dicts and remembers the last (outermost) pairs."""

    def __init__(self) -> None:
        self.last: list[tuple[str, Any]] = []

    def __call__(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        self.last = pairs
        return dict(pairs)


def read_json_document(
    path: Path, settings: Settings, what: str
) -> tuple[list[tuple[str, Any]], int]:
    """Read a whole JSON document whose top level must be an object.

    Args:
        path: the file.
        settings: gives ``max_source_file_bytes``.
        what: how to describe the expected object in the error, e.g. ``"of key -> value"``.

    Returns:
        The top-level (key, value) pairs in file order, duplicates included, and the file size.

    Raises:
        InputError: not a file, too big, invalid UTF-8 (with the byte offset), invalid JSON (with
            line and column), or a top level that is not an object.
    """
    if not path.is_file():
        raise InputError(f"{path}: not a file")
    limit = settings.max_source_file_bytes
    try:
        with path.open("rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise InputError(f"{path}: cannot open: {exc.strerror}") from None
    if len(data) > limit:
        raise InputError(f"{path}: the file is over the limit of {limit:,} bytes")
    skip = len(_BOM) if data.startswith(_BOM) else 0
    try:
        text = data[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: invalid UTF-8 at byte {skip + exc.start + 1}") from None
    hook = _Pairs()
    try:
        doc = json.loads(text, object_pairs_hook=hook, parse_constant=reject_constant)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise InputError(f"{path}: invalid JSON: nested too deeply") from None
    except ValueError as exc:
        raise InputError(f"{path}: invalid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected a JSON object {what}, got {type(doc).__name__}")
    return hook.last, len(data)
