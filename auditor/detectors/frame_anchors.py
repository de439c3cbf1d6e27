"""One event or amount told with other words: two short facts that give one typed value
(a date, a month, a day of the month, an amount of money, a count, an age) two values that
do not overlap, and say the same thing around it in other grammar ("Ben's mortgage payment
is £950 a month" / "Ben pays £1,100 a month on his mortgage", "Hana's car insurance renews
in June" / "is due for renewal in November", "논문 마감은 6월 30일이다" / "논문 제출
마감일은 7월 15일이다").

The frames of :mod:`auditor.detectors.contradiction_frames` compare a head with a head and a
relation with a relation, so a verb in one fact that is a noun in the other ("pays" /
"payment", "renews" / "renewal", "마감" / "마감일") keeps them apart. This check compares
the facts' content words as a bag instead, after folding such derived nouns onto their verb:
the bags must be equal but for one word of detail on one side only. Two words that differ on
both sides are two events ("signed in March" / "expires in March"), not one told twice; a
relative or an owner as the extra word is another person or thing ("my rent" / "my
sister's rent"). Only short single-sentence facts in the present are read.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from auditor.detectors._contradiction_text import stem
from auditor.detectors._frame_words import (
    Tok,
    _data,
    _is_hangul,
    _month_names,
    _tokens,
    _typed,
    relatives,
)
from auditor.detectors.frame_occasions import SCOPE_KINDS, scope_words, told_in_past

__all__ = ["AGE_APART", "ages_close", "anchored_typed", "folded", "near_values", "other_period"]

#: typed kinds (the part before ":") one event or amount can hold one value of
_ANCHOR_KINDS = frozenset({"date", "month", "dom", "money", "count", "age", "clock"})
#: typed kinds that say when: two past events on two dates are a history, not one event
_WHEN_KINDS = frozenset({"date", "month", "dom"})
#: two ages closer than this may be one person's age before and after a birthday
AGE_APART = 2
#: the most tokens of a fact this check reads (a short fact, not a page)
_MAX_TOKENS = 24
#: content words that name no event: light verbs and the words of a copula
_LIGHT = frozenset(
    {"has", "have", "had", "use", "uses", "get", "gets", "due", "set", "scheduled", "happen"}
)
#: verbs that only tie a thing to its price (keys as tokens and :func:`folded` give them)
_MONEY_VERBS = frozenset({"pay", "paid", "cost", "spend", "spent", "charg", "내", "납부"})
#: English noun endings folded onto their verb ("payment" -> "pay", "renewal" -> "renew")
_EN_DERIVED = (("ment", 3), ("al", 4))
#: Korean noun endings for "the day of" folded away ("마감일" -> "마감", "월급날" -> "월급")
_KO_DAY = ("일", "날")


def anchored_typed(
    a_text: str, b_text: str, owners: frozenset[str] = frozenset(), *, approx: bool = False
) -> str | None:
    """The typed kind two short facts give different values of one event or amount, or None.

    Args:
        a_text: the older fact.
        b_text: the newer fact.
        owners: possessor keys of either fact's frames (an extra word that is one names
            another thing).
        approx: either fact says its value is approximate ("about 150"): values within a
            quarter of each other agree.

    Returns:
        The value type ("date", "money", ...) when the facts conflict, else None.
    """
    ta, tb = _tokens(a_text), _tokens(b_text)
    if not ta or not tb or len(ta) > _MAX_TOKENS or len(tb) > _MAX_TOKENS:
        return None
    ko = _is_hangul(a_text)
    if ko != _is_hangul(b_text):
        return None
    typed_a, typed_b = _typed(ta, ko), _typed(tb, ko)
    kind = _differing_kind(typed_a, typed_b, approx=approx)
    if kind is None:
        return None
    if kind in _WHEN_KINDS and told_in_past(a_text) and told_in_past(b_text):
        return None  # "Session on May 3: reviewed ..." / "on June 9: reviewed ...": two events
    words_a, words_b = _content(ta), _content(tb)
    if kind == "money":  # "costs £480 a year" / "pays £620 a year for": one price
        words_a, words_b = words_a - _MONEY_VERBS, words_b - _MONEY_VERBS
    only_a, only_b = words_a - words_b, words_b - words_a
    if only_a and only_b:
        return None  # a word swapped on each side: two events
    # one shared word names the thing paid for when nothing else differs ("My rent is £850
    # a month" / "I pay £1,050 in rent every month"); other events need two
    least = 1 if kind == "money" and not (only_a or only_b) else 2
    if len(only_a) + len(only_b) > 1 or len(words_a & words_b) < least:
        return None
    extra = only_a | only_b
    people_en, people_ko = relatives()
    if extra & (people_en | set(people_ko) | owners):
        return None  # "my rent" / "my sister's rent"
    return kind


def ages_close(va: frozenset[Any] | set[Any], vb: frozenset[Any] | set[Any]) -> bool:
    """Whether two sets of ages may be one person's before and after a birthday."""
    return any(abs(float(x) - float(y)) < AGE_APART for x in va for y in vb)


def other_period(ta: dict[str, Any], tb: dict[str, Any]) -> bool:
    """Whether two amounts of money are for different periods ("$40 a month" / "$400 a
    year"): a monthly and a yearly price, not two values of one."""
    money = any(k.startswith("money:") and k in tb for k in ta)
    return money and "duration" in ta and "duration" in tb and not (ta["duration"] & tb["duration"])


def _differing_kind(
    ta: dict[str, set[Any]], tb: dict[str, set[Any]], *, approx: bool = False
) -> str | None:
    """The anchor kind whose values differ, when every typed kind is on both sides, the
    other kinds agree and a scope (a day, a part of the day) is the same on both sides
    ("오전 8시" / "아침 8시 40분"; "at 7 on weekdays" / "at 9 on weekends" are two occasions)."""
    if set(ta) != set(tb) or any(k in ta and ta[k] != tb[k] for k in SCOPE_KINDS):
        return None
    differing = [k for k in ta if not (ta[k] & tb[k])]
    if len(differing) != 1:
        return None
    kind = differing[0]
    if kind == "age" and ages_close(ta[kind], tb[kind]):
        return None
    if approx and near_values(ta[kind], tb[kind]):
        return None  # "about 150" / "about 160"
    base = kind.split(":", 1)[0]
    return base if base in _ANCHOR_KINDS else None


def near_values(va: Iterable[Any], vb: Iterable[Any]) -> bool:
    """Whether two sets of approximate quantities hold values within a quarter of each
    other ("about 150" / "about 160")."""
    return any(
        isinstance(x, float) and isinstance(y, float) and abs(x - y) <= 0.25 * max(x, y, 1.0)
        for x in va
        for y in vb
    )


def _content(toks: tuple[Tok, ...]) -> frozenset[str]:
    """The content keys of a fact: no typed value, number, link, scope or light word."""
    skip = _skipped()
    out: set[str] = set()
    for t in toks:
        key = t.key
        if not key or not key[0].isalnum() or any(c.isdigit() for c in t.low):
            continue
        if t.low in skip or key in skip:
            continue
        out.add(folded(key))
    return frozenset(out)


def folded(key: str) -> str:
    """A derived noun as its verb ("payment" -> "pay"; "마감일" -> "마감")."""
    if _is_hangul(key):
        if len(key) >= 3 and key.endswith(_KO_DAY):  # noqa: PLR2004 - "생일" stays whole
            return key[:-1]
        return key
    for ending, least in _EN_DERIVED:
        if key.endswith(ending) and len(key) - len(ending) >= least:
            return key[: -len(ending)]
    return key


@functools.cache
def _skipped() -> frozenset[str]:
    """Words that carry no content here: links, scope and typed-value words, copulas,
    pronouns and light verbs (built once from the data file)."""
    d = _data()
    words: set[str] = set(scope_words()) | _LIGHT
    for key in (
        "copulas_set",
        "conjunctions_set",
        "only_words_set",
        "ko_copula_endings_set",
        "ko_particles_value_set",
    ):
        words |= set(d.get(key, ()))
    words |= set(d["duration_units"]) | set(d["number_words"])
    words |= set(_month_names()) | {stem(m) for m in _month_names()}
    words |= {"my", "his", "her", "their", "our", "your", "i", "we", "he", "she", "they", "it"}
    words |= {"a", "an", "the", "this", "that", "last", "next", "per", "old", "year"}
    return frozenset(words)
