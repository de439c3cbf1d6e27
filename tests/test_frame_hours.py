"""The days a place is closed, told once in each language (auditor/detectors/frame_hours.py)."""

from __future__ import annotations

import pytest

from auditor.detectors.frame_hours import closing_days_apart, hours_keys
from auditor.testing import first_and_last_meet


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("The shop is closed every Wednesday.", "가게는 연중무휴, 매일 문을 연다."),
        ("The bar is closed on Mondays.", "바 정기 휴무일은 화요일이다."),
        ("Babcia is closed every Monday.", "가게는 월요일 휴무 없이 일주일 내내 문을 연다."),
        ("일요일에도 오전에는 가게 문을 연다.", "Shop is closed on Sundays."),
        ("가게는 매주 일요일에 쉽니다.", "We're open seven days a week."),
    ],
)
def test_closed_on_a_day_the_other_says_open(older: str, newer: str) -> None:
    assert closing_days_apart(older, newer)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("The gym is closed on Sundays.", "가게는 연중무휴다."),  # two places
        ("The shop is closed on Mondays.", "가게는 월요일에 쉰다."),  # one day
        ("The shop is open every day.", "명절에는 가게 문을 닫는다."),  # a holiday's exception
        ("The shop is closed on Mondays.", "The shop is open every day."),  # one language
        ("Her sister's bar is closed on Mondays.", "바는 연중무휴다."),  # a relative's
        ("The cafe will be closed on Mondays from next year.", "카페는 매일 문을 연다."),  # a plan
        ("Closed on Mondays and Tuesdays.", "가게는 월요일에 쉰다."),  # one of the two days
        ("Closed on Mondays and Tuesdays.", "가게는 수요일에 쉰다."),  # two days: not one each
    ],
)
def test_hours_that_do_not_conflict(older: str, newer: str) -> None:
    assert not closing_days_apart(older, newer)


def test_a_places_hours_meet_across_the_languages() -> None:
    first, last = "The shop is closed every Wednesday.", "가게는 연중무휴, 매일 문을 연다."
    assert hours_keys(first) == hours_keys(last) == ["hours:"]
    assert hours_keys("Sold cake number 3 this morning.") == []
    assert first_and_last_meet(first, last, "Sold cake number {n} this morning.")
