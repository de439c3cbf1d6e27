"""Source hygiene: what a live source keeps or serves that it should not.

Connectors (``auditor/connectors``) describe each item with the source's own view in
``extra`` (see ``docs/sources.md``); this detector reads only those fields, never the
text. Entities:

* ``retained_after_deletion``: the item is deleted or superseded, yet the source still
  holds its text (``extra.retained_in`` names where: ``"mem0.history"``, a checkpoint
  table, ...). A user who deleted a memory expects it gone; the store still keeps it.
* ``raw_turn_retained``: a raw conversation turn the source keeps next to the memories
  extracted from it (``extra.raw_turn`` true): retention of whole conversations, whatever
  they hold (personal data in them is the PII and special-category rules' business).
* ``orphan_vector``: a vector (embedding with a payload) whose memory item no longer
  exists (``extra.orphan_vector`` true): invisible to the application, still retrievable
  by similarity search, and easily missed by an erasure.
* ``expired_unswept``: the source still serves an item whose time is up: the connector
  says so (``extra.expired_unswept`` true), or ``expires_at`` is before the scan time
  while ``extra.source_status`` is ``live``.

An item the source no longer holds (``extra.source_status == "gone"``) never fires.

Params:
    checks: which of ``retained``, ``raw_turn``, ``orphan``, ``expired`` to run
        (default: all).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.detectors.base import DetectContext, Detection, Detector, MemoryView, Span

__all__ = ["SourceHygieneDetector"]

_CHECKS = ("retained", "raw_turn", "orphan", "expired")


def _flag(extra: Mapping[str, Any], key: str) -> bool:
    value = extra.get(key)
    return value is True or (isinstance(value, str) and value.lower() in ("true", "yes", "1"))


class SourceHygieneDetector(Detector):
    """Retention and serving problems of a live source's items (see the module docstring).

    Raises:
        ValueError: a bad parameter (the message names it).
    """

    name = "source_hygiene"
    scope = "memory"

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        checks = self.params.get("checks", list(_CHECKS))
        if not isinstance(checks, list) or not set(checks) <= set(_CHECKS):
            raise ValueError(f"checks must be a list drawn from {', '.join(_CHECKS)}")
        self._checks = frozenset(checks)

    def analyze(self, memory: MemoryView, ctx: DetectContext) -> list[Detection]:
        """Source-hygiene detections for one memory."""
        extra = memory.extra
        source_status = extra.get("source_status")
        if source_status == "gone":
            return []
        source = extra.get("source_name")
        where = extra.get("retained_in")
        base = {"source": source if isinstance(source, str) else None}
        out: list[Detection] = []

        def add(entity: str, reason: str, *, whole: bool = False, **details: Any) -> None:
            # retained text is what a person asked to be rid of: the whole fact is one span,
            # so the finding's evidence masks it instead of becoming another copy of it
            spans = (Span(0, len(memory.fact), "retained_text", memory.memory_id),) if whole else ()
            out.append(
                Detection(
                    memory_ids=(memory.memory_id,),
                    detector=self.name,
                    entity=entity,
                    score=1.0,
                    reason=reason,
                    spans=spans,
                    details={**base, **details},
                )
            )

        if (
            "retained" in self._checks
            and isinstance(where, str)
            and where
            and memory.status in ("deleted", "superseded")
        ):
            add(
                "retained_after_deletion",
                f"the source deleted or replaced this item but still keeps its text in {where}",
                whole=True,
                retained_in=where,
                status=memory.status,
            )
        if "raw_turn" in self._checks and _flag(extra, "raw_turn"):
            add(
                "raw_turn_retained",
                "the source keeps this raw conversation turn next to the memories taken from it",
                whole=True,
                retained_in=where if isinstance(where, str) else None,
            )
        if "orphan" in self._checks and _flag(extra, "orphan_vector"):
            add(
                "orphan_vector",
                "a vector whose memory item no longer exists: still found by similarity "
                "search, easily missed by an erasure",
            )
        if "expired" in self._checks:
            lapsed = memory.expires_at is not None and memory.expires_at <= ctx.now
            if _flag(extra, "expired_unswept") or (lapsed and source_status == "live"):
                details: dict[str, Any] = {"source_status": source_status}
                if memory.expires_at is not None:
                    details["expired_days"] = max(0, (ctx.now - memory.expires_at).days)
                add(
                    "expired_unswept",
                    "the source still serves this item although its time is up",
                    **details,
                )
        return out
