"""Whose a fact is (auditor/detectors/frame_people.py): another person named at its
opening, a relative it opens with, a relative named in apposition."""

from __future__ import annotations

import pytest

from auditor.detectors.frame_people import about_a_relative_apart, two_people


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Tomás never drinks alcohol.", "Elena likes a glass of wine with dinner."),
        ("토마스는 술을 전혀 마시지 않는다.", "Elena has a glass of wine with dinner."),
    ],
)
def test_two_people_named_at_the_opening(a: str, b: str) -> None:
    assert two_people(a, b)
    assert two_people(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Tomás never drinks alcohol.", "Tomás likes a glass of wine with dinner."),
        ("토마스는 술을 전혀 마시지 않는다.", "Tomás likes a glass of red wine."),  # one name
        ("토마스는 술을 마시지 않는다.", "엘레나는 와인을 좋아한다."),  # two Korean topics
        ("Asked for a wine pairing.", "Tomás never drinks alcohol."),  # a verb, no name
        ("Sunday is Tomás's rest day.", "Tomás works every day."),  # a day, no name
        ("Releases of Lumen happen every six weeks.", "Lumen cuts a release every week."),
    ],
)
def test_one_person_or_no_name(a: str, b: str) -> None:
    assert not two_people(a, b)


def test_a_relative_named_in_apposition_is_the_named_person() -> None:
    """A fact about "파트너 레오" and one about "레오" are about one person; a fact about a
    partner the other never names, or names by another name, is about someone else."""
    assert not about_a_relative_apart(
        "다나의 파트너 레오는 음악 교사다.", "레오는 음악 교사로 일한다."
    )
    assert about_a_relative_apart("다나의 파트너 레오는 음악 교사다.", "다나는 음악 교사로 일한다.")
    assert not about_a_relative_apart("Dana's partner Leo teaches music.", "Leo teaches music.")
    assert about_a_relative_apart("Dana's partner Leo teaches music.", "Dana teaches music.")
