"""Days a fact rules out or says something recurs on: "never on D" against "every day" or
"every D" (:func:`never_every`), one of the frames' rule-conflict checks.

The cue words (never words, every-day phrases, weekday and weekend words, generic verbs)
are data: ``auditor/detectors/data/contradiction_frames.json``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

from auditor.detectors._contradiction_text import has_phrase, stem
from auditor.detectors._frame_words import (
    Tok,
    _data,
    _is_hangul,
    _ko_negated,
    _tokens,
    _typed,
)

__all__ = ["generic_verbs", "never_every"]

#: Facts whose schedule is remembered (as the frames' cache of facts).
_FACT_CACHE = 10_000


@dataclass(frozen=True, slots=True)
class _Schedule:
    """What one fact says of days, for :func:`never_every`.

    Attributes:
        rules_out: days it rules out ("never on Mondays", "주말에는 절대 ... 않는다").
        recurs_on: days it says something happens on, again and again ("every day",
            "every Saturday", "on Saturdays", "매주 토요일", "토요일마다").
        keys: its content words besides the day words and the first one (the action).
        first: its first content word, often the subject ("준호는", "Minji"): shared
            alone, it ties two facts only when one of them says no action of its own.
    """

    rules_out: frozenset[int]
    recurs_on: frozenset[int]
    keys: frozenset[str]
    first: str = ""


_ALL_DAYS = frozenset(range(1, 8))
#: "closed" as a state rules out its opposite's days ("closed on Wednesdays" / "opens every
#: day"), keyed as "open" is
_CLOSED = "closed"
#: words that say a place does not open ("is closed on Wednesdays", "stays shut on Sundays")
_CLOSED_WORDS = frozenset({_CLOSED, "shut"})
_CLOSED_KEYS, _OPEN = frozenset(stem(w) for w in _CLOSED_WORDS), stem("open")


_NOTHING = _Schedule(frozenset(), frozenset(), frozenset())


@functools.lru_cache(maxsize=_FACT_CACHE)
def _schedule(text: str) -> _Schedule:
    """The days one fact rules out or says something recurs on (see :class:`_Schedule`)."""
    d = _data()
    toks = _tokens(text)
    lows = [t.low for t in toks]
    ko = _is_hangul(text)
    if ko:
        neg = _ko_negated(toks)
        every = any(w in text for w in d["every_day_ko"])
        recurring = every or any(w in text for w in ("매주", "마다"))
    else:
        closed = not _CLOSED_WORDS.isdisjoint(lows)  # "is closed on Wednesdays": never open
        neg = closed or any(
            (w in d["never_words_set"] or w.endswith("n't")) and not _misses_none(lows, i)
            for i, w in enumerate(lows)
        )
        every = has_phrase(lows, d["every_day_phrases"])
        # "every Saturday", "on Saturdays": a plural day name recurs
        recurring = every or "every" in lows or any(w.endswith("s") and w in _days() for w in lows)
    if not (neg or recurring):
        return _NOTHING  # most facts: read no further
    said = _days_said(toks, ko)
    if not (said or every):
        return _NOTHING
    ordered = _ko_keys(toks) if ko else _en_keys(toks)
    if not ko and not _CLOSED_WORDS.isdisjoint(lows):
        ordered = [_OPEN if k in _CLOSED_KEYS else k for k in ordered]
    first = ordered[0] if ordered else ""
    keys = frozenset(ordered[1:]) - {first}
    if neg:
        return _Schedule(said - _ALL_DAYS if every else said, frozenset(), keys, first)
    return _Schedule(frozenset(), _ALL_DAYS if every else said, keys, first)


def _misses_none(lows: Sequence[str], i: int) -> bool:
    """Whether the negation at ``i`` denies missing or skipping ("hasn't skipped a day",
    "never misses"): a habit affirmed, no day ruled out."""
    miss = _data()["miss_words_set"]
    return any(w in miss for w in lows[i + 1 : i + 3])


@functools.cache
def _days() -> frozenset[str]:
    d = _data()
    out: set[str] = set(d["weekdays"])
    return frozenset(out | d["weekend_words_set"] | d["workday_words_set"])


def _days_said(toks: Sequence[Tok], ko: bool) -> frozenset[int]:
    """The days of the week the day words among ``toks`` name."""
    days = _days()
    day_toks = [t for t in toks if t.low in days or t.key in days or (ko and _is_ko_day(t.low))]
    return frozenset(_typed(day_toks, True).get("weekday", set())) if day_toks else frozenset()


@functools.cache
def _ko_days() -> tuple[str, ...]:
    return tuple(day for day in _days() if _is_hangul(day))


def _is_ko_day(low: str) -> bool:
    return any(day in low for day in _ko_days())


def _ko_keys(toks: Sequence[Tok]) -> list[str]:
    """Korean content keys in order: no day, every-day, negation or light-verb word."""
    d = _data()
    skip = (*d["never_words_ko"], *d["every_day_ko"], "전혀", "매주", "하지")
    return [
        t.key[:2]
        for t in toks
        if t.key
        and t.key not in d["ko_light_verbs_set"]
        and not _is_ko_day(t.low)
        and not t.low.startswith(skip)
    ]


def _en_keys(toks: Sequence[Tok]) -> list[str]:
    """English content keys in order: no short, day, qualifier or never word."""
    d = _data()
    days = _days()
    return [
        t.key
        for t in toks
        if len(t.key) > 2  # noqa: PLR2004 - short words are no action
        and t.low not in days
        and t.low not in d["qualifiers_set"]
        and t.low not in d["never_words_set"]
        and t.low not in ("day", "days", "week")
    ]


@functools.cache
def generic_verbs() -> frozenset[str]:
    """``generic_verbs`` of the data file, keyed as :func:`_schedule` keys words (English
    stems, Korean as written): "work", "take", "하"."""
    words = _data()["generic_verbs"]
    return frozenset(w if _is_hangul(w) else stem(w) for w in words)


def never_every(a_text: str, b_text: str) -> bool:
    """ "never on D" / "not on weekends" in one text and "every day" or "every D" in the
    other, about the same action (a shared content word besides the day words; for a
    single day, one that is not a generic verb such as "work" or "check")."""
    sa, sb = _schedule(a_text), _schedule(b_text)
    for no, yes in ((sa, sb), (sb, sa)):
        clash = no.rules_out & yes.recurs_on
        if not clash:
            continue
        # the action in both, or the first word of one as the other's action ("never goes
        # swimming on Mondays" / "swims every day")
        shared = (no.keys & yes.keys) | (no.keys & {yes.first}) | ({no.first} & yes.keys)
        if yes.recurs_on != _ALL_DAYS:
            shared -= generic_verbs()
        if shared == {_OPEN} and no.first != yes.first:
            continue  # "the bank is closed on Sundays" / "the bakery opens every day"
        if shared:
            return True
        # one subject, and one fact names no action but the day ("Standups never happen
        # on Fridays" / "Standups are every day"); two actions of one person are two habits
        first = {no.first} & {yes.first}
        if yes.recurs_on != _ALL_DAYS:
            first -= generic_verbs()
        if first - {""} and not (no.keys and yes.keys):
            return True
    return False
