"""One name in two scripts (auditor/detectors/transliteration.py) and its use by the
contradiction detector: a Korean and an English fact about one project."""

from __future__ import annotations

import pytest

from auditor.detectors.contradiction import _default_profile, offline_signals
from auditor.detectors.transliteration import hangul_skeleton, is_name, latin_skeletons, same_name


@pytest.mark.parametrize(
    ("latin", "hangul"),
    [
        ("Lumen", "루멘"),
        ("Harbor", "하버"),  # an r before a consonant or at the end is not written
        ("Kestrel", "케스트렐"),
        ("Quill", "퀼"),
        ("Atlas", "아틀라스"),  # a silent ㅇ, an epenthetic 으
        ("Ledger", "레저"),  # dg
        ("Notion", "노션"),  # tion
        ("Confluence", "컨플루언스"),  # a soft c
        ("GitHub", "깃허브"),  # a final ㅅ sounds t
        ("Python", "파이썬"),  # th as s
        ("Django", "장고"),  # dj, a hard g
        ("Mongo", "몽고"),  # ng before a vowel
        ("engineer", "엔지니어"),  # ng before a soft g
        ("message", "메시지"),  # a soft g before a final e
        ("Firebase", "파이어베이스"),  # r before a silent e
        ("Windows", "윈도우"),  # a plural s left out
        ("Netflix", "넷플릭스"),  # x as ks
        ("Margaret", "마거릿"),
        ("Tomás", "토마스"),  # an accent
    ],
)
def test_a_name_and_its_hangul_transcription_share_a_skeleton(latin: str, hangul: str) -> None:
    skeleton = hangul_skeleton(hangul)
    assert skeleton is not None
    assert skeleton in latin_skeletons(latin)


def test_different_names_do_not_share_a_skeleton() -> None:
    assert hangul_skeleton("하버") not in latin_skeletons("Lumen")
    assert hangul_skeleton("케스트렐") not in latin_skeletons("Quill")
    assert hangul_skeleton("아웃렛") not in latin_skeletons("Atlas")


def test_one_consonant_is_too_little_to_compare() -> None:
    assert hangul_skeleton("레오") is None  # "Leo": L alone
    assert latin_skeletons("Leo") == frozenset()
    assert hangul_skeleton("데이터") is None  # T T collapses to T


def test_names_are_capitalised_words_of_three_letters_or_more() -> None:
    assert is_name("Lumen")
    assert is_name("Lumen's")
    assert not is_name("lumen")
    assert not is_name("CI")
    assert not is_name("Al")


def test_only_the_name_a_fact_is_about_is_compared() -> None:
    """A Hangul word among the first two words, a Latin name among the first three."""

    def skeletons(text: str) -> tuple[frozenset[str], frozenset[str]]:
        return _default_profile(text).name_skeletons

    assert skeletons("Lumen's CI runs on GitLab CI.") == (frozenset(), frozenset({"LMN"}))
    assert skeletons("루멘 CI는 GitHub Actions로 돌아간다.") == (frozenset({"LMN"}), frozenset())
    # the particle cut: 하버의 is 하버
    assert skeletons("하버의 데이터는 PostgreSQL에 저장된다.")[0] == frozenset({"HP"})
    assert skeletons("The Orbit app's backend is written in Go.")[1] == frozenset({"PT"})
    assert skeletons("The team said that Lumen is fast.") == (frozenset(), frozenset())
    assert "LMN" not in skeletons("오늘 회의에서 루멘 얘기를 했다.")[0]  # the third word


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Lumen's CI runs on GitLab CI.", "루멘 CI는 GitHub Actions로 돌아간다."),
        ("Harbor stores its data in MongoDB.", "하버의 데이터는 PostgreSQL에 저장된다."),
    ],
)
def test_a_slot_conflict_across_languages_about_one_name(older: str, newer: str) -> None:
    signals = offline_signals(older, newer)
    assert signals
    assert signals[0].entity == "slot_conflict"


def test_two_names_in_two_languages_are_two_things() -> None:
    older, newer = "Lumen's CI runs on GitLab CI.", "하버 CI는 GitHub Actions로 돌아간다."
    assert offline_signals(older, newer) == []


def test_same_name_reads_unknown_as_one_name() -> None:
    """Two skeletons that meet are one name, two that do not are two; a name too short to
    compare ("페퍼" is one consonant class) is no evidence of two."""
    assert same_name("토마스", "Tomás") and same_name("망고", "Mango")
    assert not same_name("처트니", "Mango") and not same_name("토마스", "Elena")
    assert same_name("페퍼", "Pepper")
