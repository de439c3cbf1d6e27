"""Typed values of one event or amount told with other words (auditor.detectors.frame_anchors)
and the typed values it reads: ages, a Korean day of every month, amounts in currency words.

Every fact here is written for these tests (no corpus text)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from auditor.config import load_settings
from auditor.detectors._frame_words import _tokens, _typed
from auditor.detectors.base import DetectContext, MemoryView
from auditor.detectors.contradiction import ContradictionDetector, candidate_pairs
from auditor.detectors.frame_anchors import anchored_typed, folded, other_period
from auditor.detectors.frame_pairs import relation_swapped
from auditor.detectors.frame_reading import read_pair

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
STORE = Path(__file__).parent / "fixtures" / "contradiction-store"


def _typed_of(text: str) -> dict[str, set[object]]:
    return _typed(_tokens(text), any("\uac00" <= c <= "\ud7a3" for c in text))


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("is 34 years old", "age", 34.0),
        ("a 7-year-old", "age", 7.0),
        ("다은은 28살이다", "age", 28.0),
        ("매달 25일에 월급을 받는다", "dom", 25),
        ("pays 50,000 won a month", "money:₩", 50000.0),
        ("costs 40 dollars", "money:$", 40.0),
        ("1995년 3월 8일에 태어났다", "year", 1995),
        ("an SLA of 99.9% uptime", "percent", 99.9),  # the sign kept on the token
        ("fixed at 3.8 percent", "percent", 3.8),
        ("점유율은 30%다", "percent", 30.0),
    ],
)
def test_typed_values_read(text: str, kind: str, value: object) -> None:
    assert value in _typed_of(text).get(kind, set())


def test_a_date_of_birth_with_the_verb_is_the_birthday() -> None:
    from auditor.detectors._frame_words import ko_key
    from auditor.detectors.contradiction_frames import frames_of

    (en,) = frames_of("Theo was born on October 9.")
    assert "birthday" in en.head and "born" not in en.values and en.rel == "="
    (ko,) = frames_of("하은은 9월 17일에 태어났다.")
    assert "생일" in ko.head and ko.rel == "="
    (place,) = frames_of("Theo was born in Porto.")
    assert "birthday" not in place.head  # a place of birth is no date
    assert ko_key("잔씩") == "잔"  # the distributive 씩 after a one-syllable counter


def test_numbers_that_are_no_age_or_day() -> None:
    assert "age" not in _typed_of("a 3세대 아이패드")  # a generation
    assert "age" not in _typed_of("is 34 years in the job")
    assert "dom" not in _typed_of("25일 동안 여행한다")  # a number of days
    assert "year" not in _typed_of("3년 동안 일했다")  # a number of years


def test_derived_nouns_fold_onto_their_verb() -> None:
    assert folded("payment") == "pay"
    assert folded("renewal") == "renew"
    assert folded("마감일") == "마감"
    assert folded("월급날") == "월급"
    assert folded("생일") == "생일"  # two syllables stay whole
    assert folded("pay") == "pay"


@pytest.mark.parametrize(
    ("older", "newer", "kind"),
    [
        (
            "Ines's car loan payment is €420 a month.",
            "Ines pays €510 a month on her car loan.",
            "money",
        ),
        (
            "Omar's home insurance renews in April.",
            "Omar's home insurance is due for renewal in September.",
            "month",
        ),
        ("하린의 보고서 마감은 5월 20일이다.", "하린의 보고서 제출 마감일은 6월 3일이다.", "date"),
    ],
)
def test_one_event_told_two_ways_conflicts(older: str, newer: str, kind: str) -> None:
    assert anchored_typed(older, newer) == kind


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        # a word swapped on each side: two events of one thing
        ("The lease was signed in March.", "The lease expires in June."),
        # a relative as the only extra word
        ("My rent is £950 a month.", "My sister's rent is £1,100 a month."),
        # the same values
        (
            "Omar's home insurance renews in April.",
            "Omar's home insurance is due for renewal in April.",
        ),
        # an age a year apart
        ("Tomasz is 34 years old.", "Tomasz turned 35 last month."),
        # two kinds differ: a monthly and a yearly price
        ("The climbing gym costs $60 a month.", "The climbing gym costs $600 a year."),
        # a scope on one side only is another occasion
        ("Runs 5 km.", "Runs 10 km on Sundays."),
        # one Korean, one English
        ("하린의 보고서 마감은 5월 20일이다.", "Harin's report is due on June 3."),
    ],
)
def test_no_anchored_conflict(older: str, newer: str) -> None:
    assert anchored_typed(older, newer) is None


def test_other_period() -> None:
    assert other_period(_typed_of("$60 a month"), _typed_of("$600 a year"))
    assert not other_period(_typed_of("$60 a month"), _typed_of("$70 a month"))


def test_read_pair_reports_the_anchored_kind_without_quoting_values() -> None:
    reading = read_pair(
        "Omar's home insurance renews in April.",
        "Omar's home insurance is due for renewal in September.",
    )
    assert [s.details["value_type"] for s in reading.signals] == ["month"]
    assert "April" not in reading.signals[0].reason


def _detect(older: str, newer: str, gap: timedelta) -> set[str]:
    views = [
        MemoryView(
            memory_id=f"m{i}",
            subject="user:t",
            fact=fact,
            trust_tier="user",
            source_type="explicit_statement",
            created_at=T0 + i * gap,
            content_hash=f"h{i}",
        )
        for i, fact in enumerate((older, newer))
    ]
    ctx = DetectContext(now=T0 + timedelta(days=2000), settings=load_settings())
    return {d.entity for d in ContradictionDetector().analyze_group(views, ctx) if d.score >= 0.55}


def test_two_ages_conflict_when_told_close_in_time() -> None:
    assert _detect("Tomasz is 34 years old.", "Tomasz turned 37 last month.", timedelta(days=60))


def test_two_ages_told_years_apart_may_both_hold() -> None:
    assert not _detect(
        "Tomasz is 34 years old.", "Tomasz turned 37 last month.", timedelta(days=3 * 365)
    )


def test_two_ages_of_a_person_meet_as_candidates_in_a_store() -> None:
    """In a store of many facts about one person the name is everywhere, so it blocks
    nothing; an age meets the person's other ages whatever the verb (the third held-out
    store half: "Aiko is 41 years old" / "Aiko turned 38 in March")."""
    from auditor.tools.evaluate import load_corpus

    views, _labels = load_corpus(STORE / "heldout-3", load_settings())
    aiko = [v for v in views if v.subject.endswith("aiko")]
    ids = [v.memory_id for v in aiko]
    older = ids[[v.fact for v in aiko].index("Aiko is 41 years old.")]
    newer = ids[[v.fact for v in aiko].index("Aiko turned 38 in March.")]
    assert frozenset({older, newer}) in candidate_pairs(aiko)


@pytest.mark.parametrize(
    ("older", "newer", "swapped"),
    [
        ("Kim lives in Seoul.", "Kim works in Seoul.", True),
        ("Kim's dad lives in Daegu.", "Kim visits her dad in Daegu every other weekend.", True),
        ("Kim lives in Daegu.", "Kim lives in Daegu with her two cats.", False),  # detail only
        ("Kim lives in Seoul.", "Kim moved to Seoul in 2020 and lives there.", False),
    ],
)
def test_two_verbs_tying_one_person_to_one_place(older: str, newer: str, swapped: bool) -> None:
    assert relation_swapped(older, newer) is swapped
