"""People in frames: a relative named in apposition ("my partner Sam", read as that
relative's name), a frame about another person than the other frame's ("her birthday"
/ "her mother's birthday"), and a fact about a relative it opens with against one that
never names that relative ("Marcus's sister is getting married on June 8" / "Marcus got
married on June 8": two people's facts, for duplicates). Read by
:mod:`auditor.detectors.contradiction_frames` and :mod:`auditor.detectors.duplicates`."""

from __future__ import annotations

import functools
from collections.abc import Sequence

from auditor.detectors._contradiction_text import stem
from auditor.detectors._frame_types import Frame
from auditor.detectors._frame_words import (
    Tok,
    _data,
    _is_hangul,
    _month_names,
    _tokens,
    modality_of,
    relatives,
)

__all__ = [
    "about_a_relative_apart",
    "another_person",
    "ko_named_relative_view",
    "named_relative_view",
    "relative_names",
]


def another_person(a: Frame, b: Frame) -> bool:
    """Whether two English heads name different people beside the subject: a relative in
    one that the other lacks ("her birthday" / "her mother's birthday", "his son's school" /
    "his daughter's school")."""
    if a.lang != "en" or b.lang != "en":
        return False
    people = relatives()[0]
    if (a.names & b.head) or (b.names & a.head):
        return False  # "my daughter Asha" / "Asha": the relative is named, one person
    return (a.head & people) != (b.head & people)


#: possessives before a relative named in apposition ("my partner Sam")
_NAMING_OWNERS = frozenset({"my", "his", "her", "their", "our", "your"})


def relative_names(text: str, toks: Sequence[Tok]) -> list[Frame]:
    """The name of a relative given in apposition ("I live in Leeds with my partner Sam",
    "my daughter Asha is 6") as that relative's name: the frame "My partner's name is Tom"
    gives. Only a capitalised word right after the relative, in the present."""
    people = relatives()[0]
    out: list[Frame] = []
    for i in range(len(toks) - 2):
        owner, rel, name = toks[i], toks[i + 1], toks[i + 2]
        if owner.low not in _NAMING_OWNERS or rel.key not in people:
            continue
        raw = text[name.start : name.end]
        if not (raw[:1].isupper() and raw.isalpha() and name.key not in _proper_non_names()):
            continue
        lows = [t.low for t in toks]
        modality = modality_of(lows, text, False)
        out.append(
            Frame(
                lang="en",
                head=frozenset({rel.key, "nam"}),
                rel="=",
                functional=True,
                subject=True,
                values=frozenset({name.key}),
                typed=(),
                only=False,
                conj=False,
                negated=False,
                modality=modality,
                span=(name.start, name.end),
                approx=False,
                names=frozenset(),
                attached=frozenset(),
                owners=frozenset({rel.key}),
                roles=frozenset(),
            )
        )
    return out


@functools.cache
def _proper_non_names() -> frozenset[str]:
    """Capitalised words after a relative that are no name (days, months, "I")."""
    d = _data()
    months = _month_names()
    return frozenset(
        {stem(w) for w in d["weekdays"] if w.isascii()}
        | {stem(m) for m in months}
        | set(months)
        | {"i"}
    )


def named_relative_view(text: str, toks: Sequence[Tok]) -> Sequence[Tok] | None:
    """The sentence from the name on when it opens with a relative named in apposition
    ("Jordan's son Eli is in year 2" -> "Eli is in year 2"), so that it meets "Eli is in
    year 5"; None otherwise."""
    if len(toks) < 4 or toks[1].key not in relatives()[0]:  # noqa: PLR2004
        return None
    if not (toks[0].low in _NAMING_OWNERS or toks[0].low.endswith("'s")):
        return None
    raw = text[toks[2].start : toks[2].end]
    if not (raw[:1].isupper() and raw.isalpha()) or toks[2].key in _proper_non_names():
        return None
    return toks[2:]


def ko_named_relative_view(toks: Sequence[Tok]) -> Sequence[Tok] | None:
    """The Korean sentence from the name on when it opens with an owner, a relative and the
    relative's name as its topic ("혜진의 아들 준우는 올해 7살이다" -> "준우는 올해
    7살이다"); None otherwise."""
    if len(toks) < 4 or not toks[0].low.endswith("의"):  # noqa: PLR2004
        return None
    relative = toks[1].low
    if relative not in relatives()[1]:
        return None
    if not toks[2].low.endswith(("은", "는", "이", "가")) or len(toks[2].low) < 2:  # noqa: PLR2004
        return None
    return toks[2:]


#: How many words may open a fact before the relative it is about ("Marcus's younger
#: sister", "지우의 남편은").
_OPENING = 4


def _opening_relative(text: str) -> str:
    """The relative a fact opens with, as its subject ("Marcus's younger sister is getting
    married ...", "Her son starts school ...", "지우의 남편은 ..."), or ""."""
    en, ko = relatives()
    for t in _tokens(text)[:_OPENING]:
        if t.low in (",", ":", "(", ")"):
            break
        if _is_hangul(t.low):
            found = next((w for w in ko if t.low.startswith(w)), None)
            if found:
                return found
        elif stem(t.low) in en:
            return stem(t.low)
    return ""


def about_a_relative_apart(a_text: str, b_text: str) -> bool:
    """Whether one fact is about a relative (it opens with one: "Marcus's sister is getting
    married on June 8") that the other never names ("Marcus got married on June 8"): two
    people's facts, however many words they share."""
    for x, y in ((a_text, b_text), (b_text, a_text)):
        relative = _opening_relative(x)
        if relative and not _names_relative(y, relative):
            return True
    return False


def _names_relative(text: str, relative: str) -> bool:
    return any(
        t.low.startswith(relative) if _is_hangul(relative) else stem(t.low) == relative
        for t in _tokens(text)
    )
