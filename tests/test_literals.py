"""LiteralSet finds exactly the literals that occur, overlapping ones included."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from auditor.detectors._literals import LiteralSet


def test_overlapping_and_prefix_words() -> None:
    words = LiteralSet(["diabet", "diabetes", "bete", "et", "당뇨", "당뇨병"])
    assert words.present("type 1 diabetes and 당뇨병") == {
        "diabet",
        "diabetes",
        "bete",
        "et",
        "당뇨",
        "당뇨병",
    }
    assert words.present("nothing here") == set()
    assert LiteralSet([]).present("anything") == set()


@given(
    st.lists(st.text(alphabet="abc.", min_size=1, max_size=4), max_size=12),
    st.text(alphabet="abc. ", max_size=40),
)
def test_matches_the_naive_check(words: list[str], text: str) -> None:
    assert LiteralSet(words).present(text) == {w for w in words if w in text}


def test_min_digits_counts_what_every_match_must_hold() -> None:
    import re

    from auditor.detectors._literals import min_digits

    assert min_digits(r"\d(?:[ \t().+-]{0,3}\d){6}") == 7  # a phone gate
    assert min_digits(r"\d{6}-?\d{7}") == 13
    assert min_digits(r"[A-Za-z]{2}\d{2}") == 2
    assert min_digits(r"(?:bc1|[13])[a-zA-HJ-NP-Z0-9]{25}") == 1  # a mixed class counts 0
    assert min_digits(r"\d{3}|[0-9]{5}") == 3  # the smaller branch
    assert min_digits(r"(?:\d\d)+x?\d*") == 2  # a repeat's least count
    assert min_digits(r"[^0-9]\d") == 1 and min_digits(r"[٠-٩]{2}") == 2  # Arabic-Indic
    assert min_digits(r"(?i:licence|permit)") == 0
    assert min_digits(r"(unclosed") == 0  # unreadable: no claim
    assert re.search(r"\d(?:[ \t().+-]{0,3}\d){6}", "call 555 12 3") is None  # 6 digits


_DIGIT_PATTERNS = [
    r"\d(?:[ .-]{0,2}\d){4}",
    r"(?:ab|\d)\d{2}",
    r"[0-9a]{3}\d",
    r"x\d+y|\d{2}",
    r"(?:\d[ -]?){3,}",
    r"[12]\d?[34]",
]


@given(st.sampled_from(_DIGIT_PATTERNS), st.text(alphabet="0123456789ab xy.-", max_size=30))
def test_no_match_has_fewer_digits_than_min_digits(pattern: str, text: str) -> None:
    import re

    from auditor.detectors._literals import min_digits

    least = min_digits(pattern)
    for m in re.finditer(pattern, text):
        assert sum(c.isdigit() for c in m.group()) >= least


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("she hates it", True),
        ("(hates it)", True),
        ("what a day", False),  # "hat" inside a word
        ("x_hate", False),
        ("ci좋아", True),  # a Korean word right after Latin letters starts there
        ("정말좋아", False),  # inside a Korean word
        ("hat", True),
        ("", False),
    ],
)
def test_any_word_start(text: str, found: bool) -> None:
    assert LiteralSet({"hat", "좋아"}).any_word_start(text) is found
    assert LiteralSet(()).any_word_start(text) is False
