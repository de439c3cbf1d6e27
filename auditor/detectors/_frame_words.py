"""The words of the contradiction frames: tokens, Korean keys, typed values, the data file.

:mod:`auditor.detectors.contradiction_frames` reads frames from these: :func:`_tokens` splits
a text into :class:`Tok` (lower case, key: an English stem or a Korean word without its
particle or ending, offsets), :func:`_ko_key` is that Korean key, and :func:`_typed` reads the
typed values of a value region (weekdays, weekend, parts of the day, dates, months,
durations, counts with a unit, clock times, days of the month); :func:`modality_of` says
whether a sentence is a plan, a past state or a hypothetical. The cue words are data
(``data/contradiction_frames.json``, :func:`_data`). Every regular expression here is
linear-time.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any, NamedTuple

from auditor.detectors._contradiction_data import EN_STOPWORDS, KO_QUANTITY_ADVERBS, bound_side
from auditor.detectors._contradiction_text import has_phrase, stem
from auditor.detectors._frame_money import CURRENCY_CODES, CURRENCY_WORDS, EN_SCALES, ko_won
from auditor.detectors._frame_types import Modality

_DATA_PATH = Path(__file__).with_name("data") / "contradiction_frames.json"

#: Hangul runs, other word runs (joined by ' . + # / - inside: Node.js, GPL-3.0, C++), ":"
#: and "," as tokens. Each repetition needs a separator outside the run class: linear time.
_TOKEN = re.compile(
    # a clock time ("6:30", "6:30am") and a number in groups of three ("800,000") are one
    # token each, before the word and punctuation alternatives split them
    r"[$€£¥₩]\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])|[$€£¥₩]\d{1,9}(?:\.\d+)?(?![\d,])"
    r"|\d{1,2}:\d{2}(?:[aApP][mM])?(?![\d:])|\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])"
    r"|\d{1,6}(?:\.\d{1,4})?%"  # a percentage ("99.9%") is one token, its sign kept
    r"|\d{1,6}[\uac00-\ud7a3]+|[\uac00-\ud7a3]+"
    r"|[^\W_\uac00-\ud7a3]+(?:['’.+#/-][^\W_\uac00-\ud7a3]+)*[+#]*|[:,()]"
)


_NUM = re.compile(r"^(\d{1,6})(?:\.(\d{1,3}))?$")
#: Korean particles that mark a verb's argument (object, subject): a token ending in one is a
#: noun phrase, not a predicate.
KO_ARGUMENT_PARTICLES = ("을", "를", "이", "가")
_CURRENCY = frozenset("$€£¥₩")
_GROUPED = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_ORDINAL = re.compile(r"^(\d{1,2})(?:st|nd|rd|th)$")
_CLOCK = re.compile(r"^(\d{1,2})(?::(\d{2}))?(am|pm)?$")
_KO_NUM_UNIT = re.compile(r"^(\d{1,6})([\uac00-\ud7a3]{1,3})$")
#: an age written as one word ("7-year-old", "34-years-old")
_AGE_WORD = re.compile(r"^(\d{1,3})-years?-old$")
#: the years a four-digit number before 년 is read as ("1995년"), not a number of years
_FIRST_YEAR, _LAST_YEAR = 1900, 2100
#: Korean units in 세 that are no age ("3세대": generations, "2세트": sets, "21세기")
_KO_NOT_AGE = ("세대", "세트", "세기")
#: Korean words for "every month" before a day of the month ("매달 25일")
_KO_MONTHLY = ("매달", "매월", "달마다")
#: the oldest age read as one (a larger number after "turned" is no age)
_MAX_AGE = 130
#: verbs (and "aged") whose number is an age ("turned 36", "turns 10 this year")
AGE_VERBS = frozenset({"turned", "turns", "turning", "aged"})
#: words after a number that it does not count ("turned 36 last month")
_NOT_COUNTED = frozenset({"last", "next", "or", "nor", "than"})  # "18 or later": no count
#: words for "year" after an age's number ("34 years old")
_AGE_YEARS = frozenset({"year", "years", "yr", "yrs"})


@functools.cache
def _data() -> dict[str, Any]:
    with _DATA_PATH.open(encoding="utf-8") as fh:
        raw: dict[str, Any] = json.load(fh)
    out: dict[str, Any] = dict(raw)
    for key, value in raw.items():
        if isinstance(value, list):
            out[key + "_set"] = frozenset(value)
    return out


class Tok(NamedTuple):
    """One token: lower-cased text, key (stem or Korean root), offsets (a tuple: cheap)."""

    low: str
    key: str
    start: int
    end: int


_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def _is_hangul(s: str) -> bool:
    return not s.isascii() and _HANGUL.search(s) is not None


@functools.cache
def _by_length(key: str) -> tuple[str, ...]:
    """A word list of the data file, longest first (suffix stripping tries long ones first)."""
    return tuple(sorted(_data()[key], key=len, reverse=True))


#: topic and object markers and the distributive 씩 cut from a two-syllable word (a
#: one-syllable noun: "씨는", "차를", "잔씩"); 은 / 을, subject markers and 만 / 도 are not,
#: as many two-syllable nouns and names end in them (가을, 지은, 국가, 온도)
_ONE_SYLLABLE_MARKERS = frozenset("는를씩")
#: two-syllable words that end in one of those markers and are no noun with a marker (verb forms)
_KEPT_WHOLE = frozenset({"하는", "되는", "있는", "없는", "가는", "오는", "사는"})


@functools.lru_cache(maxsize=65_536)
def _ko_key(word: str) -> str:
    """A Korean token without its particle or verb/copula ending (rough, deterministic)."""
    d = _data()
    w = word
    if w in d["ko_particles_value_set"] or w in d["ko_copula_endings_set"]:
        return ""
    if w in d["ko_verb_forms"]:
        return str(d["ko_verb_forms"][w])  # "합니다" / "한다" / "해요": one verb
    if w.endswith("마다") and len(w) > 3:  # noqa: PLR2004 - "주말마다": not the ending 다
        return w[:-2]
    if len(w) == 2 and w[1] in _ONE_SYLLABLE_MARKERS and w not in _KEPT_WHOLE:  # noqa: PLR2004
        return w[0]  # "씨는", "폰을", "책을": a one-syllable noun and its topic or object marker
    for ending in _by_length("ko_verb_endings"):
        if " " not in ending and w.endswith(ending) and len(w) > len(ending):
            w = w[: -len(ending)]
            break
    for ending in _by_length("ko_copula_endings"):
        if w.endswith(ending) and len(w) > len(ending) + 1:
            w = w[: -len(ending)]
            break
    for _round in range(2):  # "오전에만": 만, then 에
        for particle in _by_length("ko_particles_value"):
            if w.endswith(particle) and len(w) > len(particle) + 1:
                w = w[: -len(particle)]
                break
    return w


@functools.cache
def relatives() -> tuple[frozenset[str], tuple[str, ...]]:
    """(English stems, Korean words) of ``relatives`` in the data file: the people a fact
    may name beside its subject ("sister", "동생")."""
    words = _data()["relatives"]
    return (
        frozenset(stem(w) for w in words if w.isascii()),
        tuple(w for w in words if not w.isascii()),
    )


#: what may follow a Korean relative in its word: a plural or honorific, then a particle
#: or a copula ("동생들과", "부모님께", "딸이다", "동생네"), so that "아이스" (ice), "딸기"
#: (strawberries) and "이모티콘" name nobody
_KO_RELATIVE_TAIL = re.compile(
    r"(?:들|님|분)?(?:은|는|이|가|을|를|의|과|와|랑|이랑|하고|도|만|에게|한테|께|께서|에게서|"
    r"한테서|이다|다|이에요|예요|이고|이며|이나|처럼|보다|까지|부터|네|네는|네에|네서|"
    r"이랑은|와는|과는|하고는|에게는|한테는|도요)?"
)


@functools.lru_cache(maxsize=16_384)
def ko_relative(word: str) -> str:
    """The Korean relative a word names, its particle aside ("여동생의" -> 여동생,
    "부모님과" -> 부모님), or "" (the longest relative first: "여동생" before "동생")."""
    for rel in _ko_relatives_by_length():
        if word.startswith(rel) and _KO_RELATIVE_TAIL.fullmatch(word, len(rel)):
            return rel
    return ""


@functools.cache
def _ko_relatives_by_length() -> tuple[str, ...]:
    return tuple(sorted(relatives()[1], key=len, reverse=True))


#: a Korean word without its particle or verb/copula ending (for other detectors' tokens)
ko_key = _ko_key


@functools.lru_cache(maxsize=65_536)
def _word(raw: str) -> tuple[str, str]:
    """One word's (normalised lower case, key), read once per distinct word."""
    if raw.isascii():  # NFKC leaves ASCII alone, and ASCII holds no Hangul
        low = raw.lower()
        return low, stem(low)
    low = unicodedata.normalize("NFKC", raw).lower().replace("’", "'")
    return low, _ko_key(low) if _is_hangul(low) else stem(low)


def lowered(text: str) -> str:
    """A fact as its tokens read it (NFKC for non-ASCII text, lower case): a cheap text to
    test for cue words before tokenising."""
    return (text if text.isascii() else unicodedata.normalize("NFKC", text)).lower()


@functools.lru_cache(maxsize=16_384)
def _tokens(text: str) -> tuple[Tok, ...]:
    """The tokens of a text (cached: a fact is read several times per candidate pair)."""
    word = _word
    make = tuple.__new__  # Tok(...) without the named tuple's Python-level __new__
    out: list[Tok] = []
    for m in _TOKEN.finditer(text):
        low, key = word(m.group())
        out.append(make(Tok, (low, key, m.start(), m.end())))
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def ko_native_number(word: str) -> int | None:
    """A Korean native number of 1 to 99 written as a word ("다섯", "열두", "서른다섯",
    "마흔여덟"; the data file's ``ko_number_tens`` and ``ko_number_units``), or None."""
    d = _data()
    units: dict[str, int] = d["ko_number_units"]
    if word in units:
        return units[word]
    for tens_word, tens in d["ko_number_tens"].items():
        if word.startswith(tens_word):
            rest = word[len(tens_word) :]
            if not rest:
                return int(tens)
            if rest in units:
                return int(tens) + units[rest]
    return None


def birth_year_of(two_digits: int) -> int:
    """The year a Korean two-digit year of birth names ("94년생": 1994, "05년생": 2005)."""
    this_year = date.today().year
    return 2000 + two_digits if 2000 + two_digits <= this_year else 1900 + two_digits


def _number(low: str) -> float | None:
    m = _NUM.match(low)
    if m:
        return float(m.group(0))
    if _GROUPED.match(low):
        return float(low.replace(",", ""))
    value = _data()["number_words"].get(low)
    if value is None and not low.isascii():
        value = ko_native_number(low)  # "서른다섯", "스무": a word of tens and units
    return float(value) if value is not None else None


def _ko_number(
    num_s: str,
    unit: str,
    toks: Sequence[Tok],
    i: int,
    units: dict[str, float],
    out: dict[str, set[Any]],
) -> None:
    """The typed value of a Korean number with its unit ("3월", "5월 3일", "2시간", "30일간",
    "3개"), added to ``out``."""
    unit_key = next(
        (u for u in sorted(units, key=len, reverse=True) if unit.startswith(u) and _is_hangul(u)),
        "",
    )
    if unit.startswith("월") and i + 1 < len(toks):
        # "3일생이다": the key without its copula ("3일생") when the word is too long
        day_m = _KO_NUM_UNIT.match(toks[i + 1].low) or _KO_NUM_UNIT.match(toks[i + 1].key)
        if day_m and day_m.group(2).startswith("일"):
            out.setdefault("date", set()).add((int(num_s), int(day_m.group(1))))
            return
    if unit.startswith("월"):
        out.setdefault("month", set()).add(int(num_s))
    elif unit.startswith("년") and _FIRST_YEAR <= int(num_s) <= _LAST_YEAR:
        out.setdefault("year", set()).add(int(num_s))  # "1995년": a year, no duration
    elif unit.startswith("년생") and len(num_s) == 2:  # noqa: PLR2004
        out.setdefault("year", set()).add(birth_year_of(int(num_s)))  # "94년생": 1994
    elif unit.startswith("살") or (unit.startswith("세") and not unit.startswith(_KO_NOT_AGE)):
        if _age_number(float(num_s)):  # "28살", "7세": an age
            out.setdefault("age", set()).add(float(num_s))
    elif unit.startswith("일") and i > 0 and toks[i - 1].low.startswith(_KO_MONTHLY):
        if 1 <= int(num_s) <= 31:  # noqa: PLR2004 - "매달 25일": a day of every month
            out.setdefault("dom", set()).add(int(num_s))
    elif unit.startswith("일") and _ko_days_long(unit, toks, i):
        out.setdefault("duration", set()).add(round(float(num_s) * float(units["일"]), 2))
    elif unit_key and not unit.startswith("일"):
        num = float(num_s) + _ko_half(toks, i + 1)  # "1시간 반"
        out.setdefault("duration", set()).add(round(num * float(units[unit_key]), 2))
    elif (
        unit.removesuffix("의") in _COUNTED
        and toks[i].low.endswith("의")
        and i + 1 < len(toks)
        and _is_hangul(toks[i + 1].low)
    ):
        # "4개의 항목": four items, counted by the noun after, not by the counter
        out.setdefault("count:" + toks[i + 1].key, set()).add(float(num_s))
    elif not unit.startswith("일"):
        out.setdefault("count:" + (_ko_counter(unit) or unit[:1]), set()).add(float(num_s))


#: Korean counters of people and things: in the genitive ("4개의 항목", "3명의 직원") the
#: noun after them is what they count.
_COUNTED = frozenset(("개", "명", "마리"))


def _ko_half(toks: Sequence[Tok], j: int) -> float:
    """0.5 when the token at ``j`` is "반" (half) after a Korean duration ("한 시간 반")."""
    return 0.5 if j < len(toks) and toks[j].low.startswith("반") else 0.0


def _ko_counter(word: str) -> str | None:
    """The unit a Korean counter word counts in ("번" and "회": times), or None."""
    counters: dict[str, str] = _data()["ko_counters"]
    found = next((c for c in _by_length("ko_counters") if word.startswith(c)), None)
    return counters[found] if found else None


def _ko_days_long(unit: str, toks: Sequence[Tok], i: int) -> bool:
    """Whether "N일" is a number of days ("30일간", "30일 동안"), not a day of the month."""
    return unit.startswith("일간") or (i + 1 < len(toks) and toks[i + 1].low.startswith("동안"))


@functools.cache
def _ko_weekdays() -> tuple[str, ...]:
    """The Korean day names of the data file ("월요일" ...)."""
    return tuple(w for w in _data()["weekdays"] if _is_hangul(w))


def _typed(toks: Sequence[Tok], ko: bool) -> dict[str, set[Any]]:
    """Typed values among ``toks`` (a value region).

    A number under a bound ("at least 25 times", "3시간 이상") is kept apart, under its
    kind with the bound's side before it ("min:count:tim"): not the value itself, yet a
    value that tells two facts apart."""
    d = _data()
    out: dict[str, set[Any]] = {}
    bounds: dict[str, dict[str, set[Any]]] = {}
    dayparts, units = d["dayparts"], d["duration_units"]
    months = {k: v for k, v in _month_names().items()}
    lows = [t.low for t in toks]
    minutes_of_clock: set[int] = set()
    for i, t in enumerate(toks):
        low, key = t.low, t.key
        _day_words(t, lows, i, ko, out)
        part = dayparts.get(low) or dayparts.get(key)
        if part:
            out.setdefault("daypart", set()).add(part)
        m = _ORDINAL.match(low)
        if m:
            out.setdefault("dom", set()).add(int(m.group(1)))
        clock = _CLOCK.match(low)
        if clock and clock.group(3):
            hour = int(clock.group(1)) % 12 + (12 if clock.group(3) == "pm" else 0)
            out.setdefault("clock", set()).add((hour, int(clock.group(2) or 0)))
        elif clock and clock.group(2) and int(clock.group(1)) < 24:  # "7:40", "14:00"
            out.setdefault("clock", set()).add((int(clock.group(1)), int(clock.group(2))))
        side = _bound_side(toks, i)
        dest = bounds.setdefault(side, {}) if side else out
        read_on = _number_at(toks, lows, i, ko, months, dest)
        if read_on:
            _minimum_version(lows, i, out)  # "3.10 이상": a lowest version, bound or not
        if read_on and ko and i not in minutes_of_clock:
            km = _KO_NUM_UNIT.match(key) or _KO_NUM_UNIT.match(low)
            if km and _ko_clock(km.group(1), km.group(2), toks, i, dest):
                minutes_of_clock.add(i + 1)  # "7시 40분": 40분 is the clock's, no duration
            elif km:
                _ko_number(km.group(1), km.group(2), toks, i, units, dest)
    _merge_compound_durations(toks, out, units)
    if "weekday" in out and len(out["weekday"]) == 2:  # noqa: PLR2004
        _weekday_range(toks, ko, out)
    for side, found in bounds.items():
        for kind, values in found.items():
            out.setdefault(f"{side}:{kind}", set()).update(values)
    return out


def _number_at(  # noqa: PLR0913 - the loop's state, passed down
    toks: Sequence[Tok],
    lows: Sequence[str],
    i: int,
    ko: bool,
    months: dict[str, int],
    out: dict[str, set[Any]],
) -> bool:
    """The typed values a number (or a number-like word) at ``i`` gives, added to ``out``;
    False when it is read whole (a percentage, money, an age) and no more is to be read."""
    d = _data()
    units = d["duration_units"]
    low = lows[i]
    if low.endswith("%") or (low in _PERCENT_WORDS and i and _NUM.match(lows[i - 1])):
        number = low[:-1] if low.endswith("%") else lows[i - 1]
        out.setdefault("percent", set()).add(float(number))  # "99.9%", "3.8 percent"
        return False
    if low[:1] in _CURRENCY:  # "$373.52", "$1.2 million": an amount of money
        scale = EN_SCALES.get(lows[i + 1], 1.0) if i + 1 < len(lows) else 1.0
        out.setdefault("money:" + low[0], set()).add(float(low[1:].replace(",", "")) * scale)
        return False
    won = ko_won(lows, i) if ko else None
    if won is not None:  # "80만 원", "7천2백만 원", "50,000원": an amount of money
        if won:
            out.setdefault("money:₩", set()).add(won)
        return False
    age = _AGE_WORD.match(low)
    if age:
        out.setdefault("age", set()).add(float(age.group(1)))
        return False
    if i == len(toks) - 1 and i > 0 and toks[i - 1].low in AGE_VERBS:
        num = _number(low)  # "Ben turned 36."
        if num is not None and _age_number(num):
            out.setdefault("age", set()).add(num)
            return False
    _number_and_unit(toks, i, ko, months, out)
    grade = _school_grade(lows, i)
    if grade is not None:
        out.setdefault("grade", set()).add(grade)
    if low in _TIMES:  # "twice a day": as "2 times a day"
        out.setdefault("count:tim", set()).add(_TIMES[low])
    if low in _EVERY and i + 1 < len(lows) and lows[i + 1] in _PERIODS:
        out.setdefault("duration", set()).add(float(units[lows[i + 1]]))  # "every month"
    if low in months:
        _month_value(lows, i, months, out)
    return True


def _bound_side(toks: Sequence[Tok], i: int) -> str:
    """ "min" or "max" when the token at ``i`` is a number under a bound ("at least twice",
    "no more than 3", "3시간 이상"; :func:`auditor.detectors._contradiction_data.bound_side`),
    else ""."""
    low = toks[i].low
    if _number(low) is None and low not in _TIMES and not _KO_NUM_UNIT.match(low):
        return ""
    before = tuple(t.low for t in toks[max(0, i - 3) : i])
    after = tuple(t.key if _is_hangul(t.low) else t.low for t in toks[i + 1 : i + 4])
    return bound_side(before, after)


def _day_words(t: Tok, lows: Sequence[str], i: int, ko: bool, out: dict[str, set[Any]]) -> None:
    """The days of the week a token names: a day ("Monday", "월요일에"), the weekend,
    workdays, or every day; added to ``out`` as ``weekday``."""
    d = _data()
    day = _weekday_of(t, ko)
    if day is not None:
        out.setdefault("weekday", set()).add(day)
    if t.low in d["weekend_words_set"] or t.key in d["weekend_words_set"]:
        out.setdefault("weekday", set()).update({6, 7})
    elif t.low in d["workday_words_set"] or t.key in d["workday_words_set"]:
        out.setdefault("weekday", set()).update({1, 2, 3, 4, 5})
    elif _every_day(lows, i):
        out.setdefault("weekday", set()).update(range(1, 8))


#: words between two days that make them a range ("Monday to Thursday")
_RANGE_LINKS = frozenset({"to", "through", "thru", "till", "until", "-", "–"})


def _weekday_of(t: Tok, ko: bool) -> int | None:
    """The day of the week a token names, or None."""
    weekdays = _data()["weekdays"]
    day = weekdays.get(t.low)
    if day is None:
        day = weekdays.get(t.key)
    if day is not None:
        return int(day)
    if ko and t.low[:1] in _KO_DAY_INITIALS:
        for cand in (t.low, t.key):
            for w in _ko_weekdays():
                if cand.startswith(w):
                    return int(weekdays[w])
    return None


#: the first syllables of the Korean day names ("월요일" ... "일요일")
_KO_DAY_INITIALS = frozenset("월화수목금토일")


def _weekday_range(toks: Sequence[Tok], ko: bool, out: dict[str, set[Any]]) -> None:
    """Two days given as a range ("Monday to Thursday", "Friday through Sunday",
    "월요일부터 목요일까지") stand for every day between them (a week wraps around)."""
    for i in range(len(toks) - 1):
        first = _weekday_of(toks[i], ko)
        if first is None:
            continue
        if ko:
            if not toks[i].low.endswith("부터"):
                continue
            j = i + 1
        else:
            if i + 2 >= len(toks) or toks[i + 1].low not in _RANGE_LINKS:
                continue
            j = i + 2
        last = _weekday_of(toks[j], ko)
        if last is None or last == first:
            continue
        span = (last - first) % 7
        out["weekday"] = {(first - 1 + k) % 7 + 1 for k in range(span + 1)}
        return


#: words that make the number before them a percentage
_PERCENT_WORDS = frozenset({"percent", "pct", "퍼센트", "프로"})
#: a version number ("18", "3.10", "1.70.2")
VERSION = re.compile(r"^\d{1,4}(?:\.\d{1,4}){0,2}$")
#: words after a version that make it the lowest one accepted ("18 or later", "16 and up")
_OR_LATER = frozenset({"later", "newer", "higher", "above", "greater", "up", "+"})
#: words before a version's name that make it the lowest one ("at least Node 20")
_AT_LEAST = frozenset({"least", "minimum", "min"})


def _minimum_version(lows: Sequence[str], i: int, out: dict[str, set[Any]]) -> None:
    """The lowest version of a named thing a fact accepts: "Node 18 or later", "iOS 16 and
    up", "at least Node 20", "Python 3.10 이상", added to ``out`` as ``minimum:<name>``
    (its number without trailing ".0"). Two such values of one name are two minimums."""
    if i == 0 or not VERSION.match(lows[i]):
        return
    name = lows[i - 1]
    if not name.isalpha() or len(name) < 2 or name in _AT_LEAST or name in EN_STOPWORDS:  # noqa: PLR2004
        return  # "in 2019 or later" is a year
    after = lows[i + 1 : i + 3]
    later = (len(after) == 2 and after[0] in ("or", "and") and after[1] in _OR_LATER) or (
        bool(after) and after[0].startswith("이상")
    )
    if later or (i >= 2 and lows[i - 2] in _AT_LEAST):  # noqa: PLR2004
        version = lows[i]
        while version.endswith(".0"):
            version = version[:-2]
        out.setdefault("minimum:" + name, set()).add(version)


def _school_grade(lows: Sequence[str], i: int) -> float | None:
    """A school year at ``i``: "in year 2", "in grade 5", "in 3rd grade" (1 to 13; "year 2"
    opening a value counts too: "is in" is then the relation's)."""
    low = lows[i]
    if low in ("year", "grade") and (i == 0 or lows[i - 1] == "in") and i + 1 < len(lows):
        num = _number(lows[i + 1])
    elif low == "grade" and i > 0:
        m = _ORDINAL.match(lows[i - 1])
        num = float(m.group(1)) if m else None
    else:
        return None
    return num if num is not None and num.is_integer() and 1 <= num <= 13 else None  # noqa: PLR2004


#: "once", "twice", "thrice": a count of times, keyed as "3 times" is
_TIMES = {"once": 1.0, "twice": 2.0, "thrice": 3.0}
#: "every month", "per week": one period, as "a month" is (not "every day": a schedule)
_EVERY = frozenset({"every", "each", "per"})
_PERIODS = frozenset({"week", "fortnight", "month", "year"})


def _month_value(
    lows: Sequence[str], i: int, months: dict[str, int], out: dict[str, set[Any]]
) -> None:
    """The typed value of a month name at ``i``: a date with the day after it ("May 3"), a
    month and a year ("August 2027"), or the month alone (not a short "may")."""
    low = lows[i]
    if i + 1 < len(lows) and _NUM.match(lows[i + 1]):
        day = int(float(lows[i + 1]))
        if 1 <= day <= 31:  # noqa: PLR2004
            out.setdefault("date", set()).add((months[low], day))
        elif _FIRST_YEAR <= day <= _LAST_YEAR and len(low) > 2:  # noqa: PLR2004
            out.setdefault("month", set()).add(months[low])
            out.setdefault("year", set()).add(day)
    elif len(low) > 3:  # noqa: PLR2004
        out.setdefault("month", set()).add(months[low])


def _number_and_unit(
    toks: Sequence[Tok], i: int, ko: bool, months: dict[str, int], out: dict[str, set[Any]]
) -> None:
    """The typed value of a number at ``i`` read with the word after it: a date ("3 May"),
    a duration ("2 hours", "한 시간 반"), or a count ("3 kids", "두 잔씩"), added to ``out``."""
    d = _data()
    units = d["duration_units"]
    low = toks[i].low
    num = _number(low)
    if num is None or i + 1 >= len(toks):
        return
    nxt, nxt_key = toks[i + 1].low, toks[i + 1].key
    if i > 0 and toks[i - 1].low in CURRENCY_CODES:  # "CHF 950": the code before it
        out.setdefault("money:" + CURRENCY_WORDS[toks[i - 1].low], set()).add(num)
        return
    if _age(toks, i, num):
        out.setdefault("age", set()).add(num)
        return
    if nxt in ("am", "pm") and num.is_integer() and 1 <= num <= 12:  # noqa: PLR2004
        # "at 2 pm": a clock time, not two of "pm"
        out.setdefault("clock", set()).add((int(num) % 12 + (12 if nxt == "pm" else 0), 0))
        return
    if nxt in EN_SCALES and i + 2 < len(toks) and toks[i + 2].low in CURRENCY_WORDS:
        # "1.4 million won": the scale, then the currency
        out.setdefault("money:" + CURRENCY_WORDS[toks[i + 2].low], set()).add(num * EN_SCALES[nxt])
        return
    if nxt in CURRENCY_WORDS or (ko and nxt_key in CURRENCY_WORDS):
        # "50,000 won", "40 dollars", "1,200유로를": an amount of money
        unit = nxt if nxt in CURRENCY_WORDS else nxt_key
        out.setdefault("money:" + CURRENCY_WORDS[unit], set()).add(num)
        return
    if ko and nxt not in units and nxt_key in units and nxt_key != "일":
        nxt = nxt_key  # "두 시간이": the unit without its particle ("한 일": a task)
    if nxt in months and not (i > 0 and toks[i - 1].low in months):
        out.setdefault("date", set()).add((months[nxt], int(num)))
    elif nxt in units and (low not in ("a", "an") or nxt not in ("second",)):
        num += _ko_half(toks, i + 2) if ko else 0.0  # "한 시간 반": an hour and a half
        out.setdefault("duration", set()).add(round(num * float(units[nxt]), 2))
    elif ko and _is_hangul(nxt) and _ko_counter(nxt):  # "한 번", "두 잔씩"
        noun = toks[i - 1] if i > 0 else None
        if (
            nxt.startswith(tuple(_COUNTED))
            and noun is not None
            and _is_hangul(noun.low)
            and noun.key not in KO_QUANTITY_ADVERBS
        ):  # "고양이 두 마리", "강아지 한 마리": cats and dogs, two counts
            out.setdefault("count:" + noun.key, set()).add(num)
        else:
            out.setdefault("count:" + str(_ko_counter(nxt)), set()).add(num)
    elif (low not in ("a", "an", "one") or nxt in units) and _counts(nxt, d):
        out.setdefault("count:" + nxt_key, set()).add(num)


def _age_number(num: float | None) -> bool:
    """Whether a number can be a person's age (a whole number up to :data:`_MAX_AGE`)."""
    return num is not None and num.is_integer() and 0 < num <= _MAX_AGE


def _no_unit(nxt: str) -> bool:
    """Whether the word after a number leaves it bare: no unit, no counted noun ("turned
    36 last month", not "turned 3 pages" or "turned 90 degrees")."""
    d = _data()
    return nxt not in d["duration_units"] and not (
        nxt not in d["determiners_set"] and _counts(nxt, d)
    )


def _age(toks: Sequence[Tok], i: int, num: float) -> bool:
    """Whether the number at ``i`` (not the last token) is a person's age: "34 years old",
    "turned 36", "turns 10 this year", "aged 40" (no unit or counted noun after it)."""
    if not _age_number(num):
        return False
    nxt = toks[i + 1].low
    if nxt in _AGE_YEARS:
        return i + 2 < len(toks) and toks[i + 2].low == "old"
    if nxt.startswith("살") or nxt in ("세", "세이다", "세다"):
        return True  # "서른다섯 살", "7 세": the ages "35살" and "7세" are
    return i > 0 and toks[i - 1].low in AGE_VERBS and _no_unit(nxt)


def age_after_verb(verb: str, value_toks: Sequence[Tok]) -> float | None:
    """The age a verb gives when its value opens with a number: "turns 10 this year",
    "turned 36 last month" (not "turned 3 pages" or "turned 90 degrees")."""
    if verb not in AGE_VERBS or not value_toks:
        return None
    num = _number(value_toks[0].low)
    if num is None or not _age_number(num):
        return None
    return num if len(value_toks) == 1 or _no_unit(value_toks[1].low) else None


def _ko_clock(num_s: str, unit: str, toks: Sequence[Tok], i: int, out: dict[str, set[Any]]) -> bool:
    """A Korean clock time ("7시", "7시 40분", "7시 반", "오후 3시"), added to ``out`` as
    ``clock``; False when the number is no hour ("3시간" is a duration)."""
    if not unit.startswith("시") or unit.startswith("시간"):
        return False
    hour = int(num_s)
    if hour > 24:  # noqa: PLR2004 - no hour of the day
        return False
    if i > 0 and toks[i - 1].low in ("오후", "저녁") and hour < 12:  # noqa: PLR2004
        hour += 12
    minute = 0
    if i + 1 < len(toks):
        nxt = toks[i + 1].low
        mm = _KO_NUM_UNIT.match(nxt)
        if mm and mm.group(2).startswith("분") and int(mm.group(1)) < 60:  # noqa: PLR2004
            minute = int(mm.group(1))
        elif nxt.startswith("반"):
            minute = 30
    out.setdefault("clock", set()).add((hour % 24, minute))
    return True


def _counts(word: str, d: dict[str, Any]) -> bool:
    """Whether ``word`` after a number is what it counts ("3 kids", "40 employees"), not a
    preposition, a link word or punctuation ("$373.52 by", "7 :")."""
    return (
        len(word) >= 2  # noqa: PLR2004 - "a", ":" and "," count nothing
        and word[0].isalpha()
        and word not in d["prepositions_set"]
        and word not in d["determiners_set"]
        and word not in d["conjunctions_set"]
        and word not in _NOT_COUNTED
    )


def _every_day(lows: Sequence[str], i: int) -> bool:
    """Whether the token at ``i`` says "every day" ("daily", "every day", "매일", "날마다")."""
    low = lows[i]
    if low in ("daily", "everyday") or low.startswith(("매일", "날마다")):
        return True
    return low == "every" and i + 1 < len(lows) and lows[i + 1] == "day"


def _merge_compound_durations(
    toks: Sequence[Tok], out: dict[str, set[Any]], units: dict[str, float]
) -> None:
    """ "1시간 30분" / "1 hour 30 minutes" is one duration, not two."""
    durations = out.get("duration")
    if not durations or len(durations) < 2:
        return
    total = 0.0
    for t in toks:
        m = _KO_NUM_UNIT.match(t.low)
        if m and m.group(2) in units:
            total += float(m.group(1)) * float(units[m.group(2)])
    if total:
        out["duration"] = {round(total, 2)}


@functools.cache
def _month_names() -> dict[str, int]:
    from auditor.detectors._contradiction_data import MONTHS

    return dict(MONTHS)


def _ko_negated(toks: Sequence[Tok]) -> bool:
    """Whether Korean tokens negate: "절대", "금지", the adverb "안" / "못", "...지 않다",
    "...지 말다". Read by token, not by substring: "주말" (weekend) holds 말 and "편안"
    holds 안, and neither negates anything."""
    words = _data()["never_words_ko_set"]
    for i, t in enumerate(toks):
        low = t.low
        if low in words or low.startswith(("절대", "금지")):
            return True
        if low.startswith(("않", "안하", "안해", "못하", "못해")):
            return True
        if low.startswith("말") and i > 0 and toks[i - 1].low.endswith("지"):
            return True  # "하지 말고", "먹지 마"
        if low.endswith(("지않", "지않는다", "지않아", "지않음")):
            return True
    return False


#: "plan" words that are also nouns or noun modifiers ("phone plan", "planning call"):
#: a plan only as a verb or with what is planned after them ("plans to", "planning a")
_PLAN_NOUNS = frozenset({"plan", "plans", "planning", "planned"})
_PLAN_OBJECT = frozenset({"to", "on", "a", "an", "the", "for", "what", "our", "his", "her"})


def _plan_verb(lows: Sequence[str], i: int) -> bool:
    """Whether the plan word at ``i`` states a plan ("plans to move", "planning a trip",
    "the plan is to move") rather than naming a thing ("phone plan", "planning call")."""
    nxt = lows[i + 1] if i + 1 < len(lows) else ""
    if nxt in _PLAN_OBJECT:
        return True
    return nxt in ("is", "was") and i + 2 < len(lows) and lows[i + 2] == "to"


def modality_of(lows: Sequence[str], text: str, ko: bool) -> Modality:
    """Whether a sentence (its lower-case tokens and text) states the present, a plan, a
    past state or a hypothetical."""
    d = _data()
    if ko:
        if any(t.startswith(w) for t in lows for w in d["hypothetical_words_ko"]):
            return "hypothetical"
        if any(w in text for w in d["plan_words_ko"]):
            return "plan"
        # (not "작년부터": since last year, and still)
        if any(
            t.startswith(w) and not t.endswith("부터") for t in lows for w in d["past_words_ko"]
        ) or any(e in text for e in d["past_endings_ko"]):
            return "past"
        return "current"
    if any(w in d["hypothetical_words_set"] for w in lows):
        return "hypothetical"
    if any(
        w in d["plan_words_set"]
        and (w not in _PLAN_NOUNS or _plan_verb(lows, i))
        and not (w == "later" and i > 0 and lows[i - 1] == "or")  # "Node 18 or later": a bound
        for i, w in enumerate(lows)
    ) or has_phrase(lows, ["going to"]):
        return "plan"
    if has_phrase(lows, d["past_words"]):
        return "past"
    return "current"


def bigrams(s: str) -> set[str]:
    """The two-character pieces of ``s`` without its spaces (a Korean head's keys)."""
    s = s.replace(" ", "")
    return {s[i : i + 2] for i in range(len(s) - 1)} or {s}
