"""The canonical JSONL format of DESIGN.md: one JSON object per line, streamed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO

from auditor.errors import InputError
from auditor.sources.files._common import reject_constant
from auditor.sources.files.base import Source, SourceItem

__all__ = ["JsonlSource"]

_DRAIN = 1 << 20


class JsonlSource(Source):
    """Reads a JSONL file line by line; a bad line is an error item, the rest go on.

    Lines longer than ``max_record_bytes`` are skipped without being held in memory.
    """

    format = "jsonl"

    def items(self) -> Iterator[SourceItem]:
        if not self.path.is_file():
            raise InputError(f"{self.path}: not a file (the jsonl format reads one file)")
        try:
            fh = self.path.open("rb")
        except OSError as exc:
            raise InputError(f"{self.path}: cannot open: {exc.strerror}") from None
        with fh:
            yield from self._read(fh)

    def _read(self, fh: IO[bytes]) -> Iterator[SourceItem]:
        limit = self.settings.max_record_bytes
        lineno = 0
        while True:
            line = fh.readline(limit + 2)
            if not line:
                return
            lineno += 1
            consumed = len(line)
            where = f"line {lineno}"
            body = line.rstrip(b"\r\n")
            if len(body) > limit:
                if not line.endswith(b"\n"):
                    while chunk := fh.readline(_DRAIN):
                        consumed += len(chunk)
                        if chunk.endswith(b"\n"):
                            break
                yield SourceItem(
                    where, error=f"record is over the limit of {limit:,} bytes", consumed=consumed
                )
                continue
            if lineno == 1 and body.startswith(b"\xef\xbb\xbf"):
                body = body[3:]
            if not body.strip():
                yield SourceItem(where, consumed=consumed)
                continue
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield SourceItem(
                    where, error=f"invalid UTF-8 at byte {exc.start + 1}", consumed=consumed
                )
                continue
            try:
                raw = json.loads(text, parse_constant=reject_constant)
            except json.JSONDecodeError as exc:
                yield SourceItem(
                    where, error=f"invalid JSON: {exc.msg} (column {exc.colno})", consumed=consumed
                )
                continue
            except (ValueError, RecursionError) as exc:
                yield SourceItem(where, error=f"invalid JSON: {exc}", consumed=consumed)
                continue
            if not isinstance(raw, dict):
                yield SourceItem(
                    where,
                    error=f"expected a JSON object, got {type(raw).__name__}",
                    consumed=consumed,
                )
                continue
            yield SourceItem(where, raw=raw, consumed=consumed)
