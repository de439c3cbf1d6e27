"""Record hygiene: provenance, page size and trust-tier claims of one memory.

Entities:

* ``missing_provenance``: the memory has no ``source`` at all (``source_type`` is None), so
  nobody can say who or what stated it; it falls to the lowest (unknown) trust tier.
* ``oversize_page``: a Memoryfield-style page over the soft page limit: the fact's UTF-8 size,
  or the imported page's ``extra.page_bytes`` (front matter included), is over
  ``params.max_page_bytes`` (default 8,192). Long pages are hard to review, retrieve and
  erase precisely; split them.
* ``claimed_tier_mismatch``: the record claims a trust tier (``extra.claimed_trust_tier``,
  kept by the importer from a ``trust_tier`` field, or ``extra.trust_tier`` on a record that
  is not stored yet) above the tier its provenance earns. Self-promotion is a classic
  memory-poisoning move; the claim is never honoured, but it is worth a look.

Params:
    max_page_bytes: the soft page limit in bytes (default 8192).
    checks: which of ``provenance``, ``size``, ``tier_claim`` to run (default: all).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from auditor.config import TIERS, tier_rank
from auditor.detectors.base import DetectContext, Detection, Detector, MemoryView

__all__ = ["HygieneDetector"]

DEFAULT_MAX_PAGE_BYTES = 8192
_CHECKS = ("provenance", "size", "tier_claim")
#: Where a claimed tier may be kept in ``extra`` (stored records, then raw records).
_CLAIM_KEYS = ("claimed_trust_tier", "trust_tier")


class HygieneDetector(Detector):
    """Provenance, size and tier-claim checks of one memory (see the module docstring).

    Raises:
        ValueError: a bad parameter (the message names it).
    """

    name = "hygiene"
    scope = "memory"

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        limit = self.params.get("max_page_bytes", DEFAULT_MAX_PAGE_BYTES)
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError("max_page_bytes must be a positive integer")
        self._limit: int = limit
        checks = self.params.get("checks", list(_CHECKS))
        if not isinstance(checks, list) or not set(checks) <= set(_CHECKS):
            raise ValueError(f"checks must be a list drawn from {', '.join(_CHECKS)}")
        self._checks = frozenset(checks)

    def analyze(self, memory: MemoryView, ctx: DetectContext) -> list[Detection]:
        """Hygiene detections for one memory."""
        out: list[Detection] = []
        mid = (memory.memory_id,)
        if "provenance" in self._checks and memory.source_type is None:
            out.append(
                Detection(
                    memory_ids=mid,
                    detector=self.name,
                    entity="missing_provenance",
                    score=1.0,
                    reason=(
                        "the memory has no source (who or what stated it is unknown); it is "
                        f"treated as the '{memory.trust_tier}' tier"
                    ),
                    details={"trust_tier": memory.trust_tier},
                )
            )
        if "size" in self._checks:
            fact_bytes = len(memory.fact.encode("utf-8", "surrogatepass"))
            page_bytes = memory.extra.get("page_bytes")
            if isinstance(page_bytes, bool) or not isinstance(page_bytes, int):
                page_bytes = None
            size = max(fact_bytes, page_bytes or 0)
            if size > self._limit:
                out.append(
                    Detection(
                        memory_ids=mid,
                        detector=self.name,
                        entity="oversize_page",
                        score=1.0,
                        reason=(
                            f"the page is {size:,} bytes, over the soft limit of "
                            f"{self._limit:,}; split it into smaller pages"
                        ),
                        details={
                            "fact_bytes": fact_bytes,
                            "page_bytes": page_bytes,
                            "max_page_bytes": self._limit,
                            "over_by": size - self._limit,
                        },
                    )
                )
        if "tier_claim" in self._checks:
            claim = next(
                (
                    memory.extra[k]
                    for k in _CLAIM_KEYS
                    if isinstance(memory.extra.get(k), str) and memory.extra[k] in TIERS
                ),
                None,
            )
            if (
                claim is not None
                and memory.trust_tier in TIERS
                and tier_rank(claim) > tier_rank(memory.trust_tier)
            ):
                out.append(
                    Detection(
                        memory_ids=mid,
                        detector=self.name,
                        entity="claimed_tier_mismatch",
                        score=0.9,
                        reason=(
                            f"the record claims the '{claim}' tier but its provenance "
                            f"({memory.source_type or 'none'}) earns only '{memory.trust_tier}'"
                        ),
                        details={
                            "claimed_tier": claim,
                            "actual_tier": memory.trust_tier,
                            "source_type": memory.source_type,
                        },
                    )
                )
        return out
