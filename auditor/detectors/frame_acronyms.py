"""One attribute named in full in one fact and by its initials in the other ("Lumen's
minimum supported Rust version is 1.70" / "Lumen's MSRV is Rust 1.75", "continuous
integration" / "CI", "user interface" / "UI").

An acronym is open vocabulary: no table lists them, but one can be read against the other
head. A capitalised head word of :data:`MIN_LETTERS` to :data:`MAX_LETTERS` letters spells
out the words the other head has beyond it when its letters are their initials (as a
multiset: a frame's head is a set, its word order is gone), and the two heads are
otherwise equal. The frames then compare as one head; nothing else about them changes.
Blocking keys (:func:`acronym_keys`) let the two facts meet as candidates although they
share no word but the owner's name.
"""

from __future__ import annotations

import dataclasses

from auditor.detectors._frame_types import Frame

__all__ = ["MAX_LETTERS", "MIN_LETTERS", "acronym_aligned", "acronym_keys"]

#: the shortest and the longest acronym read
MIN_LETTERS = 2
MAX_LETTERS = 6


def acronym_aligned(a: Frame, b: Frame) -> tuple[Frame, Frame] | None:
    """The two frames with an acronym in one head spelled out as the other head's words, or
    None when neither head holds such an acronym."""
    if a.lang != "en" or b.lang != "en" or not a.head or not b.head:
        return None
    for x, y, swap in ((a, b, False), (b, a, True)):
        extra_x, extra_y = x.head - y.head, y.head - x.head
        if len(extra_x) != 1 or len(extra_y) < MIN_LETTERS:
            continue
        (word,) = extra_x
        if word not in x.names or not MIN_LETTERS <= len(word) <= MAX_LETTERS:
            continue
        if not word.isalpha() or sorted(word) != sorted(w[0] for w in extra_y):
            continue
        spelled = dataclasses.replace(x, head=y.head, names=x.names - {word})
        return (y, spelled) if swap else (spelled, y)
    return None


def _is_acronym(word: str, frame: Frame) -> bool:
    return word in frame.names and word.isalpha() and MIN_LETTERS <= len(word) <= MAX_LETTERS


def acronym_keys(frame: Frame) -> list[str]:
    """Blocking keys that meet between a head spelled out and its acronym: ``ac:`` plus the
    sorted initials of the head's words (the owner's name left out) and the relation, for a
    head of two to six such words; the same of the acronym's letters for a head whose one
    word beside the owner is an acronym."""
    if frame.lang != "en":
        return []
    words = frame.head - frame.owners
    if len(words) == 1:
        (word,) = words
        if _is_acronym(word, frame):
            return [f"ac:{''.join(sorted(word))}|{frame.rel}"]
        return []
    if MIN_LETTERS <= len(words) <= MAX_LETTERS:
        return [f"ac:{''.join(sorted(w[0] for w in words))}|{frame.rel}"]
    return []
