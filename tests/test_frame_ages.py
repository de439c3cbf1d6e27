"""An age told twice (auditor/detectors/frame_ages.py): the subject's own and a named
being's, the Korean native numerals it reads, and its candidates."""

from __future__ import annotations

import pytest

from auditor.detectors._frame_words import _number, ko_native_number
from auditor.detectors.contradiction import candidate_pairs
from auditor.detectors.frame_ages import (
    named_age_keys,
    named_ages_apart,
    own_age_keys,
    own_ages_apart,
)
from auditor.testing import first_and_last_meet, subject_views


@pytest.mark.parametrize(
    ("word", "value"),
    [
        ("다섯", 5),
        ("열", 10),
        ("열두", 12),
        ("스무", 20),
        ("스물한", 21),
        ("서른다섯", 35),
        ("마흔여덟", 48),
        ("아흔아홉", 99),
        ("둘", 2),
    ],
)
def test_korean_native_numerals(word: str, value: int) -> None:
    assert ko_native_number(word) == value
    assert _number(word) == float(value)


@pytest.mark.parametrize("word", ["서른살이", "마흔가지", "열심히", "다섯째", "스무디"])
def test_words_that_only_begin_like_a_numeral_are_none(word: str) -> None:
    assert ko_native_number(word) is None


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Tendai is 41 years old.", "텐다이 씨는 올해 3월에 서른다섯 살이 되었다."),
        ("토마시는 올해 마흔여덟 살이다.", "He is 52 years old."),
        ("Bartek is 46 years old.", "He is 51 years old."),
        ("Is 62 years old.", "저는 올해 쉰다섯 살이에요."),
        ("Ana is 30 years old.", "Ana is 33 years old."),
    ],
)
def test_one_persons_two_ages(older: str, newer: str) -> None:
    assert own_ages_apart(older, newer)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("I just turned 60.", "He is 45 years old."),  # the user and someone else
        ("Patient is a 70-year-old man.", "Is 52 years old."),  # a role
        ("하늘은 29살이다.", "먹물이는 세 살 된 고양이다."),  # a cat
        ("Her son is 7 years old.", "She is 40 years old."),  # a relative
        ("아들이 일곱 살이다.", "올해 마흔 살이다."),  # a relative, in Korean
        ("Minho is 30 years old.", "민호는 올해 서른한 살이다."),  # Korean counting
        ("Noor is 30 years old.", "Noor turned 31 last week."),  # a birthday between
        ("Ola is 30 years old.", "Ines is 41 years old."),  # two people
        ("Ola was 30 years old when she moved.", "Ola is 41 years old."),  # the past
    ],
)
def test_ages_that_do_not_conflict(older: str, newer: str) -> None:
    assert not own_ages_apart(older, newer)


def test_two_ages_meet_as_candidates_whatever_their_words() -> None:
    """The age key brings a name and a pronoun, in two languages, together."""
    facts = ["Tendai is 41 years old."]
    facts += [f"Tendai tuned mbira number {n} for a client." for n in range(30)]
    facts += ["그는 올해 서른다섯 살이라고 했다."]
    assert own_age_keys(facts[0]) == ["age:@self"]
    assert own_age_keys("Her son is 7 years old.") == []
    pairs = candidate_pairs(subject_views(facts, "user:tendai"))
    assert frozenset({"m0", f"m{len(facts) - 1}"}) in pairs


def test_a_korean_two_digit_year_of_birth() -> None:
    from auditor.detectors._frame_words import birth_year_of  # noqa: PLC0415
    from auditor.detectors.contradiction import ContradictionDetector  # noqa: PLC0415

    assert birth_year_of(94) == 1994
    assert birth_year_of(5) == 2005
    (found,) = ContradictionDetector().profile("카밀라는 94년생이다.").dates
    assert found.year == 1994 and "event:birth" in found.keys


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Dog: Pippin, border collie, 6 years old.", "Pippin is 11 and still chases the ball."),
        ("Noodle is eight and sleeps all day.", "누들은 올해 세 살이 되었다."),  # two scripts
        ("강아지 콩이: 2살, 말티즈.", "콩이는 여섯 살 된 말티즈예요."),
        ("Has a terrier named Biscuit, about 4 years old.", "Biscuit is 10."),
        # the one sentence of a fact that gives an age; "작년부터" (since last year) is now
        (
            "고양이 '보송이'와 둘이 산다. 보송이는 올해 두 살이다.",
            "보송이는 아홉 살이고 작년부터 약을 먹는다.",
        ),
    ],
)
def test_one_named_beings_two_ages(older: str, newer: str) -> None:
    assert named_ages_apart(older, newer)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Dana adopted a 4-year-old cat.", "Dana is 35."),  # the cat's age
        ("Pippin is 6.", "Pippin is 7."),  # a birthday between
        ("Noodle is eight.", "누들은 올해 열 살이 되었다."),  # Korean counting
        ("Miso is 4 kg.", "Miso is 9."),  # a weight
        ("Pippin was 3 when we adopted him.", "Pippin is 9."),  # an age he had
        ("Bo is 3.", "주주는 여덟 살이다."),  # names too short to compare
        ("Pippin is 6.", "Biscuit is 10."),  # two beings
        ("Her son Tom is 7.", "Tom is 12."),  # a relative's fact is not read
    ],
)
def test_named_ages_that_do_not_conflict(older: str, newer: str) -> None:
    assert not named_ages_apart(older, newer)


def test_a_named_beings_ages_meet_across_the_scripts() -> None:
    """The name's consonant skeleton is a key: "Noodle" and "누들" meet as candidates."""
    first, last = "Noodle is eight and sleeps all day.", "누들은 올해 세 살이 되었다."
    assert set(named_age_keys(first)) & set(named_age_keys(last))
    assert named_age_keys("Dana adopted a 4-year-old cat.") == []
    assert first_and_last_meet(first, last, "Walked the dog on trail number {n}.")
