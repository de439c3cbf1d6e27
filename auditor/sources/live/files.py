"""File connectors: a canonical JSONL file that an application keeps rewriting.

``jsonl`` options:

* ``path``: the file (the import format of DESIGN.md, one record per line);
* ``subject``: the subject for records that name none (optional).

Every sync is a full pull (a file has no cheap change cursor), so deletions are always
detected: a record whose line is gone is soft-deleted. The external id of a line is its
record's ``memory_id`` (or ``id``); ``supersedes`` links are translated into the
source's memory ids. Read-only: a file has nowhere to carry quarantine or erasure back
(edit or regenerate the file; the importer refuses erased subjects meanwhile).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from auditor.errors import InputError
from auditor.sources.files.base import SourceItem
from auditor.sources.files.jsonl import JsonlSource
from auditor.sources.live.base import Connector, memory_id_for

__all__ = ["JsonlConnector"]


class JsonlConnector(Connector):
    """A JSONL file of canonical records, pulled whole at every sync."""

    kind = "jsonl"
    supports = frozenset()

    def _path(self) -> Path:
        raw = self.config.options.get("path")
        if not isinstance(raw, str) or not raw:
            raise InputError(f"source {self.config.name!r}: option 'path' (the file) is required")
        path = Path(raw).expanduser()
        if not path.is_file():
            raise InputError(f"source {self.config.name!r}: the file does not exist")
        return path

    def test(self) -> dict[str, Any]:
        items = errors = 0
        subjects: set[str] = set()
        for item in self.pull(None):
            if item.error is not None:
                errors += 1
            elif item.raw is not None:
                items += 1
                subject = item.raw.get("subject")
                if isinstance(subject, str):
                    subjects.add(subject)
        return {"items": items, "unreadable": errors, "subjects": len(subjects)}

    def pull(self, cursor: str | None) -> Iterator[SourceItem]:
        source = JsonlSource(self._path(), self.settings)
        default_subject = self.config.options.get("subject")
        name = self.config.name
        for item in source.items():
            if item.raw is None:
                yield item
                continue
            raw = dict(item.raw)
            external = raw.get("memory_id", raw.get("id"))
            if not isinstance(external, str | int) or isinstance(external, bool) or external == "":
                yield SourceItem(
                    item.location, error="the record has no memory_id", consumed=item.consumed
                )
                continue
            external = str(external)
            raw.pop("id", None)
            if isinstance(default_subject, str) and not raw.get("subject"):
                raw["subject"] = default_subject
            if isinstance(raw.get("supersedes"), str) and raw["supersedes"]:
                raw["supersedes"] = memory_id_for(name, raw["supersedes"])
            raw.setdefault("source_status", "live")
            yield SourceItem(item.location, raw=raw, consumed=item.consumed, external_id=external)
