"""LiteralSet finds exactly the literals that occur, overlapping ones included."""

from __future__ import annotations

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
