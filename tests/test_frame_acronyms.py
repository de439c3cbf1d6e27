"""An attribute spelled out in one fact and by its initials in the other
(auditor/detectors/frame_acronyms.py)."""

from __future__ import annotations

import pytest

from auditor.detectors.contradiction import candidate_pairs, offline_signals
from auditor.detectors.contradiction_frames import frame_keys, frames_of
from auditor.detectors.frame_acronyms import acronym_aligned, acronym_keys
from auditor.testing import subject_views


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Beacon's minimum supported Rust version is 1.72.", "Beacon's MSRV is Rust 1.78."),
        ("Beacon's MSRV is 1.72.", "Beacon's minimum supported Rust version is 1.78."),
        ("Atlas's UI is built with React.", "Atlas's user interface is built with Vue."),
    ],
)
def test_an_acronym_and_its_words_are_one_attribute(older: str, newer: str) -> None:
    signals = offline_signals(older, newer)
    assert signals
    assert signals[0].entity == "value_conflict"


def test_the_same_value_by_acronym_and_in_full_is_no_conflict() -> None:
    assert (
        offline_signals(
            "Beacon's MSRV is 1.72.", "Beacon's minimum supported Rust version is 1.72."
        )
        == []
    )


def test_initials_must_spell_the_acronym() -> None:
    (a,) = frames_of("Beacon's MSRV is 1.72.")
    (b,) = frames_of("Beacon's maximum tested Rust version is 1.80.")
    assert acronym_aligned(a, b) is None
    (c,) = frames_of("Beacon's minimum supported Rust version is 1.80.")
    aligned = acronym_aligned(a, c)
    assert aligned is not None
    assert aligned[0].head == aligned[1].head == c.head


def test_acronym_keys_meet_between_the_two_forms() -> None:
    (a,) = frames_of("Beacon's MSRV is 1.72.")
    (b,) = frames_of("Beacon's minimum supported Rust version is 1.80.")
    assert acronym_keys(a) == acronym_keys(b) == ["ac:mrsv|="]
    assert set(acronym_keys(a)) <= set(frame_keys(a))
    (k,) = frames_of("베컨의 MSRV는 1.72다.")
    assert acronym_keys(k) == []  # English frames only


def test_an_acronym_and_its_words_meet_as_candidates_in_a_big_subject() -> None:
    """The two facts share only the project's name; 40 facts that share more words with the
    acronym's side come between them, yet the acronym keys bring them together."""
    facts = ["Beacon's minimum supported Rust version is 1.72."]
    facts += [f"Beacon's MSRV check {n} is green." for n in range(40)]
    facts += ["Beacon's MSRV is 1.78."]
    memories = subject_views(facts, "user:ravi")
    assert frozenset({"m0", f"m{len(facts) - 1}"}) in candidate_pairs(memories)
