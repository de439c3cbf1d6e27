"""Street-address recognizers (strong shapes, weak shapes inside an address block) and the
joining of adjacent address parts. Used by :mod:`auditor.detectors.pii`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from auditor.detectors import _pii_terms as terms
from auditor.detectors._literals import LiteralSet
from auditor.detectors.pii_filters import business_address
from auditor.detectors.pii_presidio import (
    Pattern,
    PatternRecognizer,
    RecognizerResult,
    ResultAdjuster,
)
from auditor.detectors.pii_presidio import alternation as _alternation

#: How far (characters) a weak address shape may sit from a stronger address part.
ADDRESS_BLOCK_GAP = 60
#: Score a weak address shape gets next to a stronger address part.
ADDRESS_BLOCK_SCORE = 0.45
PARTS_KEY = "memaudit_parts"

#: Score of an address introduced as a business's or venue's (below the rule threshold).
BUSINESS_ADDRESS_SCORE = 0.3

_LETTERS = re.compile(r"[^\W\d_]+")


def cap_business(text: str, result: RecognizerResult) -> bool:
    """Cap ``result`` at :data:`BUSINESS_ADDRESS_SCORE` when it is a business address.

    "The company headquarters is at ...", "매장 주소: ...": the address is a company's or a
    venue's, not where a person lives. The result is marked as context-enhanced, so
    Presidio's context words ("address", "located") do not raise it again.

    Returns:
        True when the result was capped.
    """
    if not business_address(text, result.start, result.end):
        return False
    result.score = min(result.score, BUSINESS_ADDRESS_SCORE)
    result.recognition_metadata[RecognizerResult.IS_SCORE_ENHANCED_BY_CONTEXT_KEY] = True
    if result.analysis_explanation is not None:
        result.analysis_explanation.set_improved_score(result.score)
        result.analysis_explanation.append_textual_explanation_line(
            "introduced as a business or venue address"
        )
    return True


class _GatedRegex:
    """A compiled pattern that only searches texts holding one of its needles (followed by
    what must follow one, when that is given)."""

    __slots__ = ("_follow", "_needles", "_regex")

    def __init__(
        self, compiled: Any, needles: LiteralSet, follow: re.Pattern[str] | None = None
    ) -> None:
        self._regex, self._needles, self._follow = compiled, needles, follow

    def finditer(self, text: str, *args: Any, **kwargs: Any) -> Iterator[Any]:
        """The pattern's matches, or none at once when no needle occurs."""
        folded = text.casefold()
        if not self._needles.any_in(folded) or (
            self._follow is not None and self._follow.search(folded) is None
        ):
            return iter(())
        found: Iterator[Any] = self._regex.finditer(text, *args, **kwargs)
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self._regex, name)


class GatedPattern(Pattern):
    """A Presidio pattern with literals one of which every match contains.

    ``needles`` must be a necessary condition: every match of ``regex`` contains one of
    them, compared case-insensitively. The text and the needles are both case-folded
    (``str.casefold``, character by character), which equates at least the characters the
    ``regex`` module's case-insensitive matching does, so a text without a needle has no
    match and the regex is not run on it. An expensive pattern (one tried at every word
    start) then costs one Aho-Corasick pass on most texts.

    ``follow`` (optional) is what every match has right after its needle, written for the
    case-folded text with characters case folding leaves alone (punctuation, blanks,
    digits). The regex then runs only where ``needle + follow`` occurs in the folded text:
    a stronger condition, still a necessary one.
    """

    def __init__(
        self,
        name: str,
        regex: str,
        score: float,
        needles: Iterable[str],
        follow: str | None = None,
    ) -> None:
        folded = sorted({n.casefold() for n in needles}, key=lambda n: (-len(n), n))
        self._needles = LiteralSet(folded)
        if not self._needles.words:
            raise ValueError(f"pattern {name!r}: no needles")
        self._follow = (
            None
            if follow is None
            else re.compile("(?:" + "|".join(map(re.escape, folded)) + f")(?:{follow})")
        )
        super().__init__(name, regex, score)

    @property
    def compiled_regex(self) -> Any:
        """What Presidio matches with: the compiled regex behind the needle gate."""
        return self._compiled

    @compiled_regex.setter
    def compiled_regex(self, value: Any) -> None:
        self._compiled = None if value is None else _GatedRegex(value, self._needles, self._follow)


#: The street types the "number + street type + name" pattern accepts before a name, in
#: its order: in any case, and capitalised only. They are its needles too.
_STREET_TYPES_ANY_CASE = tuple(
    "rue avenue av. boulevard bd chemin allée impasse quai calle corso piazza".split()
)
_STREET_TYPES_CAPITALISED = ("Via", "Viale", "Place")


def _address_patterns() -> tuple[list[Pattern], list[Pattern]]:
    """(strong, weak) street-address patterns built from the vocabularies in ``_pii_terms``."""
    name = r"\p{Lu}[\p{L}'’.-]*"
    ordinal = (
        r"(?:\d{1,3}(?:st|nd|rd|th)|(?i:first|second|third|fourth|fifth|sixth|seventh"
        r"|eighth|ninth|tenth|north|south|east|west|old|new|upper|lower|great|little))"
    )
    num = r"\d{1,6}[A-Za-z]?"
    strong_suffix = _alternation(terms.STREET_SUFFIXES_STRONG)
    weak_suffix = _alternation(terms.STREET_SUFFIXES_WEAK)
    compound_long = _alternation([e for e in terms.STREET_COMPOUND_ENDINGS if len(e) > 3])
    compound_short = _alternation([e for e in terms.STREET_COMPOUND_ENDINGS if len(e) <= 3])
    prefix = _alternation(terms.STREET_PREFIX_TYPES)
    unit = _alternation(terms.UNIT_WORDS)
    ko_admin = _alternation(terms.KO_ADDRESS_UNITS)
    counters = (
        r"(?![\d]|[ \t]*(?:회|명|개|번(?!지|길)|시간|분|초|일|월|년|살|세|위|등|차|배|권|장|건|원"
        r"|만|천|억|%|kg|km))"
    )
    strong: list[Pattern] = [
        GatedPattern(
            "house number + street + suffix",
            rf"\b{num}(?:[ \t]+\d{{1,5}})?[ \t]+(?:(?:{name}|{ordinal})[ \t]+){{1,4}}"
            rf"(?:(?i:{strong_suffix})|{weak_suffix})\b\.?",
            0.5,
            (*terms.STREET_SUFFIXES_STRONG, *terms.STREET_SUFFIXES_WEAK),
        ),
        GatedPattern(
            "street word ending + number",
            # bounded: an unbounded run re-scanned from every letter of "'a'a'a..." was
            # quadratic; a street word is at most 64 letters with its ending
            # a short ending (tie, vej, weg) ends a compound of 7 letters or more
            # ("Hämeentie", "Rosenweg"), not a French "Partie 1" or "Sortie 3"
            rf"(?<![\p{{L}}\d])(?:\p{{L}}[\p{{L}}'’-]{{0,63}}(?i:{compound_long})"
            rf"|\p{{L}}[\p{{L}}'’-]{{3,63}}(?i:{compound_short}))"
            rf"\.?[ \t]+\d{{1,5}}[A-Za-z]?\b",
            0.5,
            terms.STREET_COMPOUND_ENDINGS,
            # an ending is followed by its house number; not "\d": Python's re may know
            # fewer digits than the regex module's (Unicode 15's Kawi digits), and no
            # digit is a blank or an ASCII letter (checked over every code point)
            follow=r"\.?[ \t]+[^\sA-Za-z]",
        ),
        GatedPattern(
            "street type + name + number",
            rf"(?<![\p{{L}}])(?i:{prefix})[ \t]+(?:[\p{{L}}'’.-]+[ \t]+){{0,6}}?\d{{1,5}}"
            rf"[A-Za-z]?\b",
            0.5,
            terms.STREET_PREFIX_TYPES,
        ),
        GatedPattern(
            "number + street type + name",
            r"(?<![\d.,])\b\d{1,5}[ \t,]+(?:(?i:"
            + "|".join(map(re.escape, _STREET_TYPES_ANY_CASE))
            + ")|"
            + "|".join(map(re.escape, _STREET_TYPES_CAPITALISED))
            + r")[ \t]+(?:(?i:de la|de|du|des|del"
            r"|della|di|da|do|dos|das|la|le|les|l')[ \t]*)?\p{Lu}[\p{L}'’-]+",
            0.5,
            (*_STREET_TYPES_ANY_CASE, *_STREET_TYPES_CAPITALISED),
        ),
        GatedPattern(
            "apartment / suite",
            rf"(?<![\p{{L}}])(?<!(?i:test|testing|benchmark|software|office) )(?i:{unit})"
            rf"[ \t]*(?:#|(?i:no\.?))?[ \t]*\d{{1,5}}[A-Za-z]?\b",
            0.4,
            terms.UNIT_WORDS,
        ),
        GatedPattern(
            "PO box",
            r"\b(?i:p\.?[ \t]?o\.?[ \t]?box|post[ \t]office[ \t]box)[ \t]*\d{1,6}\b",
            0.6,
            ["box"],
        ),
        GatedPattern(
            "military / unit box",
            r"\b(?i:psc|cmr|unit)[ \t]+\d{3,5},?[ \t]+(?i:box)[ \t]+\d{3,5}\b",
            0.7,
            ["box"],
        ),
        GatedPattern(
            "APO / FPO / DPO",
            r"\b(?i:apo|fpo|dpo)[ \t]+(?i:aa|ae|ap)[ \t]+\d{5}\b",
            0.7,
            ["apo", "fpo", "dpo"],
        ),
        GatedPattern(
            "KR administrative address",
            rf"(?<![가-힣])(?:[가-힣]{{2,}}(?:{ko_admin})[ \t]+){{1,3}}[가-힣\d]{{1,12}}"
            rf"(?<!으)(?:로|길|동|읍|면|리)[ \t]*\d{{1,5}}(?:-\d{{1,5}})?(?:번지|번길[ \t]*\d+)?"
            rf"{counters}",
            0.6,
            terms.KO_ADDRESS_UNITS,
        ),
        GatedPattern(
            "corner of A and B",
            r"(?i:\bcorner of)[ \t]+(?:\d{1,5}[ \t]+)?\p{Lu}[\p{L}'’.-]*(?:[ \t]+[\p{L}\d'’.-]+)"
            r"{0,4}?[ \t]+(?i:and|&)[ \t]+[\p{Lu}\d][\p{L}\d'’.-]*",
            0.4,
            ["corner of"],
        ),
        GatedPattern("KR building + flat", r"(?<!\d)\d{1,4}동[ \t]*\d{1,4}호(?!\d)", 0.5, ["호"]),
    ]
    weak: list[Pattern] = [
        GatedPattern(
            "lower-case street (weak)",
            r"\b\d{1,6}[ \t]+(?:[a-z][a-z'-]+[ \t]+){1,3}(?:street|avenue|road|lane|drive"
            r"|boulevard|st\.|rd\.|ave\.)\b",
            0.25,
            ["street", "avenue", "road", "lane", "drive", "boulevard", "st.", "rd.", "ave."],
        ),
        Pattern(
            "name + number (weak)",
            r"(?<![\p{L}\d])\p{Lu}[\p{Ll}'’.-]+(?:[ \t]+\p{Lu}[\p{Ll}'’.-]+){0,3}[ \t]+"
            r"\d{1,5}[A-Za-z]?\b(?![.:,/-]\d)",
            0.1,
        ),
        Pattern(
            "number + name (weak)",
            r"(?<![\d.,:/-])\b\d{1,6}[ \t]+\p{Lu}[\p{Ll}'’-]+(?:[ \t]+\p{Lu}[\p{Ll}'’-]+){0,3}\b",
            0.1,
        ),
        GatedPattern(
            "KR road + number (weak)",
            rf"(?<![가-힣])[가-힣\d]{{1,10}}(?<!으)(?:대로|로|길)[ \t]*\d{{1,5}}(?:-\d{{1,5}})?"
            rf"{counters}",
            0.25,
            ["로", "길"],
        ),
    ]
    return strong, weak


_ADDRESS_STRONG, _ADDRESS_WEAK = _address_patterns()
_NOT_STREET_WORDS = frozenset(terms.NOT_STREET_WORDS)


class StreetAddressRecognizer(ResultAdjuster, PatternRecognizer):
    """Street addresses and their parts: street + number, units, PO and military boxes."""

    def __init__(self, supported_language: str) -> None:
        super().__init__(
            supported_entity="STREET_ADDRESS",
            name="StreetAddressRecognizer",
            supported_language=supported_language,
            patterns=list(_ADDRESS_STRONG),
            context=list(terms.ADDRESS_CONTEXT),
            global_regex_flags=re.MULTILINE,
        )

    def adjust(
        self, text: str, results: list[RecognizerResult], others: list[RecognizerResult]
    ) -> list[RecognizerResult]:
        """Cap addresses introduced as a business's or venue's (see :func:`cap_business`)."""
        for result in results:
            cap_business(text, result)
        return results


class WeakAddressRecognizer(ResultAdjuster, PatternRecognizer):
    """Address shapes that are ordinary text unless someone's place is meant ("Jahu 80").

    They count with an address word nearby ("lives at", "address:", "주소") or within
    :data:`ADDRESS_BLOCK_GAP` characters of a stronger address part (an address block).
    """

    def __init__(self, supported_language: str) -> None:
        super().__init__(
            supported_entity="STREET_ADDRESS",
            name="WeakAddressRecognizer",
            supported_language=supported_language,
            patterns=list(_ADDRESS_WEAK),
            context=list(terms.ADDRESS_CONTEXT_NARROW),
            global_regex_flags=re.MULTILINE,
        )

    def invalidate_result(self, pattern_text: str) -> bool:
        """Refuse shapes whose words are dates, units or names of things ("6 Mar", "Windows 11").

        Args:
            pattern_text: the matched text.

        Returns:
            True when a word of the match is on the not-a-street list.
        """
        return any(w.lower() in _NOT_STREET_WORDS for w in _LETTERS.findall(pattern_text))

    def adjust(
        self, text: str, results: list[RecognizerResult], others: list[RecognizerResult]
    ) -> list[RecognizerResult]:
        """Raise weak shapes that sit in an address block (near a strong address part)."""
        anchors = [r for r in others if r.entity_type == "STREET_ADDRESS" and r.score >= 0.4]
        for result in results:
            if cap_business(text, result):
                continue
            near = any(
                a.start - ADDRESS_BLOCK_GAP <= result.end
                and result.start <= a.end + ADDRESS_BLOCK_GAP
                for a in anchors
            )
            if near and result.score < ADDRESS_BLOCK_SCORE:
                result.score = ADDRESS_BLOCK_SCORE
                result.recognition_metadata[RecognizerResult.IS_SCORE_ENHANCED_BY_CONTEXT_KEY] = (
                    True
                )
                if result.analysis_explanation is not None:
                    result.analysis_explanation.set_improved_score(result.score)
                    result.analysis_explanation.append_textual_explanation_line(
                        "next to another address part (address block)"
                    )
        return results


#: What may stand between two address parts that are reported as one address.
_ADDRESS_JOINER = re.compile(r"[\s,.;:#-]{0,4}")


def merge_address_parts(results: list[RecognizerResult], text: str) -> list[RecognizerResult]:
    """Join adjacent ``STREET_ADDRESS`` parts ("12 Main St" + "Apt. 3") into one result.

    The joined result keeps the strongest part's score and explanation and counts its parts.
    """
    merged: list[RecognizerResult] = []
    for r in results:  # sorted by start
        last = merged[-1] if merged else None
        if (
            last is not None
            and r.entity_type == "STREET_ADDRESS"
            and last.entity_type == "STREET_ADDRESS"
            and r.start >= last.start
            and (
                r.start <= last.end
                or _ADDRESS_JOINER.fullmatch(text, last.end, r.start) is not None
            )
        ):
            best = last if last.score >= r.score else r
            joined = RecognizerResult(
                entity_type="STREET_ADDRESS",
                start=last.start,
                end=max(last.end, r.end),
                score=best.score,
                analysis_explanation=best.analysis_explanation,
                recognition_metadata={
                    **best.recognition_metadata,
                    PARTS_KEY: int(last.recognition_metadata.get(PARTS_KEY, 1))
                    + int(r.recognition_metadata.get(PARTS_KEY, 1)),
                },
            )
            merged[-1] = joined
            continue
        merged.append(r)
    return merged
