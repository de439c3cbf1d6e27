"""Numbers, dates and clock times in a fact, for the contradiction detector.

:func:`_numbers` reads the numbers a fact names (digits, number words, Korean counts) with
what they count (``unit``) or follow (``prev``), outside the spans of the dates
:func:`_dates` reads (ISO, numeric, month-name and Korean dates, bare years);
:func:`_times` reads the clock times that bound a preference ("after 14:00"). The pair judge
compares them as :class:`NumberMention` and :class:`DateMention` values; the
:class:`~auditor.detectors._contradiction_profile.Profile` reads them on demand.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from auditor.detectors import _contradiction_data as data
from auditor.detectors._contradiction_text import Token, is_hangul, stem, token_at
from auditor.detectors._frame_words import birth_year_of

__all__ = ["DateMention", "NumberMention"]

_DIGIT = re.compile(r"\d")

_DIGIT_NUMBER = re.compile(
    r"(?<![\w.:/\-–—])(?P<num>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<frac>\d+))?"
    r"(?P<tail>[\uac00-\ud7a3]{0,3})(?![\d])"
)

_CLOCK = re.compile(
    r"(?i)(?<![\w:.])(?:(?P<h>[01]?\d|2[0-3]):(?P<m>[0-5]\d)\s*(?P<ap>[ap]\.?m\.?)?"
    r"|(?P<h2>1[0-2]|0?[1-9])\s*(?P<ap2>[ap]\.?m\.?))(?![\w:])"
    r"|(?P<half>오전|오후)?\s*(?P<h3>[0-2]?\d)\s*시(?:\s*(?P<m3>[0-5]?\d)\s*분)?"
)

_AMPM = re.compile(r"(?i)\d\s*[ap]\.?m\b")

_MONTH_NAMES = "|".join(sorted(data.MONTHS, key=len, reverse=True))

#: Date patterns with what a text must contain for each to be tried: "month" (a month
#: name token), "ko" (년 or 월) or "digit" (any digit; every date pattern needs one).
_DATE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<!\d)(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?!\d)"), "digit"),
    (re.compile(r"(?<![\d/])(?P<a>\d{1,2})[/.](?P<b>\d{1,2})[/.](?P<y>\d{4})(?![\d/])"), "digit"),
    (
        re.compile(
            rf"(?i)\b(?P<mn>{_MONTH_NAMES})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b"
            rf"(?:,?\s+(?P<y>\d{{4}})\b)?"
        ),
        "month",
    ),
    (
        re.compile(
            rf"(?i)\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mn>{_MONTH_NAMES})\b"
            rf"(?:,?\s+(?P<y>\d{{4}})\b)?"
        ),
        "month",
    ),
    (re.compile(rf"(?i)\b(?P<mn>{_MONTH_NAMES})\s+(?:of\s+)?(?P<y>\d{{4}})\b"), "month"),
    (
        re.compile(r"(?:(?P<y>\d{4})\s*년\s*)?(?P<m>\d{1,2})\s*월\s*(?P<d>\d{1,2})\s*일"),
        "ko",
    ),
    (re.compile(r"(?P<y>\d{4})\s*년(?!\s*\d{1,2}\s*월)"), "ko"),
    (re.compile(r"(?<!\d)(?P<y2>\d{2})\s*년생"), "ko"),  # "94년생": born in 1994
    (re.compile(r"(?<!\d)(?P<m>\d{1,2})\s*월(?!\s*\d{1,2}\s*일)"), "ko"),
    (re.compile(r"(?<![\w.,\-–—])(?P<y>1[5-9]\d{2}|20\d{2})(?![\w-]|[.,]\d)"), "digit"),
)

_KO_DETERMINERS = ("한", "두", "세", "네")

_KO_COUNT_WORDS = ("다섯", "여섯", "일곱", "여덟", "아홉", "하나", "둘", "셋", "넷")


@dataclass(frozen=True, slots=True)
class NumberMention:
    """A number and what it counts (``unit``) or follows (``prev``)."""

    value: float
    start: int
    end: int
    unit: str
    prev: str
    approx: bool
    #: "min" / "max" when the number is a bound ("at least 25 times", "3시간 이상"), else ""
    bound: str = ""
    #: a Korean count's word before its noun, which may be the counted noun when the
    #: noun is a name ("고양이 보리 한 마리": 고양이), else ""
    alt: str = ""
    #: the number is another person's ("her sister has three cats"), set by the profile
    other: bool = False

    def counts_as(self, other: NumberMention) -> bool:
        """Whether two numbers count one thing: one unit, or one Korean noun whose
        particle was read differently ("고양이" / "고양" of "고양이 두 마리"), also through
        the word before a named noun."""
        if self.unit == other.unit or (
            self.unit in _ONE_UNIT and _ONE_UNIT.get(self.unit) == _ONE_UNIT.get(other.unit)
        ):
            return True
        mine = {u for u in (self.unit, self.alt) if u}
        theirs = {u for u in (other.unit, other.alt) if u}
        return any(_same_ko_noun(x, y) for x in mine for y in theirs)


#: stems of one counted thing said two ways ("two children" / "three kids")
_ONE_UNIT = {"children": "child", "child": "child", "kid": "child"}


@dataclass(frozen=True, slots=True)
class DateMention:
    """A calendar date (any of year, month, day may be unknown) and the words before it."""

    year: int | None
    month: int | None
    day: int | None
    start: int
    end: int
    keys: frozenset[str]
    #: the date is another person's ("her sister's wedding is on June 8"), set by the profile
    other: bool = False
    #: capitalised words just before the date ("Paul Hogan, born ..."): whose date it is
    names: frozenset[str] = frozenset()

    def differs(self, other: DateMention) -> bool:
        """Whether the two dates disagree on a field both specify."""
        return any(
            a is not None and b is not None and a != b
            for a, b in ((self.year, other.year), (self.month, other.month), (self.day, other.day))
        )

    def comparable(self, other: DateMention) -> bool:
        """Whether both specify at least one common field."""
        return any(
            a is not None and b is not None
            for a, b in ((self.year, other.year), (self.month, other.month), (self.day, other.day))
        )


def _times(text: str, tokens: Sequence[Token]) -> list[NumberMention]:
    """Clock times that bound a preference ("after 14:00", "오후 3시 이후"), in minutes.

    The unit is ``time:<relation>`` (after / before) and ``prev`` the content word before,
    so "meetings after 13:00" and "meetings after 15:00" conflict while "at 10:00" (an event)
    is not read at all.
    """
    out: list[NumberMention] = []
    if ":" not in text and "시" not in text and _AMPM.search(text) is None:
        return out
    for m in _CLOCK.finditer(text):
        g = m.groupdict()
        hour_s = g["h"] or g["h2"] or g["h3"]
        if hour_s is None:
            continue
        hour, minute = int(hour_s), int(g["m"] or g["m3"] or 0)
        ampm = (g["ap"] or g["ap2"] or "").lower().replace(".", "")
        if (ampm == "pm" or g["half"] == "오후") and hour < 12:
            hour += 12
        elif (ampm == "am" or g["half"] == "오전") and hour == 12:
            hour = 0
        if hour > 24:
            continue
        first = token_at(tokens, m.start())
        last = token_at(tokens, m.end() - 1)
        relation = ""
        before_idx = first - 1
        if first > 0 and tokens[first - 1].text in data.TIME_RELATIONS:
            relation = data.TIME_RELATIONS[tokens[first - 1].text]
            before_idx = first - 2
        elif last + 1 < len(tokens) and tokens[last + 1].text in data.TIME_RELATIONS:
            relation = data.TIME_RELATIONS[tokens[last + 1].text]
        elif last + 1 < len(tokens):
            tail = tokens[last + 1].text
            relation = next(
                (r for w, r in data.TIME_RELATIONS.items() if is_hangul(w) and tail.startswith(w)),
                "",
            )
        if not relation:
            continue
        prev = ""
        for j in range(before_idx, max(-1, before_idx - 4), -1):
            if tokens[j].content and not tokens[j].text[:1].isdigit():
                prev = tokens[j].stem
                break
        out.append(
            NumberMention(
                float(hour * 60 + minute), m.start(), m.end(), f"time:{relation}", prev, False
            )
        )
    return out


#: particles that end a Korean topic, subject, object or place ("민수는", "집에"): such a
#: word is no noun in apposition to the counted one (이 is left out: "고양이")
_KO_CASE_ENDINGS = ("은", "는", "을", "를", "가", "에", "의", "도", "서")


def _same_ko_noun(x: str, y: str) -> bool:
    """Two keys of one Korean noun: equal, or one the other with a final 이 read as a
    particle ("고양" / "고양이"), of at least two syllables."""
    if x == y:
        return True
    if not (is_hangul(x) and is_hangul(y)):
        return False
    short, long_ = sorted((x, y), key=len)
    return len(short) >= 2 and long_ == short + "이"  # noqa: PLR2004


def _korean_count(tokens: Sequence[Token], i: int) -> NumberMention | None:
    """A Korean count: "두 명", "세 개" (determiner + counter) or "아이가 둘", "셋이라"."""
    t = tokens[i]
    prev = tokens[i - 1].stem
    adverb = tokens[i - 1].text in data.KO_QUANTITY_ADVERBS or prev in data.KO_QUANTITY_ADVERBS
    if adverb and i > 1:
        prev = tokens[i - 2].stem  # "손주가 모두 다섯 명": grandchildren, all of them
    bound = _bound(tokens, i, i)  # "적어도 두 번": a lower bound
    if t.text in _KO_DETERMINERS:
        if i + 1 < len(tokens) and any(tokens[i + 1].text.startswith(c) for c in data.KO_COUNTERS):
            before = tokens[i - 2] if i > 1 else None
            alt = (  # a bare noun before a name ("고양이 보리 한 마리"), not a topic ("민수는")
                before.stem
                if before is not None
                and is_hangul(before.text)
                and not before.text.endswith(_KO_CASE_ENDINGS)
                else ""
            )
            times = tokens[i + 1].text.startswith(("번", "회"))  # "두 번": times, not a noun
            return NumberMention(
                float(data.KO_NUMBER_WORDS[t.text]),
                t.start,
                t.end,
                "회" if times else prev,
                prev,
                False,
                bound=bound,
                alt=alt,
            )
        return None
    for word in _KO_COUNT_WORDS:
        if t.text.startswith(word):
            rest = t.text[len(word) :]
            if rest == "도" and word == "하나":
                continue  # "단어 하나도 바꾸지 않고": not even one, no count
            if (
                not rest
                or rest in data.KO_PARTICLES
                or rest.startswith("이")
                or rest in ("명", "임", "뿐")
            ):
                return NumberMention(
                    float(data.KO_NUMBER_WORDS[word]), t.start, t.end, prev, prev, False, bound
                )
    return None


def _counted(tokens: Sequence[Token], last: int, counter: str, tail: str, prev: str) -> str:
    """What a number with a glued Korean counter counts. People and things (명, 개, 마리)
    are counted by their noun: the one after a genitive counter ("4개의 항목": items), else
    the one before ("아이 2명"), unless that is an adverb of quantity ("정확히 4개");
    other counters (잔, 시간, 번) count in themselves."""
    if counter not in ("명", "개", "마리"):
        return counter
    nxt = tokens[last + 1] if last + 1 < len(tokens) else None
    if tail[len(counter) :].startswith("의") and nxt is not None and is_hangul(nxt.text):
        return nxt.stem
    if prev and prev not in data.KO_QUANTITY_ADVERBS:
        return prev
    return counter


def _bound(tokens: Sequence[Token], first: int, last: int) -> str:
    """ "min" or "max" when the number at ``tokens[first..last]`` is a bound ("at least 25
    times", "3시간 이상"; :func:`auditor.detectors._contradiction_data.bound_side`)."""
    clause = tokens[first].clause
    before = tuple(t.text for t in tokens[max(0, first - 3) : first] if t.clause == clause)
    after = tuple(
        t.stem if is_hangul(t.text) else t.text
        for t in tokens[last + 1 : last + 4]
        if t.clause == clause
    )
    return data.bound_side(before, after)


def _number_value(tok: str) -> float | None:
    if tok in data.NUMBER_WORDS:
        return float(data.NUMBER_WORDS[tok])
    if "-" in tok:
        parts = tok.split("-")
        if parts[0] in data.NUMBER_WORDS and parts[1] in data.NUMBER_WORDS:
            a, b = data.NUMBER_WORDS[parts[0]], data.NUMBER_WORDS[parts[1]]
            if a >= 20 and b < 10:
                return float(a + b)
    return None


def _numbers(
    text: str, tokens: Sequence[Token], date_spans: Sequence[tuple[int, int]], hangul: bool
) -> tuple[NumberMention, ...]:
    out: list[NumberMention] = []

    def in_date(pos: int) -> bool:
        return any(a <= pos < b for a, b in date_spans)

    def unit_prev(i_first: int, i_last: int) -> tuple[str, str]:
        unit = ""
        if i_last + 1 < len(tokens):
            t = tokens[i_last + 1]
            if t.content and t.clause == tokens[i_last].clause and not t.text[:1].isdigit():
                unit = t.stem
        prev = ""
        for j in range(i_first - 1, max(-1, i_first - 4), -1):
            t = tokens[j]
            if t.clause != tokens[i_first].clause:
                break
            if t.content or t.text in data.LIGHT_VERBS:
                prev = t.stem
                break
        return unit, prev

    def approx_before(i_first: int) -> bool:
        return any(tokens[j].text in data.APPROX_WORDS for j in range(max(0, i_first - 2), i_first))

    for m in _DIGIT_NUMBER.finditer(text):
        if in_date(m.start()):
            continue
        raw = m.group("num").replace(",", "")
        if "," not in m.group("num") and len(raw) > 4:
            continue  # an identifier or a code, not a count
        value = float(raw + ("." + m.group("frac") if m.group("frac") else ""))
        first = token_at(tokens, m.start())
        last = token_at(tokens, m.end() - 1)
        if last >= len(tokens) or tokens[first].start != m.start() or tokens[last].end != m.end():
            continue  # part of a larger token (an id, a version, a phone number)
        tail = m.group("tail")
        if tail:  # Korean counter glued to the number: 2명, 3개, 5년
            counter = next((c for c in data.KO_COUNTERS if tail.startswith(c)), "")
            prev = tokens[first - 1].stem if first > 0 else ""
            unit = _counted(tokens, last, counter, tail, prev)
        else:
            unit, prev = unit_prev(first, last)
        out.append(
            NumberMention(
                value,
                m.start(),
                m.end(),
                unit,
                prev,
                approx_before(first),
                _bound(tokens, first, last),
            )
        )
    for i, t in enumerate(tokens):
        word_value = _number_value(t.text)
        if word_value is not None and not t.text.isdigit():
            if t.text in ("once", "single", "pair", "couple") or (
                t.text == "one" and i + 1 < len(tokens) and tokens[i + 1].text == "of"
            ):
                continue
            if (
                "-" in t.text
                and _number_value(t.text.split("-")[0]) is not None
                and t.text.count("-") == 1
                and t.text.split("-")[1] not in data.NUMBER_WORDS
            ):
                word_value = _number_value(t.text.split("-")[0])
                if word_value is None:
                    continue
                out.append(
                    NumberMention(
                        word_value, t.start, t.end, stem(t.text.split("-", 1)[1]), "", False
                    )
                )
                continue
            unit, prev = unit_prev(i, i)
            if unit:
                out.append(
                    NumberMention(
                        word_value,
                        t.start,
                        t.end,
                        unit,
                        prev,
                        approx_before(i),
                        _bound(tokens, i, i),
                    )
                )
        elif hangul and i > 0 and is_hangul(t.text):
            found = _korean_count(tokens, i)
            if found is not None:
                out.append(found)
    return tuple(out)


def _dates(text: str, tokens: Sequence[Token]) -> tuple[DateMention, ...]:
    out: list[DateMention] = []
    if _DIGIT.search(text) is None:
        return ()
    taken: list[tuple[int, int]] = []
    has = {
        "digit": True,
        "month": any(t.text in data.MONTHS for t in tokens),
        "ko": "월" in text or "년" in text,
    }
    for pattern, needs in _DATE_PATTERNS:
        if not has[needs]:
            continue
        for m in pattern.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            groups = m.groupdict()
            year = int(groups["y"]) if groups.get("y") else None
            if groups.get("y2"):
                year = birth_year_of(int(groups["y2"]))
            month: int | None = None
            if groups.get("mn"):
                month = data.MONTHS[groups["mn"].lower()]
            elif groups.get("m"):
                month = int(groups["m"])
            day = int(groups["d"]) if groups.get("d") else None
            if groups.get("a"):
                # 8/5/1989: month and day order is ambiguous unless one is above 12
                a, b = int(groups["a"]), int(groups["b"])
                if a > 12 >= b:
                    day, month = a, b
                elif b > 12 >= a:
                    month, day = a, b
            if (month is not None and not 1 <= month <= 12) or (
                day is not None and not 1 <= day <= 31
            ):
                continue
            taken.append(m.span())
            first = token_at(tokens, m.start())
            keys: set[str] = set()
            names: set[str] = set()
            clause = tokens[first].clause if first < len(tokens) else -1
            for j in range(first - 1, max(-1, first - 6), -1):
                t = tokens[j]
                if t.clause < clause - 1:
                    break
                if t.content:
                    keys.add(t.stem)
                    keys.add(t.text)
                    word = text[t.start : t.end]
                    if len(word) > 1 and word.isascii() and word[0].isupper():
                        names.add(t.stem)
            last = token_at(tokens, m.end() - 1)
            for j in range(last + 1, min(len(tokens), last + 3)):
                t = tokens[j]
                if t.content:
                    keys.add(t.stem)
            keys |= {
                "event:" + data.ONCE_DATE_EVENTS[k] for k in keys if k in data.ONCE_DATE_EVENTS
            }
            if text.startswith("생", m.end()) or m.group().endswith("년생"):
                keys.add("event:birth")  # "1991년생", "94년생": the year of birth
            out.append(
                DateMention(
                    year, month, day, m.start(), m.end(), frozenset(keys), names=frozenset(names)
                )
            )
    return tuple(out)
