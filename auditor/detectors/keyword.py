"""A generic keyword detector: an operator's own deny-list as a rule, no code.

Params:
    terms: the words or phrases to find (required, non-empty).
    entity: the entity name reported (default ``keyword``).
    case_sensitive: match case exactly (default false).
    whole_word: only match whole words (default true).
    score: the score of a match (default 0.9).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from auditor.detectors.base import DetectContext, Detection, Detector, MemoryView, Span

__all__ = ["KeywordDetector"]


class KeywordDetector(Detector):
    """Finds configured terms (NFKC-normalised) in a memory's fact."""

    name = "keyword"

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        terms = self.params.get("terms")
        if (
            not isinstance(terms, list)
            or not terms
            or not all(isinstance(t, str) and t.strip() for t in terms)
        ):
            raise ValueError("params.terms must be a non-empty list of words or phrases")
        self.entity = str(self.params.get("entity", "keyword"))
        self.score = float(self.params.get("score", 0.9))
        flags = 0 if self.params.get("case_sensitive", False) else re.IGNORECASE
        words = sorted(
            {unicodedata.normalize("NFKC", t.strip()) for t in terms}, key=len, reverse=True
        )
        body = "|".join(re.escape(w) for w in words)
        if self.params.get("whole_word", True):
            body = rf"(?<!\w)(?:{body})(?!\w)"
        self.pattern = re.compile(body, flags)

    def analyze(self, memory: MemoryView, ctx: DetectContext) -> list[Detection]:
        """One detection listing every occurrence of a configured term."""
        text = unicodedata.normalize("NFKC", memory.fact)
        spans = tuple(Span(m.start(), m.end(), self.entity) for m in self.pattern.finditer(text))
        if not spans:
            return []
        return [
            Detection(
                memory_ids=(memory.memory_id,),
                detector=self.name,
                entity=self.entity,
                score=self.score,
                reason=f"{len(spans)} occurrence(s) of a configured term",
                spans=spans,
                details={"occurrences": len(spans)},
            )
        ]
