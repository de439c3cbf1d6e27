"""One amount or date told once in each language (auditor/detectors/frame_crossings.py),
and the amounts of money the frames read (auditor/detectors/_frame_money.py)."""

from __future__ import annotations

import pytest

from auditor.detectors._frame_money import ko_amount
from auditor.detectors._frame_words import _tokens, _typed
from auditor.detectors.frame_crossings import crossed_typed, crossing_keys
from auditor.testing import first_and_last_meet


@pytest.mark.parametrize(
    ("number", "value"),
    [
        ("50만", 500_000.0),
        ("6천만", 60_000_000.0),
        ("7천2백만", 72_000_000.0),
        ("1억2천만", 120_000_000.0),
        ("4,500만", 45_000_000.0),
        ("3", 3.0),
    ],
)
def test_korean_amounts_with_their_scales(number: str, value: float) -> None:
    assert ko_amount(number) == value


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("월세로 80만 원을 낸다.", "money:₩", 800_000.0),
        ("연봉은 7천2백만 원이다.", "money:₩", 72_000_000.0),  # cut in two by the tokenizer
        ("연봉은 4,500만원이다.", "money:₩", 45_000_000.0),  # cut after the comma
        ("매달 2,140달러를 받는다.", "money:$", 2140.0),
        ("월세는 1,200유로다.", "money:€", 1200.0),
        ("Rent is CHF 1,240 per month.", "money:chf", 1240.0),
        ("His pension is about 2.1 million won a month.", "money:₩", 2_100_000.0),
        ("Raised $2.5 million last year.", "money:$", 2_500_000.0),
        ("가격은 40 dollars이다.", "money:$", 40.0),  # a Latin currency word in Korean
    ],
)
def test_amounts_of_money_are_money(text: str, kind: str, value: float) -> None:
    typed = _typed(_tokens(text), text[0] >= "\uac00")
    assert typed.get(kind) == {value}


@pytest.mark.parametrize("text", ["직원은 3만 명이다.", "2019 3월에 이사했다.", "사과 2천 개"])
def test_numbers_that_are_no_money(text: str) -> None:
    typed = _typed(_tokens(text), True)
    assert not any(k.startswith("money:") for k in typed)


@pytest.mark.parametrize(
    ("older", "newer", "kind"),
    [
        ("Her monthly rent is €980.", "월세로 매달 1,150유로를 낸다.", "money"),
        ("Kwame's knee surgery is on June 12.", "무릎 수술은 6월 3일로 잡혔다.", "date"),
        ("His pension is paid on the 10th of every month.", "연금은 매달 15일에 들어온다.", "dom"),
        (
            "교원연금으로 매달 2,140달러를 받는다.",
            "Her pension comes to about $1,600 a month.",
            "money",
        ),
        ("Saves 4,000 NOK a month in savings.", "매달 7,500크로네를 적금에 넣는다.", "money"),
        ("Her lease contract ends in March.", "집 계약은 10월에 끝난다.", "month"),
        ("Retired from the post office in March 2018.", "2020년에 우체국에서 은퇴했다.", "year"),
    ],
)
def test_one_amount_or_date_told_in_each_language(older: str, newer: str, kind: str) -> None:
    assert crossed_typed(older, newer) == kind


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Her monthly rent is €980.", "월세로 매달 980유로를 낸다."),  # one value
        ("Her salary is €4,000 a month.", "연봉은 48,000유로다."),  # a month's and a year's
        ("Her sister's rent is €700 a month.", "월세로 매달 980유로를 낸다."),  # a relative
        ("She is thinking of a flat with a rent of €1,200.", "월세로 매달 980유로를 낸다."),
        ("The exam was on May 3.", "시험은 6월 10일이다."),  # a past exam and the next
        ("Her rent is €980.", "Her rent is €1,150."),  # one language: the frames' work
        (
            "Pays 450,000 won a month for Hayun's daycare.",
            "하윤이 영어 수업비로 매달 12만 원을 낸다.",
        ),
        ("Her rent is about €1,000.", "월세로 약 1,100유로를 낸다."),  # approximately one
    ],
)
def test_amounts_that_are_not_one_told_twice(older: str, newer: str) -> None:
    assert crossed_typed(older, newer) is None


def test_one_rent_meets_its_translation_as_a_candidate() -> None:
    first, last = "Her monthly rent is €980.", "월세로 매달 1,150유로를 낸다."
    assert crossing_keys(first) == crossing_keys(last) == ["cross:rent"]
    assert crossing_keys("Bought plant number 3 for the balcony.") == []
    assert first_and_last_meet(first, last, "Bought plant number {n} for the balcony.")
