"""Source adapters: read external memory stores into canonical records.

``open_source(fmt, path, settings, subject=..., namespace=...)`` returns a
:class:`~auditor.sources.files.base.Source`; ``detect_format(path)`` guesses the format from the
path when ``--format`` is not given.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from auditor.errors import InputError
from auditor.sources.files.base import Source, SourceItem

if TYPE_CHECKING:
    from auditor.config import Settings

__all__ = ["FORMATS", "Source", "SourceItem", "detect_format", "open_source"]

#: format name -> "module:class" (imported on use: no import-time plugin loading).
FORMATS: dict[str, str] = {
    "jsonl": "auditor.sources.files.jsonl:JsonlSource",
    "memoryfield": "auditor.sources.files.memoryfield:MemoryfieldSource",
    "kv": "auditor.sources.files.kv:KvSource",
    "state": "auditor.sources.files.state:StateSource",
}

_STATE_KEYS = {"objective", "constraints", "decisions", "completed", "open_questions"}


def detect_format(path: Path) -> str:
    """Guess the format: .jsonl/.ndjson, a .zip or folder (Memoryfield), .json (state or kv).

    Raises:
        InputError: the format cannot be told from the path.
    """
    if path.is_dir() or path.suffix.lower() == ".zip":
        return "memoryfield"
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return "jsonl"
    if suffix == ".json":
        try:
            with path.open("rb") as fh:
                head = fh.read(65536)
            start = json.loads(head) if len(head) < 65536 else None
        except (OSError, ValueError):
            start = None
        if isinstance(start, dict) and _STATE_KEYS & set(start):
            return "state"
        return "kv"
    raise InputError(
        f"{path}: cannot tell the format from the name; pass --format ({' | '.join(FORMATS)})"
    )


def open_source(
    fmt: str,
    path: Path,
    settings: Settings,
    *,
    subject: str | None = None,
    namespace: str | None = None,
) -> Source:
    """Create the source adapter for ``fmt``.

    Raises:
        InputError: unknown format, or the path does not exist.
    """
    target = FORMATS.get(fmt)
    if target is None:
        raise InputError(f"unknown import format {fmt!r}; expected one of {', '.join(FORMATS)}")
    module_name, _, class_name = target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    source: Source = cls(Path(path), settings, subject=subject, namespace=namespace)
    return source
