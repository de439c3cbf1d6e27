"""A length given as a compound adjective ("runs three-week sprints", "a 30-minute
standup") as the length of the noun it modifies, the frame "Priya's sprint length is two
weeks" gives: the two are one attribute told two ways. Read by
:func:`auditor.detectors.contradiction_frames.frames_of`."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from auditor.detectors._frame_types import Frame
from auditor.detectors._frame_words import Tok, _data, _number, relatives

__all__ = ["LENGTH_WORDS", "compound_lengths", "without_length_words"]

#: "three-week", "30-minute", "2-hour": a number and a unit joined by a hyphen
_COMPOUND = re.compile(r"^([a-z]+|\d+(?:\.\d+)?)-(minute|hour|day|week|month|year)s?$")
#: head words that only name a length ("sprint length", "meeting duration")
LENGTH_WORDS = frozenset({"length", "duration", "long"})


def compound_lengths(toks: Sequence[Tok], base: Frame | None) -> list[Frame]:
    """One frame per length compound before a noun: its head is the noun with the owner
    and the people of the sentence's head (when it has one), its value the length."""
    d = _data()
    units = d["duration_units"]
    skip = d["prepositions_set"] | d["determiners_set"] | d["conjunctions_set"]
    out: list[Frame] = []
    for i in range(len(toks) - 1):
        m = _COMPOUND.match(toks[i].low)
        if m is None:
            continue
        num = _number(m.group(1))
        noun = toks[i + 1]
        if num is None or not noun.low.isalpha() or noun.low in skip:
            continue
        nouns = {noun.key}
        after = toks[i + 2] if i + 2 < len(toks) else None
        if after is not None and after.low.isalpha() and after.low not in skip:
            nouns.add(after.key)  # "a 90-minute pottery class": the class, of pottery
        # the noun, its owner and the people of the sentence's head ("Priya's team runs
        # two-week sprints": Priya's sprints; "her son's 45-minute bus ride": the son's);
        # the head's other words are where it is said, not what is measured
        head = set(nouns)
        if base is not None:
            head |= base.owners | (base.head & relatives()[0])
        out.append(
            Frame(
                lang="en",
                head=frozenset(head),
                rel="=",
                functional=True,
                subject=base.subject if base is not None else False,
                values=frozenset({toks[i].key}),
                typed=(("duration", frozenset({round(num * float(units[m.group(2)]), 2)})),),
                only=False,
                conj=False,
                negated=base.negated if base is not None else False,
                modality=base.modality if base is not None else "current",
                span=(toks[i].start, toks[i].end),
                approx=False,
                names=frozenset(),
                attached=frozenset(),
                owners=base.owners if base is not None else frozenset(),
                roles=frozenset(),
            )
        )
    return out


def without_length_words(f: Frame) -> Frame:
    """A frame whose value is a length, without the head words that only name a length
    ("Priya's sprint length is two weeks" -> Priya's sprint). A value that says "long"
    states a length whatever verb the parse found first: "The class Marcus attends is one
    hour long" is the class's length (the relation is the copula's)."""
    if f.lang != "en" or "duration" not in {k for k, _v in f.typed}:
        return f
    head = f.head - LENGTH_WORDS
    rel = "=" if "long" in f.values else f.rel
    if (not head or head == f.head) and rel == f.rel:
        return f
    return dataclasses.replace(f, head=head or f.head, rel=rel)
