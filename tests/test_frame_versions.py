"""Lowest accepted versions ("Node 18 or later", "at least Node 20"): read as typed values
by auditor/detectors/_frame_words.py, compared in auditor/detectors/frame_versions.py."""

from __future__ import annotations

import pytest

from auditor.detectors._frame_words import _tokens, _typed
from auditor.detectors.contradiction import offline_signals
from auditor.detectors.contradiction_frames import frames_of
from auditor.detectors.frame_versions import meets_minimum


@pytest.mark.parametrize(
    ("text", "kind", "version"),
    [
        ("requires Node 18 or later", "minimum:node", "18"),
        ("supports iOS 16 and up", "minimum:ios", "16"),
        ("needs at least Node 20", "minimum:node", "20"),
        ("runs on Python 3.10.0 or newer", "minimum:python", "3.10"),  # ".0" dropped
        ("Python 3.10 이상이 필요하다", "minimum:python", "3.10"),
    ],
)
def test_a_lowest_version_is_typed(text: str, kind: str, version: str) -> None:
    assert _typed(_tokens(text), "이상" in text).get(kind) == {version}


@pytest.mark.parametrize("text", ["runs on Node 18", "Node 18 or Deno", "in 2019 or later"])
def test_a_plain_version_or_a_year_is_no_minimum(text: str) -> None:
    assert not any(k.startswith("minimum:") for k in _typed(_tokens(text), False))


def test_a_version_at_or_above_the_lowest_meets_it() -> None:
    (lowest,) = frames_of("Quill runs on Python 3.10 or newer.")
    (above,) = frames_of("Quill runs on Python 3.12.")
    (below,) = frames_of("Quill runs on Python 3.8.")
    assert meets_minimum(lowest, above)
    assert not meets_minimum(lowest, below)
    assert not meets_minimum(above, lowest)  # the lowest must be on the first side


def test_two_lowest_versions_of_one_dependency_conflict() -> None:
    signals = offline_signals(
        "Quill requires Python 3.10 or later.", "Quill requires Python 3.9 or later."
    )
    assert signals
    assert signals[0].details.get("value_type") == "minimum"


def test_a_version_that_meets_the_lowest_is_no_conflict() -> None:
    older, newer = "Quill runs on Python 3.10 or newer.", "Quill runs on Python 3.12."
    assert offline_signals(older, newer) == []
    assert offline_signals("Quill runs on Python 3.10 or newer.", "Quill runs on Python 3.8.")
