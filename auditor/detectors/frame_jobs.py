"""A person's job told in three ways: "Clara is a teacher", "Clara works as a nurse",
"Clara's job is nursing" ("민지는 간호사다", "민지는 교사로 일한다", "민지의 직업은 교사다"). Each
is read as the head's job, so two of them compare as one attribute. "works as" and "로
일한다" name a job whatever the word; "is a" only with a word of ``occupations`` in the
data file (a person "is a" mother, a runner or a vegetarian too). Read by
:func:`auditor.detectors.contradiction_frames.frames_of`."""

from __future__ import annotations

import dataclasses
import functools
import re

from auditor.detectors._contradiction_text import stem
from auditor.detectors._frame_types import Frame
from auditor.detectors._frame_words import _data

__all__ = ["as_job"]

#: the head key of a job (English), and the words a head names it with
_JOB = "job"
_JOB_WORDS = frozenset({"job", "occupat", "profess", "career"})
#: the Korean head key of a job ("직업은")
_KO_JOB = "직업"
#: relations that name a job whatever the value ("works as a nurse", "is employed as")
_JOB_RELATIONS = frozenset({"work as", "employ as"})
#: the most value words of a job ("a primary school teacher")
_MAX_JOB_WORDS = 4
#: "교사로 일한다", "간호사로 일해요": a noun with 로 and 일하다
_KO_WORKS_AS = re.compile(r"[가-힣A-Za-z]\s*(?:으로|로)\s*일(?:한|하|해|했)")


@functools.cache
def _occupations() -> tuple[tuple[frozenset[str], ...], frozenset[str]]:
    """(English occupations as sets of stems, Korean words) of ``occupations`` in the data
    file; a phrase of several words matches only whole ("social worker", not "worker")."""
    d = _data()
    en = tuple(frozenset(stem(w) for w in o.split()) for o in d["occupations"])
    return en, frozenset(d["occupations_ko"])


def as_job(f: Frame, text: str) -> Frame:
    """``f`` (a frame of ``text``) read as its head's job when it states one; else ``f``."""
    if not f.head or f.negated or len(f.values) > _MAX_JOB_WORDS:
        return f
    en, ko = _occupations()
    if f.lang == "en":
        if f.head & _JOB_WORDS:
            head = (f.head - _JOB_WORDS) | {_JOB}
            return dataclasses.replace(f, head=head) if head != f.head else f
        named = f.rel == "=" and not f.conj and any(o <= f.values for o in en)
        if f.rel in _JOB_RELATIONS or named:
            return dataclasses.replace(f, head=f.head | {_JOB}, rel="=", functional=True)
        return f
    if _KO_JOB in f.head:
        return f
    if f.rel == "일" and _KO_WORKS_AS.search(text):  # "교사로 일한다": the noun is the job
        values = f.values - {"일"}
        return dataclasses.replace(f, head=f.head | {_KO_JOB}, rel="=", values=values)
    if f.rel == "=" and f.values & ko and not f.conj:
        return dataclasses.replace(f, head=f.head | {_KO_JOB}, functional=True)
    return f
