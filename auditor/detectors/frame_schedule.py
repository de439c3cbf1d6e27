"""Days a fact rules out or says something recurs on: "never on D" against "every day" or
"every D", and "only on D" (Korean "-에만") against another day or "every morning"
(:func:`never_every`), one of the frames' rule-conflict checks. "Closed" and Korean closing
words ("문을 닫다", "휴무") rule days out of opening.

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
from auditor.detectors.frame_people import about_a_relative_apart

__all__ = ["days_said", "generic_verbs", "is_day_word", "never_every"]

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

    @property
    def said(self) -> bool:
        """Whether the fact says anything of days."""
        return bool(self.rules_out or self.recurs_on)


_ALL_DAYS = frozenset(range(1, 8))
#: "closed" as a state rules out its opposite's days ("closed on Wednesdays" / "opens every
#: day"), keyed as "open" is
_CLOSED = "closed"
#: words that say a place does not open ("is closed on Wednesdays", "stays shut on Sundays")
_CLOSED_WORDS = frozenset({_CLOSED, "shut"})
_CLOSED_KEYS, _OPEN = frozenset(stem(w) for w in _CLOSED_WORDS), stem("open")
#: Korean words that say a place does not open ("문을 닫는다", "휴무", "휴업"), by their start
_KO_CLOSED = ("닫", "휴무", "휴업", "휴점")
#: the key of a Korean word of opening or closing ("연다", "열어요", "닫고"): one key, as
#: "closed" is keyed as "open" in English
_KO_OPEN = "열"
#: words that limit what follows them to itself ("only walks the dog at weekends")
_ONLY_WORDS = frozenset({"only", "solely", "exclusively"})
#: words that end the clause an "only" limits ("only at weekends because her weekday ...")
_CLAUSE_WORDS = frozenset({"because", "but", "since", "while", "although", "though", "so"})


_NOTHING = _Schedule(frozenset(), frozenset(), frozenset())


@functools.lru_cache(maxsize=_FACT_CACHE)
def _schedule(text: str) -> _Schedule:
    """The days one fact rules out or says something recurs on (see :class:`_Schedule`)."""
    d = _data()
    toks = _tokens(text)
    lows = [t.low for t in toks]
    ko = _is_hangul(text)
    only: frozenset[int] = frozenset()
    if ko:
        closed = any(t.low.startswith(_KO_CLOSED) for t in toks)  # "문을 닫고 쉰다"
        neg = closed or _ko_negated(toks)
        every = any(w in text for w in d["every_day_ko"])
        recurring = every or any(w in text for w in ("매주", "마다"))
        only = _ko_only_days(toks)
        upto = len(toks)
    else:
        closed = not _CLOSED_WORDS.isdisjoint(lows)  # "is closed on Wednesdays": never open
        neg = closed or any(
            (w in d["never_words_set"] or w.endswith("n't"))
            and not _misses_none(lows, i)
            and lows[i + 1 : i + 2] != ["only"]  # "not only on Tuesdays but also ...": no rule
            for i, w in enumerate(lows)
        )
        every = has_phrase(lows, d["every_day_phrases"])
        # "every Saturday", "on Saturdays": a plural day name recurs
        recurring = every or "every" in lows or any(w.endswith("s") and w in _days() for w in lows)
        only, upto = _en_only_days(text, toks)
    if not (neg or recurring or only):
        return _NOTHING  # most facts: read no further
    said = days_said(toks, ko)
    # "every morning", "each evening" with no day named: every day
    every = every or (not ko and not said and _every_daypart(lows))
    if not (said or every):
        return _NOTHING
    ordered = _ko_keys(toks) if ko else _en_keys(toks)
    if ko:
        ordered = [_KO_OPEN if _ko_opening(k) else k for k in ordered]
    elif closed:
        ordered = [_OPEN if k in _CLOSED_KEYS else k for k in ordered]
    first = ordered[0] if ordered else ""
    keys = frozenset(ordered[1:]) - {first}
    if neg:
        return _Schedule(said - _ALL_DAYS if every else said, frozenset(), keys, first)
    if only and not every:
        # "only walks her dog at weekends", "토요일 아침에만 한다": those days and no other, for
        # the words up to the end of the clause the "only" limits (not "... because she
        # cycles at weekends" after it)
        if upto < len(toks):
            limited = _en_keys(toks[:upto])
            keys = frozenset(limited[1:]) - {first}
        return _Schedule(_ALL_DAYS - only, only, keys, first)
    return _Schedule(frozenset(), _ALL_DAYS if every else said, keys, first)


def _every_daypart(lows: Sequence[str]) -> bool:
    """Whether "every" or "each" comes right before a part of the day ("every morning")."""
    parts = _data()["dayparts"]
    return any(w in ("every", "each") and n in parts for w, n in zip(lows, lows[1:], strict=False))


def _en_only_days(text: str, toks: Sequence[Tok]) -> tuple[frozenset[int], int]:
    """The days an "only" limits a fact to ("Priya only walks her dog at weekends"): the
    day words after it in its clause (up to a comma, a semicolon or a word such as
    "because"), with the index of the token that ends that clause. Not "not only", "the
    only" ("Sunday is the only day ..."), nor an "only" that opens the fact ("Only Sam works
    on Mondays": it limits who). No days: ``(frozenset(), len(toks))``."""
    for i, t in enumerate(toks):
        if t.low not in _ONLY_WORDS or i == 0 or toks[i - 1].low in ("not", "the", "an"):
            continue
        end = i + 1
        while end < len(toks) and not (
            toks[end].low in _CLAUSE_WORDS
            or any(c in ",;:." for c in text[toks[end - 1].end : toks[end].start])
        ):
            end += 1
        days = days_said(toks[i + 1 : end], False)
        if days:
            return days, end
    return frozenset(), len(toks)


def _ko_only_days(toks: Sequence[Tok]) -> frozenset[int]:
    """The days a Korean "-만" limits a fact to ("토요일 아침에만 한다", "주말에만"): the day
    words of the word that ends in it and of the two words before it. Not "-지만" (but)."""
    for i, t in enumerate(toks):
        if not t.low.endswith(("에만", "만")) or t.low.endswith("지만"):
            continue
        days = days_said(toks[max(0, i - 2) : i + 1], True)
        if days:
            return days
    return frozenset()


def _ko_opening(key: str) -> bool:
    """Whether a Korean key is a word of opening or closing ("열어요", "연다", "닫고")."""
    return key.startswith((_KO_OPEN, *_KO_CLOSED)) or key == "연"


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


def days_said(toks: Sequence[Tok], ko: bool) -> frozenset[int]:
    """The days of the week the day words among ``toks`` name."""
    days = _days()
    day_toks = [t for t in toks if t.low in days or t.key in days or (ko and _is_ko_day(t.low))]
    return frozenset(_typed(day_toks, True).get("weekday", set())) if day_toks else frozenset()


@functools.cache
def _ko_days() -> tuple[str, ...]:
    return tuple(day for day in _days() if _is_hangul(day))


def _is_ko_day(low: str) -> bool:
    return any(day in low for day in _ko_days())


def is_day_word(t: Tok, ko: bool) -> bool:
    """Whether a token names days of the week ("Mondays", "weekdays", "토요일마다")."""
    days = _days()
    return t.low in days or t.key in days or (ko and _is_ko_day(t.low))


def _ko_keys(toks: Sequence[Tok]) -> list[str]:
    """Korean content keys in order: no day, every-day, negation or light-verb word."""
    d = _data()
    skip = (*d["never_words_ko"], *d["every_day_ko"], "전혀", "매주", "하지")
    return [
        t.key[:2]
        for t in toks
        if t.key
        and t.key[0].isalnum()  # (a comma is no shared action)
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
    if not (sa.said and sb.said) or about_a_relative_apart(a_text, b_text):
        return False  # "Dev's daughter only swims on Saturdays": not Dev's own habit
    for no, yes in ((sa, sb), (sb, sa)):
        clash = no.rules_out & yes.recurs_on
        if not clash:
            continue
        # the action in both, or the first word of one as the other's action ("never goes
        # swimming on Mondays" / "swims every day")
        # (a generic verb met in the other role is no shared action: "works Monday to
        # Friday, no weekends" / "cycles to work every day")
        crossed = ((no.keys & {yes.first}) | ({no.first} & yes.keys)) - generic_verbs()
        shared = (no.keys & yes.keys) | crossed
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
