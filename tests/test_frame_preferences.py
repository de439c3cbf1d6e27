"""Preferences in opposite order (auditor/detectors/frame_preferences.py), and the frame
reader's small fixes of the same round."""

from __future__ import annotations

import pytest

from auditor.detectors.contradiction_frames import frames_of, text_modality
from auditor.detectors.frame_preferences import (
    dispreferred,
    preference_keys,
    reversed_preferences,
)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        (
            "Grace prefers phone calls to text messages.",
            "Grace would rather get a text than a phone call.",
        ),
        ("Grace likes tea more than coffee.", "Grace prefers coffee over tea."),
        ("지훈은 커피보다 차를 좋아한다.", "지훈은 차보다 커피를 선호한다."),
        ("지훈은 버스보다 지하철이 좋다.", "지훈은 지하철보다 버스를 선호한다."),
    ],
)
def test_reversed_preferences(older: str, newer: str) -> None:
    assert reversed_preferences(older, newer)
    assert reversed_preferences(newer, older)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Grace prefers tea to coffee.", "Grace prefers tea over coffee."),  # one order
        ("Grace prefers tea to coffee.", "Grace's husband prefers coffee to tea."),  # another
        ("Grace prefers tea to coffee.", "Grace would rather fly than drive."),  # other things
        ("Grace used to prefer tea to coffee.", "Grace prefers coffee to tea."),  # a past state
        ("Grace prefers to work from home.", "Grace prefers the office."),  # no order
    ],
)
def test_no_reversed_preference(older: str, newer: str) -> None:
    assert not reversed_preferences(older, newer)


def test_preference_keys_meet_for_either_order() -> None:
    a = set(preference_keys("Grace prefers tea to coffee."))
    b = set(preference_keys("Grace likes coffee more than tea."))
    assert a and a == b
    assert preference_keys("Grace drinks tea.") == []


def test_a_version_bound_is_no_plan_and_no_count() -> None:
    """ "18 or later" bounds a version: neither a plan ("later") nor a count of "or"."""
    assert text_modality("Quill requires Node 18 or later.") == "current"
    assert text_modality("Grace will call back later.") == "plan"
    (frame,) = frames_of("Quill requires Node 18 or later.")
    assert not any(kind.startswith("count") for kind, _values in frame.typed)


def test_a_negated_korean_fact_keeps_its_verb_as_relation() -> None:
    """ "담배를 피우지 않는다" / "일하지 않는다": two verbs, not one relation "않"."""
    (a,) = frames_of("지훈은 담배를 피우지 않는다.")
    (b,) = frames_of("지훈은 주말에는 일하지 않는다.")
    assert a.negated and b.negated
    assert a.rel != b.rel


def test_the_dispreferred_side_is_mentioned_not_stated() -> None:
    text = "Ruth prefers emails to phone calls."
    start = text.index("phone")
    assert dispreferred(text, (start, start + len("phone calls")))
    start = text.index("emails")
    assert not dispreferred(text, (start, start + len("emails")))
    assert not dispreferred("Ruth uses the phone.", (9, 14))
