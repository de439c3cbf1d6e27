"""Two frames of one attribute that are still no conflict: different occasions ("at 6:30am
on weekdays" / "at 10am on weekends") or typed values of different things ("the 7:40 bus"
/ "the 6:10 train"). Read by :func:`auditor.detectors.contradiction_frames.compare_frames`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

from auditor.detectors._contradiction_text import stem
from auditor.detectors._frame_money import CURRENCY_WORDS
from auditor.detectors._frame_types import Frame
from auditor.detectors._frame_words import (
    Tok,
    _data,
    _is_hangul,
    _month_names,
    _number,
    ko_key,
)

__all__ = [
    "SCOPE_KINDS",
    "attached_keys",
    "dated_events_apart",
    "dated_past",
    "other_activity",
    "other_occasions",
    "scope_words",
    "told_in_past",
]

#: Typed values that say when something holds rather than what it is.
SCOPE_KINDS = ("weekday", "daypart")


def other_occasions(a: Frame, b: Frame) -> bool:
    """Whether two frames speak of different occasions: a scope on both sides (days of the
    week, part of the day) that does not overlap, or one narrower than the other (an
    exception to a rule: "every day at 6" / "at 8 on weekends"), beside another value that
    differs ("wakes at 7am on weekdays" / "at 9am on weekends", "runs 5 km in the morning" /
    "10 km in the evening"). A scope alone is the value ("the lesson is every Tuesday" /
    "every Thursday"), and so is a scope that one side only narrows ("meetings in the
    afternoon" / "morning meetings before 10am")."""
    ta, tb = a.typed_map(), b.typed_map()
    if not any(
        k in ta and k in tb and (not (ta[k] & tb[k]) or ta[k] < tb[k] or tb[k] < ta[k])
        for k in SCOPE_KINDS
    ):
        return False
    if _one_day_each(a, b, ta, tb):
        return False  # "the team sync is on Mondays at 9:30" / "every Wednesday at 10:00"
    if (set(ta) & set(tb)) - set(SCOPE_KINDS):
        return True  # a time, count or amount on both sides beside the scope
    # another value beside the scope: "5km" / "10km", "coffee in the morning" / "tea in the
    # afternoon", "회사 근처에서" / "집에서"
    rest_a, rest_b = a.values - scope_words(), b.values - scope_words()
    return bool(rest_a - rest_b and rest_b - rest_a)


def _one_day_each(a: Frame, b: Frame, ta: dict[str, Any], tb: dict[str, Any]) -> bool:
    """Whether a named thing is said to be on one weekday in each fact, two different ones
    ("Daniel's team sync is on Monday mornings at 9:30" / "is every Wednesday at 10:00"):
    the day is the value, with its time, not an occasion beside another value. Not when a
    word beside them is a state ("the clinic is open from 9 on Tuesdays")."""
    days_a, days_b = ta.get("weekday", set()), tb.get("weekday", set())
    scope = scope_words()

    def when_only(f: Frame) -> bool:  # every value word a scope word or a number
        return all(w in scope or any(c.isdigit() for c in w) for w in f.values)

    return (
        a.rel == b.rel == "="
        and when_only(a)
        and when_only(b)
        and a.subject
        and b.subject
        and a.functional
        and b.functional
        and len(days_a) == len(days_b) == 1
        and not (days_a & days_b)
    )


def other_activity(a: Frame, b: Frame) -> bool:
    """Whether two frames without a named subject (or of a relation that holds many values)
    give different typed values to different things: the words beside the numbers differ
    on both sides ("takes the 7:40 bus to work" / "the 6:10 train home", "pays 800,000 won
    rent" / "50,000 won for the phone"). "Starts work at 7am" / "at 9am" stays a conflict;
    so does a named subject ("the standup is at 9am in room A" / "at 10am in room B"), but
    for an amount of money paid for two things ("Ben pays £950 a month for rent" / "£60 a
    month for his phone") or one Korean verb's typed values attached to two things ("관리비를
    매달 10일에 낸다" / "카드값을 매달 25일에 낸다"), which are two payments."""
    ta, tb = a.typed_map(), b.typed_map()
    money = any(k.startswith("money:") and k in tb for k in ta)
    one_ko_verb = a.lang == "ko" and a.rel == b.rel  # "관리비를 10일에" / "카드값을 25일에 낸다"
    if a.subject and a.functional and b.subject and b.functional and not (money or one_ko_verb):
        return False
    # an age is the head's own ("is 34 years old" / "turned 36 last month"), of no other thing
    if not any(k in tb and not (v & tb[k]) for k, v in ta.items() if k != "age"):
        return False
    if a.attached and b.attached and a.attached.isdisjoint(b.attached):
        return True
    # a relation of many values with other words on each side: "takes his medicine at 8am" /
    # "takes a walk at 6pm" (the object before the time)
    if a.functional or b.functional:
        return False
    rest_a, rest_b = _plain_words(a), _plain_words(b)
    return bool(rest_a and rest_b and rest_a.isdisjoint(rest_b))


def _plain_words(f: Frame) -> frozenset[str]:
    """A frame's value words that are no number, scope, link or pronoun."""
    return frozenset(
        w for w in f.values if w not in _plain_skip() and not any(c.isdigit() for c in w)
    )


@functools.cache
def _plain_skip() -> frozenset[str]:
    """Value keys that are no plain word: scope, links, pronouns, months, units, numbers."""
    d = _data()
    months = _month_names()
    return frozenset(
        scope_words()
        | d["determiners_set"]
        | _PRONOUNS
        | set(months)
        | {stem(m) for m in months}
        | set(d["duration_units"])
        | set(d["number_words"])
    )


#: possessive pronouns a value may carry ("his medicine")
_PRONOUNS = frozenset({"his", "her", "their", "my", "our", "your", "its"})


def attached_keys(value_toks: Sequence[Tok], typed: dict[str, set[Any]]) -> frozenset[str]:
    """What each typed value token of a value is attached to (see :func:`_attached`)."""
    if not typed:
        return frozenset()
    units = {k.split(":", 1)[1] for k in typed if k.startswith("count:")}
    units_all = _data()["duration_units"]
    money = any(k.startswith("money:") for k in typed)
    out: set[str] = set()
    for i, t in enumerate(value_toks):
        if not any(c.isdigit() for c in t.low) and _number(t.low) is None:
            continue
        if (
            not money
            and t.low in ("a", "an")
            and i + 1 < len(value_toks)
            and value_toks[i + 1].low in units_all
        ):
            continue  # "twice a day for her diabetes": a period; "$40 a month for the gym" pays
            # for the gym
        nxt = value_toks[i + 1].key if i + 1 < len(value_toks) else None
        key = _attached(value_toks, i, nxt if nxt in units or nxt in CURRENCY_WORDS else None)
        if key is not None:
            out.add(key)
    return frozenset(out)


def _attached(value_toks: Sequence[Tok], typed_at: int, unit: str | None) -> str | None:
    """The key of the thing a typed value is attached to: the first content word after it
    (past its unit, link words and scope words, before any punctuation): "7:40 bus" -> bus,
    "800,000 won for the phone" -> phone, "two kids, ..." -> none."""
    d = _data()
    skip = d["prepositions_set"] | d["determiners_set"] | scope_words()
    for t in value_toks[typed_at + 1 : typed_at + 5]:
        if not t.low[:1].isalnum():
            return None
        if t.low == unit or t.key == unit or t.low in skip or t.key in skip:
            continue
        if _number(t.low) is not None:
            return None
        return t.key
    return None


@functools.cache
def scope_words() -> frozenset[str]:
    """Value keys that only say when (day and part-of-day words, "every") or link words."""
    d = _data()
    words = [
        *d["weekdays"],
        *d["dayparts"],
        *d["weekend_words"],
        *d["workday_words"],
        *d["every_day_ko"],
        "every",
        "each",
        # which of the days: "the first Tuesday of the month", "every other Thursday"
        "first",
        "second",
        "third",
        "fourth",
        "last",
        "other",
        "alternate",
        "day",
        "daily",
        "매주",
        "마다",
    ]
    keys: set[str] = set(words) | {ko_key(w) if _is_hangul(w) else stem(w) for w in words}
    for link in ("prepositions_set", "determiners_set", "qualifiers_set"):
        keys |= d[link]
    return frozenset(keys)


#: A year of this or the last century ("2019", "2019년").
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d{2}(?!\d)")
#: Past-tense cues: an English verb in -ed or a common irregular past, a Korean past ending.
_PAST = re.compile(
    r"\b(?:\w{2,}ed|was|were|grew|went|left|began|became|took|got|had|came|lived|moved)\b"
    r"|(?:었|았|했|였|됐|갔|왔)(?:다|어요|습니다|음)",
    re.IGNORECASE,
)


def told_in_past(text: str) -> bool:
    """Whether a fact tells something in the past tense ("reviewed", "went", "이사했다")."""
    return _PAST.search(text) is not None


def dated_past(text: str) -> bool:
    """Whether a fact tells a past event with its year ("switched to Figma back in 2021",
    "2019년에 이사했다"): history, which a later fact may have overtaken."""
    return _YEAR.search(text) is not None and _PAST.search(text) is not None


def dated_events_apart(a_text: str, b_text: str) -> bool:
    """Whether two facts tell past events in different years ("moved to Seoul in 2019" /
    "moved to Busan in 2023", "2019년에 서울로 이사했다" / "2023년에 부산으로 이사했다"): a
    history, not two values of one current attribute. A date of a one-time event ("born in
    1988" / "born in 1990") is the dates check's business, not this one's."""
    years_a, years_b = set(_YEAR.findall(a_text)), set(_YEAR.findall(b_text))
    if not years_a or not years_b or years_a & years_b:
        return False
    return _PAST.search(a_text) is not None and _PAST.search(b_text) is not None
