"""Whose a fact is (auditor/detectors/frame_people.py): another person named at its
opening, a relative it opens with, a relative named in apposition."""

from __future__ import annotations

import pytest

from auditor.detectors._frame_words import ko_relative
from auditor.detectors.contradiction import ContradictionDetector
from auditor.detectors.frame_people import (
    about_a_relative_apart,
    about_someone_else,
    introduced_people,
    two_people,
)


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


@pytest.mark.parametrize(
    ("word", "relative"),
    [
        ("여동생의", "여동생"),
        ("부모님과", "부모님"),
        ("친구들과", "친구"),
        ("아이가", "아이"),
        ("딸은", "딸"),
        ("동생네", "동생"),
        ("남편분", "남편"),
        ("아이스", ""),  # iced
        ("딸기", ""),  # strawberries
        ("형식으로", ""),  # a format
        ("이모티콘", ""),  # an emoticon
    ],
)
def test_a_korean_relative_is_a_whole_word_with_its_particle(word: str, relative: str) -> None:
    assert ko_relative(word) == relative


@pytest.mark.parametrize(
    ("text", "trait", "side"),
    [
        ("지난 주말 오빠 생일 파티에서 샴페인을 한 잔 마셨다.", "alcohol", "b"),  # where
        ("연구소 근처 부모님 댁에서 부모님과 함께 지낸다.", "living_alone", "b"),  # with whom
        ("애인 도윤 씨와 함께 투룸 오피스텔에서 산다.", "living_alone", "b"),  # named company
        ("아이스 라떼를 매일 마신다.", "coffee", "b"),  # "아이스" names no child
    ],
)
def test_a_relative_of_place_or_company_owns_nothing(text: str, trait: str, side: str) -> None:
    found = {(t.trait, t.side) for t in ContradictionDetector().profile(text).traits}
    assert (trait, side) in found


@pytest.mark.parametrize(
    ("text", "trait"),
    [
        ("도현의 친구 상철은 하루에 한 갑씩 담배를 피운다.", "smoking"),  # the friend smokes
        ("남편은 술을 전혀 안 마신다.", "alcohol"),  # the husband's habit
        ("Doesn't drink, except a glass of wine at Christmas.", "alcohol"),  # an exception
    ],
)
def test_a_relatives_trait_or_one_with_an_exception_is_not_the_subjects(
    text: str, trait: str
) -> None:
    assert trait not in {t.trait for t in ContradictionDetector().profile(text).traits}


@pytest.mark.parametrize(
    ("text", "trait", "side"),
    [
        ("Won't fly under any circumstances.", "flying", "a"),
        ("비행기를 타고 제주에 다녀왔다.", "flying", "b"),
        ("사귀는 사람이 없다.", "dating", "a"),
        ("남자친구 이름은 안드레스다.", "dating", "b"),  # 안드레스 is a name, no negation
        ("Has been vegetarian for years.", "vegetarian_fish", "a"),
        ("커피를 아예 안 드신다.", "coffee", "a"),
    ],
)
def test_traits_of_this_session(text: str, trait: str, side: str) -> None:
    found = {(t.trait, t.side) for t in ContradictionDetector().profile(text).traits}
    assert (trait, side) in found


def test_a_pronoun_after_an_opening_relative_is_the_relative() -> None:
    text = "Her husband Ian runs a pub; unlike her, he drinks lager most nights."
    assert "alcohol" not in {t.trait for t in ContradictionDetector().profile(text).traits}


def test_a_two_syllable_korean_topic_is_no_name_against_a_latin_one() -> None:
    # "장부는" (the ledger) is a thing's topic; "토마스는" against "Elena" two people
    assert not two_people("장부는 엑셀로 한다.", "Sunhee does the books in Excel.")
    assert two_people("토마스는 술을 안 마신다.", "Elena likes a glass of wine.")


def test_a_generic_verb_met_as_a_destination_is_no_shared_action() -> None:
    from auditor.detectors.frame_schedule import never_every  # noqa: PLC0415

    assert not never_every(
        "Cycles to work every day.", "Works Monday to Friday, never at weekends."
    )
    assert never_every("Never works at weekends.", "Works every day.")


def test_the_people_a_store_introduces_by_name() -> None:
    facts = [
        "Rafael is a software architect in Lisbon.",
        "Rafael works from home.",
        "남편 티아구는 알칸타라에서 빵집을 한다.",
        "연구실 후배 민재 씨는 클러스터 예약을 맡는다.",
        "My colleague Dana sits next to me.",
        "남편 회사는 판교에 있다.",  # the husband's company: no name
        "친구와 결혼해서 부산에 산다.",  # no name after 친구
        "Tiago's husband Rafael bakes on Sundays.",  # the subject's own name stays out
    ]
    assert introduced_people(facts) == frozenset({"티아구", "민재", "dana"})


@pytest.mark.parametrize(
    ("older", "newer", "apart"),
    [
        ("Drinks about four espressos a day.", "티아구는 커피를 전혀 안 마신다.", True),
        ("Gaussian은 안 쓴다.", "연구실 후배 민재 씨는 Gaussian을 쓴다.", True),
        ("Tiago loves espresso.", "티아구는 커피를 전혀 안 마신다.", False),  # one person
        ("Her husband Tiago is a baker.", "Tiago is a pastry chef.", False),  # named in both
        ("민재 씨와 함께 산다.", "Lives alone.", False),  # a companion, not the topic
        ("Drinks about four espressos a day.", "Never drinks coffee.", False),
    ],
)
def test_a_fact_about_an_introduced_person(older: str, newer: str, apart: bool) -> None:
    others = frozenset({"티아구", "민재"})
    assert about_someone_else(older, newer, others) is apart
