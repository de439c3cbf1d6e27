"""The days a place is closed, told once in each language: "The shop is closed every
Wednesday" / "가게는 연중무휴, 매일 문을 연다", "The bar is closed on Mondays" / "바 정기 휴무일은
화요일이다", "Shop is closed on Sundays" / "일요일에도 오전에는 가게 문을 연다".

The schedule checks (:mod:`auditor.detectors.frame_schedule`) compare the words of two
facts, so a place's hours told in English and in Korean never meet there. This check
reads, in each language, the days a fact says a place is closed ("closed on Mondays",
"월요일 휴무", "휴무일은 화요일") and the days it says it is open ("open every day",
"open seven days a week", "연중무휴", "일주일 내내 문을 연다", "일요일에도 문을 연다").
Two facts conflict when one says the place is closed on a day the other says it is open,
or when each names one regular closing day and the two differ. Both facts must name the
same kind of place, or one of them a generic shop (``_PLACES``: a bar and "바", a
pharmacy and "약국", a shop and "가게"); a fact that names no place ("Babcia is closed on
Mondays") meets one that names a generic shop or none. Not read: a plan, a past state, a
fact about a relative, an exception on an occasion ("명절에는 쉰다"). Read by
:mod:`auditor.detectors.frame_reading`.
"""

from __future__ import annotations

import functools
import re

from auditor.detectors._frame_words import _data, _is_hangul
from auditor.detectors.contradiction_frames import text_modality
from auditor.detectors.frame_people import names_a_relative

__all__ = ["closing_days_apart", "hours_keys"]

#: Facts whose reading is remembered (as the frames' cache of facts).
_FACT_CACHE = 10_000
#: A longer fact is a page, not one place's hours.
_MAX_CHARS = 240
_ALL_DAYS = frozenset(range(1, 8))
#: kinds of place by their words in both languages; "shop" is also what any of them is
_PLACES = {
    "shop": ("shop", "store", "가게", "매장", "점포"),
    "bar": ("bar", "pub", "바", "술집", "펍"),
    "cafe": ("café", "cafe", "coffee shop", "카페"),
    "restaurant": ("restaurant", "diner", "식당", "음식점", "레스토랑"),
    "bakery": ("bakery", "빵집", "베이커리"),
    "pharmacy": ("pharmacy", "약국"),
    "clinic": ("clinic", "hospital", "practice", "병원", "의원", "클리닉"),
    "gym": ("gym", "헬스장", "체육관"),
    "salon": ("salon", "미용실"),
    "library": ("library", "도서관"),
}
_EN_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
#: "closed on Mondays", "closed every Wednesday", "closes on Sundays"
_EN_CLOSED = re.compile(
    rf"\bclos(?:ed|es)\s+(?:on\s+|every\s+|all\s+day\s+on\s+)?(?P<day>{_EN_DAY})", re.IGNORECASE
)
#: one more day in a list after the first ("... and Tuesdays", ", Tuesdays")
_EN_MORE_DAYS = re.compile(rf"\s*(?:,|and|&)\s*(?:on\s+)?(?P<day>{_EN_DAY})", re.IGNORECASE)
#: "open every day", "open seven days a week", "never closes", "doesn't close"
_EN_OPEN_ALL = re.compile(
    r"\bopen\s+(?:every\s+day|daily|7\s+days|seven\s+days|all\s+week)"
    r"|\bnever\s+closes?\b|\b(?:does\s+not|doesn't|don't|do\s+not)\s+close\b",
    re.IGNORECASE,
)
#: "open on Sundays", "opens on Sundays too"
_EN_OPEN_ON = re.compile(rf"\bopens?\s+(?:on\s+|every\s+)(?P<day>{_EN_DAY})", re.IGNORECASE)
_KO_DAY = r"(?P<day>[월화수목금토일])요일"
#: "월요일 휴무", "매주 수요일은 쉰다", "일요일에는 문을 닫는다"; "휴무일은 화요일" (not
#: "월요일 휴무 없이": without one)
_KO_CLOSED = (
    re.compile(
        rf"{_KO_DAY}(?:은|는|에는|에)?\s*(?:정기\s*)?(?:휴무|휴업|쉰다|쉽니다|쉼|문을?\s*닫)(?!\s*없)"
    ),
    re.compile(rf"휴무일?(?:은|는)?\s*(?:매주\s*)?{_KO_DAY}"),
)
#: "연중무휴", "일주일 내내 문을 연다", "매일 문을 연다", "휴무 없이"
_KO_OPEN_ALL = re.compile(
    r"연중무휴|(?:일주일\s*내내|매일|하루도\s*안\s*쉬고)\s*(?:문을?\s*)?(?:연|열)|휴무\s*없이"
)
#: "일요일에도 문을 연다", "일요일에도 오전에는 가게 문 열어서"
_KO_OPEN_ON = re.compile(rf"{_KO_DAY}에도\s*(?:[가-힣]+\s+){{0,3}}?문을?\s*(?:연|열)")
#: words every reading above holds, for a cheap test first
_KO_CUES = ("휴무", "휴업", "쉰", "쉽", "쉼", "문을", "문 ", "문닫", "문열", "문연")
_EN_CUES = ("clos", "open")
#: the Korean day syllables in day order
_KO_DAYS = "월화수목금토일"
#: occasions a rule has exceptions on ("명절에는 쉰다")
_OCCASIONS = ("명절", "공휴일", "holiday", "holidays", "설날", "추석", "christmas")


class _Hours:
    __slots__ = ("closed", "open", "place")

    def __init__(self, closed: frozenset[int], open_: frozenset[int], place: str | None) -> None:
        self.closed, self.open, self.place = closed, open_, place


@functools.lru_cache(maxsize=_FACT_CACHE)
def _hours(text: str) -> _Hours | None:
    """The days a short fact says a place is closed and open, and the place's kind."""
    if len(text) > _MAX_CHARS:
        return None
    ko = _is_hangul(text)
    low = text.lower()
    if not any(c in (text if ko else low) for c in (_KO_CUES if ko else _EN_CUES)):
        return None  # (the cheap test first)
    if ko:
        closed = {_KO_DAYS.index(m.group("day")) + 1 for p in _KO_CLOSED for m in p.finditer(text)}
        open_ = set(_ALL_DAYS) if _KO_OPEN_ALL.search(text) else set()
        open_ |= {_KO_DAYS.index(m.group("day")) + 1 for m in _KO_OPEN_ON.finditer(text)}
    else:
        closed = {d for m in _EN_CLOSED.finditer(text) for d in _en_days(text, m)}
        open_ = set(_ALL_DAYS) if _EN_OPEN_ALL.search(text) else set()
        open_ |= {_en_day(m.group("day")) for m in _EN_OPEN_ON.finditer(text)}
    if not closed and not open_:
        return None
    if any(o in low for o in _OCCASIONS) or text_modality(text) != "current":
        return None
    if names_a_relative(text):
        return None
    return _Hours(frozenset(closed), frozenset(open_ - closed), _place(low))


def _en_day(word: str) -> int:
    return int(_data()["weekdays"][word.lower()])


def _en_days(text: str, m: re.Match[str]) -> set[int]:
    """The day a match names and the days listed right after it ("closed on Mondays and
    Tuesdays", "closed Mondays, Tuesdays")."""
    days = {_en_day(m.group("day"))}
    pos = m.end()
    while (more := _EN_MORE_DAYS.match(text, pos)) is not None:
        days.add(_en_day(more.group("day")))
        pos = more.end()
    return days


def _place(low: str) -> str | None:
    """The kind of place a fact names (the most specific), or None."""
    found = [
        kind
        for kind, words in _PLACES.items()
        if any(re.search(rf"(?<![a-z가-힣]){re.escape(w)}", low) for w in words)
    ]
    specific = [k for k in found if k != "shop"]
    return specific[0] if specific else (found[0] if found else None)


def closing_days_apart(a_text: str, b_text: str) -> bool:
    """Whether a fact in English and one in Korean say a place is closed on a day the
    other says it is open, or give it two different single closing days (see the module)."""
    if _is_hangul(a_text) == _is_hangul(b_text):
        return False
    a, b = _hours(a_text), _hours(b_text)
    if a is None or b is None or not _one_place(a.place, b.place):
        return False
    if (a.closed & b.open) or (b.closed & a.open):
        return True
    return len(a.closed) == 1 and len(b.closed) == 1 and a.closed != b.closed


def _one_place(a: str | None, b: str | None) -> bool:
    """Whether two facts' places may be one: the same kind, a generic shop, or none named."""
    return a is None or b is None or a == b or "shop" in (a, b)


def hours_keys(text: str) -> list[str]:
    """The blocking key of a fact that tells a place's closing or opening days ("hours:"),
    so that the same place's hours told in the other language meet it."""
    return ["hours:"] if _hours(text) is not None else []
