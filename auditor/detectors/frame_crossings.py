"""One amount or date told once in each language: "Monthly rent is €1,650 for a flat in Campo
de Ourique" / "캄푸 드 오리크 아파트 월세로 매달 1,200유로를 낸다", "Her teacher's pension comes to
about $1,600 a month" / "교원연금으로 매달 2,140달러를 받는다", "Cataract surgery is scheduled
for May 6" / "백내장 수술 날짜는 5월 20일로 잡혔다".

The frames (:mod:`auditor.detectors.contradiction_frames`) and the anchored check
(:mod:`auditor.detectors.frame_anchors`) compare the words of two facts, so they compare
facts of one language. Across the two languages this check asks for an *anchor* instead:
one of a short list of everyday nouns of amounts and dated events, each in both languages
(``cross_anchors`` in the frames' data file: rent / 월세, pension / 연금, surgery / 수술,
...), on both sides. A name in both scripts is no anchor: tried first (consonant skeletons
that meet, "Campo" / "캄푸"), it linked two payments for a child named in both
("Pays 450,000 won a month for Hayun's daycare" / "하윤이 영어 수업비로 매달 12만 원"): a
person's name is in too many of a store's facts.

With an anchor, the two facts conflict when they give one typed value of a kind that
holds one value (an amount in one currency, a date, a month, a day of the month, a year,
an age) two values,
and every other such kind they both give agrees. An amount is compared only for the same
period: "a month" and "매달" are a month, "a year" and "매년" / "연봉" a year; a period on
one side only is taken as the same. Not read: a fact past ``_MAX_CHARS`` or one sentence,
a negation, a fact that names a relative, a plan against a present or a past fact, two
past dated facts (a history), a dated event that recurs (a session, a trip: the data
file's ``event_words``) and approximate amounts within a quarter of each other. Read by
:mod:`auditor.detectors.frame_reading`; :func:`crossing_keys` makes two such facts meet as
candidates.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from auditor.detectors._contradiction_data import EVENT_WORDS
from auditor.detectors._frame_words import (
    _data,
    _is_hangul,
    _ko_negated,
    _tokens,
    _typed,
)
from auditor.detectors._literals import LiteralSet
from auditor.detectors.contradiction_frames import frames_of, text_modality
from auditor.detectors.frame_anchors import near_values
from auditor.detectors.frame_people import names_a_relative

__all__ = ["crossed_typed", "crossing_keys"]

#: Facts whose reading is remembered (as the frames' cache of facts).
_FACT_CACHE = 10_000
#: A longer fact is a page or a tool result, not one amount or event.
_MAX_CHARS = 200
#: typed kinds (before ":") that hold one value of one amount or event
_KINDS = frozenset({"money", "date", "dom", "age", "year", "month"})
#: a year in an English fact ("in February 2022"; the frames read years only in Korean)
_EN_YEAR = re.compile(r"(?<![\d.,])(?:19|20)\d{2}(?![\d.,])")
#: Korean words of a period of an amount, in minutes like the typed durations
_KO_PERIODS = {"매달": 43_200.0, "매월": 43_200.0, "월세": 43_200.0, "월급": 43_200.0}
_KO_YEARLY = ("매년", "연봉", "연간", "일 년에", "1년에")
_YEAR = 525_600.0


@functools.cache
def _anchor_literals() -> LiteralSet:
    """Every anchor word, for a cheap test of a fact before it is read."""
    en, ko = _anchor_words()
    return LiteralSet([*en, *(w for w, _c in ko)])


@functools.cache
def _anchor_words() -> tuple[dict[str, str], tuple[tuple[str, str], ...]]:
    """(English key -> concept, (Korean word, concept) longest first) of ``cross_anchors``."""
    en: dict[str, str] = {}
    ko: list[tuple[str, str]] = []
    for concept, words in _data()["cross_anchors"].items():
        for word in words:
            if _is_hangul(word):
                ko.append((word, concept))
            else:
                en[word] = concept
    return en, tuple(sorted(ko, key=lambda wc: -len(wc[0])))


class _Reading:
    """What one fact gives this check: its typed values of :data:`_KINDS`, its period,
    its anchors (the concepts of ``cross_anchors``) and its modality."""

    __slots__ = ("concepts", "modality", "period", "typed")

    def __init__(
        self,
        typed: dict[str, frozenset[Any]],
        period: float | None,
        concepts: frozenset[str],
        modality: str,
    ) -> None:
        self.typed = typed
        self.period = period
        self.concepts = concepts
        self.modality = modality


@functools.lru_cache(maxsize=_FACT_CACHE)
def _reading(text: str) -> _Reading | None:
    """The reading of a short one-sentence fact with a typed value of :data:`_KINDS`."""
    if len(text) > _MAX_CHARS or not _anchor_literals().any_in(text.lower()):
        return None  # (no anchor word: the cheap test first)
    frames = frames_of(text)
    ko = _is_hangul(text)
    toks = _tokens(text)
    if len(frames) > 1 or (frames and frames[0].negated) or _negated(toks, ko):
        return None
    modality = frames[0].modality if frames else text_modality(text)
    if modality == "current" and not ko and any(t.low in ("was", "were") for t in toks):
        modality = "past"  # "The exam was on May 3": a date that has passed
    all_typed = _typed(toks, ko)
    typed = {k: frozenset(v) for k, v in all_typed.items() if k.split(":", 1)[0] in _KINDS}
    if not ko and "year" not in typed and (years := {int(y) for y in _EN_YEAR.findall(text)}):
        typed["year"] = frozenset(years)
    if not typed:
        return None
    lows = [t.low for t in toks]
    keys = [t.key for t in toks]
    if names_a_relative(text) or _recurring_event(lows, keys, ko):
        return None
    concepts = _concepts(toks, ko)
    if not concepts:
        return None
    return _Reading(typed, _period(text, all_typed, ko), concepts, modality)


def _negated(toks: Any, ko: bool) -> bool:
    """Whether a fact (that no frame read) says no ("안", "않", "not", "never")."""
    if ko:
        return _ko_negated(toks)
    return any(t.low in _EN_NEGATIONS or t.low.endswith("n't") for t in toks)


_EN_NEGATIONS = frozenset({"not", "never", "no"})


def _recurring_event(lows: list[str], keys: list[str], ko: bool) -> bool:
    """Whether a fact names a dated event that recurs ("session", "trip", "출장")."""
    if ko:
        return any(k.startswith(w) for k in keys for w in EVENT_WORDS if _is_hangul(w))
    return any(w in EVENT_WORDS or k in EVENT_WORDS for w, k in zip(lows, keys, strict=True))


def _concepts(toks: Any, ko: bool) -> frozenset[str]:
    """The anchor concepts a fact names (a Korean word may hold one: "교원연금")."""
    en_words, ko_words = _anchor_words()
    if ko:
        return frozenset(c for t in toks if _is_hangul(t.key) for w, c in ko_words if w in t.key)
    return frozenset(en_words.get(t.key) or en_words.get(t.low) or "" for t in toks) - {""}


def _period(text: str, typed: dict[str, set[Any]], ko: bool) -> float | None:
    """The period an amount is for (in minutes), or None when the fact gives none."""
    if ko:
        if any(w in text for w in _KO_YEARLY):
            return _YEAR
        return next((v for w, v in _KO_PERIODS.items() if w in text), None)
    durations = typed.get("duration")
    return min(durations) if durations else None


def crossed_typed(a_text: str, b_text: str) -> str | None:
    """The typed kind ("money", "date", ...) one fact in English and one in Korean give
    two values of, by an anchor they share (see the module), else None."""
    if _is_hangul(a_text) == _is_hangul(b_text):
        return None
    a, b = _reading(a_text), _reading(b_text)
    if a is None or b is None or not a.concepts & b.concepts or not _one_time(a, b):
        return None
    shared = set(a.typed) & set(b.typed)
    differing = [k for k in shared if not (a.typed[k] & b.typed[k])]
    if len(differing) != 1:
        return None
    kind = differing[0]
    if kind.startswith("money:") and not _amounts_apart(a, b, kind, a_text + b_text):
        return None
    return kind.split(":", 1)[0]


def _one_time(a: _Reading, b: _Reading) -> bool:
    """Whether two facts can tell one state or event: not a plan or a past state beside the
    present, not two past facts (a history) unless they share a one-time event
    (``cross_once``: one retirement told with two dates)."""
    if a.modality != b.modality and "current" in (a.modality, b.modality):
        return False
    if a.modality == "past" and b.modality == "past":
        return bool(a.concepts & b.concepts & _once_concepts())
    return True


@functools.cache
def _once_concepts() -> frozenset[str]:
    return frozenset(_data()["cross_once"])


def _amounts_apart(a: _Reading, b: _Reading, kind: str, texts: str) -> bool:
    """Whether two amounts of one currency are two values of one amount: for one period
    (a month's and a year's are two), and not approximately equal when either says
    "about"."""
    if a.period is not None and b.period is not None and a.period != b.period:
        return False
    return not (near_values(a.typed[kind], b.typed[kind]) and _approximate(texts))


def _approximate(texts: str) -> bool:
    """Whether the facts say an amount is approximate ("about", "약", "쯤")."""
    low = texts.lower()
    return any(w in low for w in _APPROX)


_APPROX = ("about", "around", "roughly", "approximately", "약 ", "쯤", "정도")


def crossing_keys(text: str) -> list[str]:
    """Blocking keys of a fact this check reads, one per concept ("cross:rent"), so that the
    same amount or event told in the other language meets it."""
    found = _reading(text)
    return [] if found is None else sorted("cross:" + c for c in found.concepts)
