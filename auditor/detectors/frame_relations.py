"""Relations that state one attribute in other words (``relation_groups`` and
``ko_relation_groups`` of ``auditor/detectors/data/contradiction_frames.json``): "is licensed
under" / "is released under", "is stored as" / "saves", "쓴다" / "사용한다". Read by
:mod:`auditor.detectors.contradiction_frames` and :mod:`auditor.detectors.frame_views`."""

from __future__ import annotations

import functools

from auditor.detectors._contradiction_text import stem
from auditor.detectors._frame_types import Frame
from auditor.detectors._frame_words import _data

__all__ = ["ko_relation_groups", "relation_group", "relation_groups", "same_relation"]


@functools.cache
def relation_groups() -> dict[str, str]:
    """Relation key -> its group (``relation_groups`` of the data file), keyed as the frame
    reader builds a relation: stems of its words without the copula."""
    copulas = _data()["copulas_set"]
    out: dict[str, str] = {}
    for group, phrases in _data()["relation_groups"].items():
        if group.startswith("_"):
            continue
        for phrase in phrases:
            words = phrase.split()
            key = " ".join(stem(w) for w in words if w not in copulas) or phrase
            out[key] = group
    return out


def relation_group(rel: str) -> str | None:
    """The group of an English relation key, or of its longest first words ("run out in"
    -> expiry, "start at" -> schedule)."""
    groups = relation_groups()
    parts = rel.split(" ")
    for n in range(len(parts), 0, -1):
        group = groups.get(" ".join(parts[:n]))
        if group is not None:
            return group
    return None


@functools.cache
def ko_relation_groups() -> dict[str, str]:
    """Korean relation key (a verb root as
    :func:`~auditor.detectors.frame_korean.ko_frame` reads it) -> its group."""
    return {
        root: group
        for group, roots in _data()["ko_relation_groups"].items()
        if not group.startswith("_")
        for root in roots
    }


def same_relation(a: Frame, b: Frame) -> bool:
    """Whether two English frames say one relation: the same key or one group of
    ``relation_groups`` ("is stored as" / "saves")."""
    if a.rel == b.rel:
        return True
    group = relation_group(a.rel)
    return group is not None and group == relation_group(b.rel)
