"""Test seams shipped with memaudit: record factories and JSONL writers.

Used by memaudit's own tests, and by anyone testing an integration with memaudit.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from auditor.detectors.base import DetectContext, Detection, Detector, MemoryView

__all__ = ["SameFactDetector", "make_record", "subject_views", "write_jsonl"]

_counter = itertools.count(1)


def subject_views(
    facts: Sequence[str], subject: str = "user:t", *, step: timedelta = timedelta(hours=1)
) -> list[MemoryView]:
    """One subject's memories as detectors see them: ids ``m0``, ``m1``, ... in the order
    given, created ``step`` apart from 2026-01-01 (oldest first), user tier."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    return [
        MemoryView(
            memory_id=f"m{k}",
            subject=subject,
            fact=fact,
            trust_tier="user",
            created_at=start + step * k,
        )
        for k, fact in enumerate(facts)
    ]


def first_and_last_meet(first: str, last: str, filler: str, n: int = 30) -> bool:
    """Whether the contradiction detector's candidate step pairs ``first`` and ``last`` of
    one subject's store when ``n`` unrelated facts (``filler`` with ``{n}`` numbered) lie
    between them: the blocking keys of a reading, not shared words, must bring them
    together."""
    from auditor.detectors.contradiction import candidate_pairs  # noqa: PLC0415 - heavy

    facts = [first, *(filler.format(n=k) for k in range(n)), last]
    return frozenset({"m0", f"m{len(facts) - 1}"}) in candidate_pairs(subject_views(facts))


def make_record(**overrides: Any) -> dict[str, Any]:
    """A valid canonical raw record; keyword arguments override or add fields.

    Pass ``memory_id`` for a stable id; otherwise ids are ``t_1``, ``t_2``, ... per process.
    """
    n = next(_counter)
    record: dict[str, Any] = {
        "memory_id": f"t_{n}",
        "subject": "user:alice",
        "namespace": "tests",
        "kind": "semantic",
        "category": "preference",
        "fact": f"Prefers green tea, note {n}",
        "confidence": 0.9,
        "source": {"type": "explicit_statement", "session_id": "s1", "turn": n, "uri": None},
        "created_at": "2026-01-05T10:00:00Z",
        "updated_at": "2026-01-05T10:00:00Z",
        "expires_at": None,
        "supersedes": None,
        "access_count": 0,
        "last_accessed_at": None,
    }
    record.update(overrides)
    return record


def write_jsonl(path: Path, records: Iterable[dict[str, Any] | str | bytes]) -> Path:
    """Write records as JSONL; a ``str`` or ``bytes`` item is written as a raw line."""
    with Path(path).open("wb") as fh:
        for item in records:
            if isinstance(item, bytes):
                fh.write(item.rstrip(b"\n") + b"\n")
            elif isinstance(item, str):
                fh.write(item.rstrip("\n").encode("utf-8") + b"\n")
            else:
                fh.write(json.dumps(item, ensure_ascii=False).encode("utf-8") + b"\n")
    return Path(path)


class SameFactDetector(Detector):
    """A subject-scope test detector: pairs of memories with the same content hash.

    Register it in a test with
    ``monkeypatch.setitem(DETECTORS, "same_fact", "auditor.testing:SameFactDetector")``.
    ``calls`` counts the memories it was shown (to check what a scan re-evaluates).
    """

    name = "same_fact"
    scope = "subject"
    calls: list[str] = []

    def analyze_group(self, memories: Sequence[MemoryView], ctx: DetectContext) -> list[Detection]:
        """One detection per pair of memories with equal content hashes (older first)."""
        SameFactDetector.calls.extend(m.memory_id for m in memories)
        seen: dict[str, MemoryView] = {}
        out: list[Detection] = []
        for m in sorted(memories, key=lambda v: v.memory_id):
            first = seen.get(m.content_hash)
            if first is None:
                seen[m.content_hash] = m
                continue
            out.append(
                Detection(
                    (first.memory_id, m.memory_id),
                    self.name,
                    "same_fact",
                    1.0,
                    "two memories say the same thing",
                )
            )
        return out
