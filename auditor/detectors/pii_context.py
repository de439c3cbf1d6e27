"""Presidio's context step, made cheaper with the same results.

Presidio's lemma context enhancer deep-copies the results it is given, walks the tokens
from the start of the text for every result, and needs the text tokenised. Here the copy
copies only what can change (:class:`CheaplyCopied`), a result's token is found by
bisection, and the step is skipped, the text untokenised, when no result could gain
(:func:`may_gain_context`). ``tests/test_detector_pii.py`` compares each with Presidio's own
path.
"""

from __future__ import annotations

import bisect
import copy
import re
from collections.abc import Sequence
from typing import Any

from auditor.detectors.pii_presidio import (
    EntityRecognizer,
    LemmaContextAwareEnhancer,
    RecognizerResult,
)

__all__ = ["CheaplyCopied", "IndexedContextEnhancer", "may_gain_context"]


#: Values a result or its explanation holds that a copy may share (nothing in them changes).
_SHARED = (str, int, float, bool, type(None))
_HANGUL = re.compile(r"[\uac00-\ud7a3]")


class CheaplyCopied(list[RecognizerResult]):
    """Results whose deep copy copies only what can change (Presidio's enhancer deep-copies
    every result it is given: about a sixth of the analyzer's time on short texts).

    A result's fields and its explanation's are strings, numbers, flags or None, and its
    metadata a dict of those: a copy of the result, of its explanation and of the dict is
    the deep copy. Anything else in them falls back to :func:`copy.deepcopy`.
    """

    def __deepcopy__(self, memo: dict[int, Any]) -> list[RecognizerResult]:
        return [_copy_result(r, memo) for r in self]


def _copy_result(result: RecognizerResult, memo: dict[int, Any]) -> RecognizerResult:
    fields = vars(result)
    explanation = result.analysis_explanation
    metadata = result.recognition_metadata
    plain = all(isinstance(v, _SHARED) for k, v in fields.items() if k not in _NESTED)
    if not (
        plain
        and (explanation is None or all(isinstance(v, _SHARED) for v in vars(explanation).values()))
        and (metadata is None or all(isinstance(v, _SHARED) for v in metadata.values()))
    ):
        return copy.deepcopy(result, memo)
    out = copy.copy(result)
    out.analysis_explanation = None if explanation is None else copy.copy(explanation)
    out.recognition_metadata = None if metadata is None else dict(metadata)
    return out


_NESTED = frozenset({"analysis_explanation", "recognition_metadata"})


def may_gain_context(
    text: str, results: Sequence[RecognizerResult], recognizers: Sequence[EntityRecognizer]
) -> bool:
    """Whether Presidio's context step could raise one of ``results`` (see
    :meth:`IndexedContextEnhancer.enhance_using_context`): a result it does not skip
    (its recognizer known, with context words, not boosted already) whose recognizer has a
    context word inside the text, both case-folded."""
    by_id = {recognizer.id: recognizer for recognizer in recognizers}
    folded: str | None = None
    for result in results:
        meta = result.recognition_metadata
        if not meta:
            continue
        recognizer = by_id.get(meta.get(RecognizerResult.RECOGNIZER_IDENTIFIER_KEY))
        if recognizer is None or not recognizer.context:
            continue
        if meta.get(RecognizerResult.IS_SCORE_ENHANCED_BY_CONTEXT_KEY):
            continue
        if folded is None:
            folded = text.casefold()
        if any(word.lower().casefold() in folded for word in recognizer.context):
            return True
    return False


class IndexedContextEnhancer(LemmaContextAwareEnhancer):
    """Presidio's lemma context enhancer, locating a match's token by bisection, and given
    its results as :class:`CheaplyCopied` (same values, a cheaper deep copy).

    Presidio walks the tokens from the start of the text for every result (quadratic on a
    long page full of numbers); the token order lets a binary search give the same token.
    """

    def enhance_using_context(
        self,
        text: str,
        raw_results: list[RecognizerResult],
        nlp_artifacts: Any,
        recognizers: list[EntityRecognizer],
        context: list[str] | None = None,
    ) -> list[RecognizerResult]:
        """Presidio's context step, on the same results (see :class:`CheaplyCopied`).

        Skipped (the results copied unchanged, as Presidio would return them) when no
        result could gain: Presidio raises a result's score only when one of its
        recognizer's context words is a substring of a lemma near it, and a lemma here is
        a token's lower case (:data:`~auditor.detectors.pii_artifacts.LEMMA_COMPONENT`),
        so it needs the context word, case-folded, inside the case-folded text. Then the
        text is not tokenised for this step at all.
        """
        results = CheaplyCopied(raw_results)
        if not context and not may_gain_context(text, results, recognizers):
            return copy.deepcopy(results)
        return super().enhance_using_context(text, results, nlp_artifacts, recognizers, context)

    @staticmethod
    def _find_supportive_word_in_context(
        context_list: list[str],
        recognizer_context_list: list[str],
        matching_mode: str = "substring",
    ) -> str:
        """The first context word of the recognizer that opens a word near the match.

        Presidio's default is a substring anywhere in the word, so "sent" supports "62 State
        Senate" and "live" supports "deliverables"; a word's start is what the context
        lists mean ("address" -> "addresses", "live" -> "lives"; their other forms are
        listed). A Korean cue is still found anywhere in a word (compounds: "휴대전화"
        holds "전화"). ``matching_mode`` is Presidio's parameter, unused here.
        """
        if not context_list or not recognizer_context_list:
            return ""
        words = [w.lower() for w in context_list]
        for predefined in recognizer_context_list:
            cue = predefined.lower()
            if _HANGUL.search(cue):  # Korean compounds hold their cue anywhere: 휴대전화
                if any(cue in w for w in words):
                    return predefined
            elif any(w.startswith(cue) for w in words):
                return predefined
        return ""

    @staticmethod
    def _find_index_of_match_token(
        word: str, start: int, tokens: Any, tokens_indices: list[int]
    ) -> int:
        """The index of the first token that ends after ``start`` (Presidio's rule).

        Args:
            word: the matched text (unused; Presidio's signature).
            start: the match's start offset.
            tokens: the spaCy tokens.
            tokens_indices: each token's start offset, ascending.

        Returns:
            The token index.

        Raises:
            ValueError: no token covers or follows ``start`` (as Presidio).
        """
        i = max(0, bisect.bisect_right(tokens_indices, start) - 1)
        while i < len(tokens_indices):
            if tokens_indices[i] == start or start < tokens_indices[i] + len(tokens[i]):
                return i
            i += 1
        raise ValueError("match is not inside the tokenised text")
