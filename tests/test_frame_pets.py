"""A pet told by two names (auditor/detectors/frame_pets.py) and its candidates."""

from __future__ import annotations

import pytest

from auditor.detectors.contradiction import candidate_pairs
from auditor.detectors.frame_pets import pet_keys, two_pet_names
from auditor.testing import subject_views


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Jonas has one dog, a beagle named Otto.", "Jonas's only pet is a beagle called Rufus."),
        ("Jonas adopted a beagle called Otto last spring.", "Jonas's beagle is called Rufus."),
        ("Hana's cat is called Miso.", "하나의 고양이 이름은 두부다."),
        ("하나는 고양이를 키우고 이름은 보리다.", "하나의 고양이 이름은 콩이다."),
        ("도윤은 초코라는 이름의 푸들을 키운다.", "도윤의 개는 보리라는 두 살짜리 비숑이다."),
        (
            "Hana has one rabbit, named Clover.",
            "하나가 키우는 토끼는 한 마리뿐이고, 이름은 솜이다.",
        ),
    ],
)
def test_one_pet_told_by_two_names(older: str, newer: str) -> None:
    assert two_pet_names(older, newer)
    assert two_pet_names(newer, older)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Jonas has two dogs, Otto and Rufus.", "Jonas's dog is called Otto."),  # several
        ("Jonas has a dog named Otto.", "Jonas adopted another dog called Rufus."),
        ("Jonas has a dog named Otto.", "Jonas has a cat named Rufus."),  # two kinds
        ("Jonas has a dog named Otto.", "Jonas's neighbour has a dog named Rufus."),  # neither
        ("Hana's cat is called Miso.", "하나의 고양이 이름은 미소다."),  # one name, two scripts
        ("하나는 반려견을 키운다.", "하나의 반려견 이름은 몽이다."),  # one name only
        ("Tom's son is named Eli.", "Tom's son is called Ari."),  # no pet
        (
            "도윤은 코코라는 카페에서 강아지를 봤다.",
            "도윤의 강아지 이름은 몽이다.",
        ),  # a café's name
        ("도윤은 페퍼라는 이름의 푸들을 키운다.", "Doyun has a poodle called Pepper."),  # too short
    ],
)
def test_names_of_other_pets_or_one_name(older: str, newer: str) -> None:
    assert not two_pet_names(older, newer)


def test_two_names_of_one_pet_meet_as_candidates_across_languages() -> None:
    """The pet keys bring the two facts together although they share no word."""
    facts = ["Hana's cat is called Miso."]
    facts += [f"Hana read chapter {n} of her novel on the train." for n in range(30)]
    facts += ["하나의 고양이 이름은 두부다."]
    assert pet_keys(facts[0]) == pet_keys(facts[-1]) == ["pet:", "pet:cat"]
    pairs = candidate_pairs(subject_views(facts, "user:hana"))
    assert frozenset({"m0", f"m{len(facts) - 1}"}) in pairs
