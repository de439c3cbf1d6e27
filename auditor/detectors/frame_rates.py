"""How often: one activity told at two rates ("goes running three mornings a week" / "only
runs once a week", "works three night shifts a week" / "does four night shifts every
week", "한 달에 두 번 정도 클라이밍장에 간다" / "매주 화요일과 목요일 밤마다 클라이밍을 하러
간다"), :func:`other_rates`, one of the frames' whole-fact readings.

A fact's rate is read as times per week from a count over a period ("three times a week",
"twice a month", "N mornings a week", "once every two weeks", "한 달에 두 번", "주 3회",
"일주일에 한 번"), or from recurring days ("every Monday and Thursday": two a week; "every
day", "매일": seven; "매주 화요일과 목요일", "토요일마다"). A fact with two rates, a season or
a condition ("in summer", "when it rains", "여름에는", "-면"), a plan, a past state or a
hypothetical gives none. Two facts conflict when they give one activity (the first content
word after the person in English, the verb or its object in Korean, never a generic verb
such as "go" or "do") and their rates differ: by any amount when both are exact, by half
again when one says "about" ("정도", "쯤").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from auditor.detectors._contradiction_text import stem
from auditor.detectors._frame_words import Tok, _data, _is_hangul, _number, _tokens
from auditor.detectors.contradiction_frames import text_modality
from auditor.detectors.frame_schedule import days_said, generic_verbs, is_day_word

__all__ = ["other_rates", "rate_keys"]

#: Facts whose rates are remembered (as the frames' cache of facts).
_FACT_CACHE = 10_000
#: periods in weeks
_PERIOD_WEEKS = {"day": 1 / 7, "week": 1.0, "fortnight": 2.0, "month": 30 / 7, "year": 52.0}
_KO_PERIODS = {"하루에": 1 / 7, "일주일에": 1.0, "주에": 1.0, "한 달에": 30 / 7, "달에": 30 / 7}
_TIMES = {"once": 1.0, "twice": 2.0, "thrice": 3.0}
_APPROX = frozenset({"about", "around", "roughly", "approximately", "usually", "typically"})
_KO_APPROX = ("정도", "쯤", "약 ", "보통", "대략")
_SEASONS = frozenset(
    {"summer", "winter", "spring", "autumn", "fall", "season", "holidays", "vacation"}
)
_CONDITIONS = frozenset({"if", "when", "whenever", "unless", "during"})
_KO_SCOPES = ("여름", "겨울", "봄에", "가을", "방학", "시즌", "휴가", "때는", "때면")
#: "three times a week", "N mornings a week", "once every two weeks"
_EN_NUMBER = (
    r"(?:once|twice|thrice|\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|"
    r"twelve|fifteen|twenty|thirty)"
)
#: what a count of times is told with: "times", or a noun of an occasion ("three mornings",
#: "four night shifts", "two sessions"); an amount of money or a distance is no rate
_OCCASIONS = (
    r"(?:times|mornings|evenings|nights|afternoons|days|sessions|classes|lessons|shifts|"
    r"workouts|runs|games|matches|meetings|visits|trips)"
)
_EN_RATE = re.compile(
    rf"\b(?:(?P<once>once|twice|thrice)|(?P<n>{_EN_NUMBER})\s+"
    rf"(?:(?!{_EN_NUMBER}\s)[a-z0-9-]+\s+){{0,2}}?{_OCCASIONS})\s+"
    r"(?:a|an|per|each|every)\s+(?:(?P<k>other|two|three|four|2|3|4)\s+)?"
    r"(?P<p>day|week|fortnight|month|year)s?\b"
)
#: a bound is no rate ("at least twice a day" and "at least three times a day" both hold)
_BOUNDS = ("at least", "at most", "no more than", "up to", "or more", "or less", "이상", "이하",
           "최소", "최대")  # fmt: skip
#: "주 3회", "한 달에 두 번", "일주일에 한 번", "한 주에 보통 스무 대": a count of times or of
#: things done (a counter) in a period, perhaps after an adverb of habit; the number is
#: checked with the data file's number words (native numerals included)
_KO_RATE = re.compile(
    r"(?P<p>하루에|일주일에|주에|한 달에|달에|주)\s*(?:(?:보통|평균|대략|대개|약)\s+)?"
    r"(?P<n>[0-9]+|[가-힣]{1,4}?)\s*(?:번|회|대|건|곡|권|잔)(?![가-힣]{2})"
)


@dataclass(frozen=True, slots=True)
class _Rate:
    per_week: float
    approx: bool
    activity: str  # the activity's key ("run", "클라")


#: a fact without any of these words gives no rate (most facts: read no further)
_GATE = re.compile(
    r"\b(?:once|twice|thrice|times|every|each|daily|per|a week|a month|a day|a year)\b"
    r"|번|회|매주|마다|매일|날마다|일주일|내내|주에|달에"
)


@functools.lru_cache(maxsize=_FACT_CACHE)
def _rate(text: str) -> _Rate | None:
    """The one rate a fact gives, with its activity, or None (see the module): read
    sentence by sentence, so that a condition in another sentence ("그 이상 하면 귀가
    피곤해진다") does not hide it; two sentences with a rate each give none."""
    if not _GATE.search(text.lower()):
        return None
    found = [r for part in _SENTENCES.split(text) if (r := _sentence_rate(part)) is not None]
    return found[0] if len(found) == 1 else None


#: where a fact's sentences end
_SENTENCES = re.compile(r"(?<=[.!?])\s+")


def _sentence_rate(text: str) -> _Rate | None:
    if not _GATE.search(text.lower()) or text_modality(text) != "current":
        return None
    toks = _tokens(text)
    lows = [t.low for t in toks]
    ko = _is_hangul(text)
    if any(b in text.lower() for b in _BOUNDS):
        return None
    if ko:
        if any(s in text for s in _KO_SCOPES) or any(w.endswith("면") for w in lows):
            return None
        rates = _ko_rates(text, toks)
        approx = any(a in text for a in _KO_APPROX)
    else:
        if not _SEASONS.isdisjoint(lows) or not _CONDITIONS.isdisjoint(lows):
            return None
        rates = _en_rates(text.lower(), toks)
        approx = not _APPROX.isdisjoint(lows)
    if len(rates) != 1:
        return None
    activity = _activity(toks, ko)
    return _Rate(rates.pop(), approx, activity) if activity else None


def _en_rates(low: str, toks: Sequence[Tok]) -> set[float]:
    rates: set[float] = set()
    for m in _EN_RATE.finditer(low):
        n = _TIMES.get(m.group("once") or "") or _number(m.group("n") or "")
        every = m.group("k")
        gap = 2.0 if every == "other" else (_number(every) if every else 1.0)
        if n and gap:
            rates.add(round(n / (_PERIOD_WEEKS[m.group("p")] * gap), 3))
    if not rates:
        days = _recurring_days(toks, False)
        if days:  # "every second Sunday", "every other Friday": one week in two
            rates.add(float(days) / (2.0 if _EVERY_OTHER.search(low) else 1.0))
    return rates


#: a day every other week ("every second Sunday", "every other Friday")
_EVERY_OTHER = re.compile(r"\bevery (?:other|second|alternate) \w+day\b")


def _ko_rates(text: str, toks: Sequence[Tok]) -> set[float]:
    rates: set[float] = set()
    for m in _KO_RATE.finditer(text):
        n = _number(m.group("n"))  # None for a word that is no numeral
        period = _KO_PERIODS.get(m.group("p"), 1.0)
        if n:
            rates.add(round(n / period, 3))
    if not rates:
        days = _recurring_days(toks, True)
        if days:
            rates.add(float(days))
    return rates


def _recurring_days(toks: Sequence[Tok], ko: bool) -> int:
    """How many days a week a fact says something recurs on ("every Monday and Thursday",
    "every weekday", "every day", "매주 화요일과 목요일", "토요일마다", "매일"); 0 for none.
    The days are read as the schedule check reads them (:func:`days_said`)."""
    lows = [t.low for t in toks]
    text = " ".join(lows)
    if ko:
        if any(w in text for w in _data()["every_day_ko"]):
            return 7
        recurring = "매주" in text or "마다" in text
    else:
        if any(p in text for p in ("every day", "each day", "daily")):
            return 7
        recurring = "every" in lows or "each" in lows  # "on Sundays": which days only
    return len(days_said(toks, ko)) if recurring else 0


#: words of a rate that are no activity
_RATE_WORDS = frozenset(
    {"once", "twice", "thrice", "times", "time", "every", "each", "per", "week", "weeks",
     "month", "months", "day", "days", "year", "fortnight", "other", "about", "around",
     "usually", "only", "morning", "mornings", "evening", "evenings", "night", "nights",
     "afternoon", "afternoons", "weekend", "weekends", "weekday", "weekdays"}
)  # fmt: skip


def _activity(toks: Sequence[Tok], ko: bool) -> str:
    """The activity a fact gives a rate of, as a key: in English the first content word
    after the person that is no generic verb, count or rate word ("goes running" -> run,
    "works three night shifts" -> shift), in Korean the last one, the verb or, when the
    verb is generic, its object ("클라이밍장에 간다" -> 클라); "" for none."""
    generic = generic_verbs()
    if ko:
        for t in reversed(toks[1:]):
            if not _is_hangul(t.low) or is_day_word(t, True) or _number(t.low) is not None:
                continue
            if t.low.startswith(_KO_NOT_ACTIVITY):
                continue
            key = t.key[:2]
            if len(key) == 2 and key not in generic and not key.startswith("하"):  # noqa: PLR2004
                return key
        return ""
    for t in toks[1:]:
        if len(t.key) <= 2 or not t.low.isalpha() or t.low in _RATE_WORDS:  # noqa: PLR2004
            continue
        if is_day_word(t, False) or t.low in _NOT_ACTIVITY:
            continue
        if _number(t.low) is not None:
            continue  # "three", "four": the count
        key = stem(t.low)
        if key not in generic:
            return key
    return ""


#: Korean words that say nothing of the activity (rates, approximations, "every")
_KO_NOT_ACTIVITY = (
    "매주",
    "매일",
    "마다",
    "번",
    "회",
    "정도",
    "쯤",
    "한 달",
    "하루",
    "일주일",
    "달에",
)


#: English words that say nothing of the activity
_NOT_ACTIVITY = frozenset(
    {"the", "and", "with", "for", "her", "his", "their", "she", "he", "they", "goes", "does",
     "has", "had", "have", "is", "are", "was", "at", "in", "on", "of", "to", "a", "an", "off",
     "usually", "only", "also", "still", "just"}
)  # fmt: skip


def other_rates(a_text: str, b_text: str) -> bool:
    """Whether two facts tell one activity at two rates (see the module docstring)."""
    ra, rb = _rate(a_text), _rate(b_text)
    if ra is None or rb is None or ra.activity != rb.activity:
        return False
    low, high = sorted((ra.per_week, rb.per_week))
    if ra.approx or rb.approx:
        return high >= low * 1.5
    return high > low * 1.01


def rate_keys(text: str) -> list[str]:
    """The blocking key of a fact with a rate ("rate:run"), so that two rates of one
    activity meet as candidates."""
    rate = _rate(text)
    return ["rate:" + rate.activity] if rate is not None else []
