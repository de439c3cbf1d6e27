"""One activity told at two rates (auditor/detectors/frame_rates.py) and its candidates."""

from __future__ import annotations

import pytest

from auditor.detectors.contradiction import candidate_pairs
from auditor.detectors.frame_rates import other_rates, rate_keys
from auditor.testing import subject_views


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Ines swims three times a week.", "Ines swims twice a week."),
        ("Ines goes running three mornings a week.", "Ines only runs once a week."),
        ("Ines works three 10-hour night shifts a week.", "Ines does four night shifts a week."),
        ("Ines calls her father every Sunday.", "Ines calls her father twice a week."),
        ("Ines sees her physio once every two weeks.", "Ines sees her physio every Monday."),
        (
            "이네스는 한 달에 두 번 정도 수영을 한다.",
            "이네스는 매주 화요일과 목요일에 수영을 한다.",
        ),
        ("이네스는 주 3회 요가를 한다.", "이네스는 일주일에 한 번 요가를 한다."),
    ],
)
def test_one_activity_at_two_rates(older: str, newer: str) -> None:
    assert other_rates(older, newer)
    assert other_rates(newer, older)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Ines swims three times a week.", "Ines goes to pilates once a week."),  # two things
        ("Ines runs 10 km three times a week.", "Ines goes running three times a week."),
        ("Ines swims about twice a month.", "Ines swims three times a month."),  # "about"
        ("Ines swims every day in summer.", "Ines swims twice a week."),  # a season
        ("Ines swims twice a week when it is warm.", "Ines swims every day."),  # a condition
        ("Ines plans to swim four times a week.", "Ines swims twice a week."),  # a plan
        ("Ines swims at least twice a week.", "Ines swims at least four times a week."),  # bounds
        ("Ines pays 420 euros a month for rent.", "Ines pays 35 euros a month for her phone."),
        ("Ines's shifts are always on weekdays.", "Ines works night shifts three times a week."),
    ],
)
def test_no_two_rates_of_one_activity(older: str, newer: str) -> None:
    assert not other_rates(older, newer)


def test_two_rates_of_one_activity_meet_as_candidates() -> None:
    """The rate keys bring the two facts together among many that share more words."""
    facts = ["Ines swims three times a week."]
    facts += [f"Ines swam {n} lengths at the lido in week {n}." for n in range(30)]
    facts += ["Ines swims twice a week."]
    assert rate_keys(facts[0]) == rate_keys(facts[-1]) == ["rate:swim"]
    pairs = candidate_pairs(subject_views(facts, "user:ines"))
    assert frozenset({"m0", f"m{len(facts) - 1}"}) in pairs


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        # things done in a period, counted with a counter and native numerals
        ("한 주에 보통 스무 대 정도 수리한다.", "일주일에 여섯 대만 수리한다."),
        # a condition in another sentence does not hide the rate
        ("일주일에 세 번 수영한다.", "일주일에 다섯 번 수영한다. 비가 오면 쉰다."),
    ],
)
def test_korean_rates_counted_in_things_and_read_by_sentence(older: str, newer: str) -> None:
    assert other_rates(older, newer)


def test_two_sentences_with_a_rate_each_give_none() -> None:
    two = "일주일에 세 번 수영한다. 한 달에 두 번 등산한다."
    assert not other_rates("일주일에 다섯 번 수영한다.", two)
    assert rate_keys(two) == []


def test_every_second_day_of_the_week_is_every_other_week() -> None:
    assert other_rates("Goes swimming every second Sunday.", "Goes swimming every Sunday.")
    assert not other_rates(
        "Goes swimming every other Sunday.", "Goes swimming every second Sunday."
    )
