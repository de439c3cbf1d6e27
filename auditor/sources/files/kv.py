"""Key-value agent memory (SEEDS.md section 4): a JSON object of key -> value.

The whole document is read into memory (bounded by ``max_source_file_bytes``); each key becomes
one memory about the ``--subject``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from auditor.sources.files._common import (
    file_mtime_utc,
    read_json_document,
    render_value,
    show_name,
    spread,
    stable_id,
    utf8_len,
)
from auditor.sources.files.base import Source, SourceItem

__all__ = ["KvSource"]


class KvSource(Source):
    """Reads a key-value memory dump: one memory per key, about ``--subject``.

    Duplicate keys follow JSON's usual rule (the last value wins); the earlier occurrences are
    reported as error items so the duplication is visible.
    """

    format = "kv"

    def items(self) -> Iterator[SourceItem]:
        """Yield one item per key.

        Raises:
            InputError: no ``--subject``, or the file is unreadable, too big, not JSON, or not a
                JSON object.
        """
        subject = self.require_subject()
        pairs, size = read_json_document(self.path, self.settings, "of key -> value")
        namespace = self.namespace or f"kv:{self.path.stem}"
        stamp = file_mtime_utc(self.path)
        last_index = {key: index for index, (key, _) in enumerate(pairs)}
        estimates = [utf8_len(key) + utf8_len(render_value(value)) + 6 for key, value in pairs]
        steps = spread(estimates, size)
        for index, ((key, value), consumed) in enumerate(zip(pairs, steps, strict=True)):
            where = f"key '{show_name(key)}'"
            if not key.strip():
                yield SourceItem(where, error="empty key", consumed=consumed)
                continue
            if last_index[key] != index:
                yield SourceItem(
                    where,
                    error="duplicate key; only its last value is imported",
                    consumed=consumed,
                )
                continue
            if value is None:
                yield SourceItem(where, error="value is null", consumed=consumed)
                continue
            fact = f"{key}: {render_value(value)}"
            if utf8_len(fact) > self.settings.max_record_bytes:
                yield SourceItem(
                    where,
                    error=f"entry is over the limit of {self.settings.max_record_bytes:,} bytes",
                    consumed=consumed,
                )
                continue
            raw: dict[str, Any] = {
                "memory_id": stable_id("kv_", namespace, subject, key),
                "subject": subject,
                "namespace": namespace,
                "kind": "semantic",
                "category": "note",
                "fact": fact,
                "source": {"type": "import", "uri": f"kv://{self.path.name}#{key}"},
                "created_at": stamp,
                "updated_at": stamp,
                "kv_key": key,
            }
            yield SourceItem(where, raw=raw, consumed=consumed, external_id=key)
