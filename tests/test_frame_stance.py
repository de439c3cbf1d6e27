"""Opposite stances toward one thing (auditor/detectors/frame_stance.py) and their candidates."""

from __future__ import annotations

import pytest

from auditor.detectors.contradiction import candidate_pairs
from auditor.detectors.frame_stance import opposite_stances, stance_keys
from auditor.testing import subject_views


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Subin hates cilantro.", "Subin loves cilantro so much she adds it to pho."),
        ("Subin doesn't like cilantro.", "Subin loves fresh cilantro."),
        ("Subin can't stand cilantro.", "Subin likes cilantro."),
        ("Subin loves cats and dogs.", "Subin hates dogs."),
        ("수빈은 고수를 싫어한다.", "수빈은 고수를 아주 좋아해서 쌀국수에 듬뿍 넣는다."),
        ("지우는 오이를 정말 싫어해요", "지우는 오이가 좋아요"),
        ("지우는 오이를 좋아하지 않는다", "지우는 오이를 좋아한다"),  # the negation check's too
        ("Jin doesn't eat pork.", "Jin loves pork belly."),  # a refusal to eat
        ("지훈은 매운 음식을 좋아한다.", "지훈은 매운 음식을 잘 못 먹는다."),
    ],
)
def test_opposite_stances_of_one_thing(older: str, newer: str) -> None:
    assert opposite_stances(older, newer)
    assert opposite_stances(newer, older)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Subin loves hiking in the mountains.", "Subin hates hiking in the rain."),
        ("Subin doesn't hate cilantro.", "Subin loves cilantro."),  # says nothing of liking
        ("Subin's son hates cilantro.", "Subin loves cilantro."),  # someone else
        ("Subin used to hate cilantro.", "Subin loves cilantro."),  # a past state
        ("Subin plans to try cilantro.", "Subin hates cilantro."),  # no stance
        ("Subin loves cilantro.", "Subin likes cilantro a lot."),  # one stance
        ("Jin eats pork.", "Jin hates pork."),  # eating is no liking
        ("지훈은 매운 음식을 좋아하지만 회는 못 먹는다.", "지훈은 매운 음식을 좋아한다."),
        ("지우는 오이를 싫어한다", "지우의 딸은 오이를 좋아한다"),  # the daughter's
    ],
)
def test_no_opposite_stance(older: str, newer: str) -> None:
    assert not opposite_stances(older, newer)


def test_stance_keys_carry_subject_and_object_not_sign() -> None:
    assert stance_keys("Kai doesn't like olives.") == stance_keys("Kai loves olives.")
    assert stance_keys("Kai's son loves olives.") != stance_keys("Kai loves olives.")
    assert stance_keys("Kai plays tennis.") == []


def test_a_liking_and_a_disliking_meet_as_candidates_in_a_big_subject() -> None:
    """Among many facts that share more words with each side than the two sides share with
    each other (the similarity index's top neighbours), the stance keys still bring the
    liking and the disliking together."""
    facts = ["Kai doesn't like olives."]
    facts += [f"Kai ordered olives on pizza at restaurant {n}." for n in range(40)]
    facts += ["Kai really loves olives on pizza."]
    memories = subject_views(facts, "user:kai")
    pairs = candidate_pairs(memories)
    assert frozenset({"m0", f"m{len(facts) - 1}"}) in pairs
