"""One cheap pass over a memory's text that decides which detectors can possibly fire.

Detectors declare, as data, the **needles** without which a part of them cannot find
anything (:meth:`auditor.detectors.base.Detector.prefilter_needles`): the PII detector needs
a digit, an ``@``, a group word or a password word; the Betterleaks engine needs one of its
rules' keywords; the special-category detector needs one of its anchors. The engine
(:mod:`auditor.rulepack.engine`) puts every needle of every rule group into one Aho-Corasick
automaton (``pyahocorasick``, C) and runs it once per memory over the folded text; a
detector none of whose parts has a needle in the text is not called, and a detector that
is called learns which of its parts may fire.

Contract (what makes it exact): a part's needles are a *necessary* condition. If none of
them occurs in :func:`fold` of the text, the part finds nothing, whatever the text. A
part whose condition cannot be written as literals declares ``always=True``.

:func:`fold` is ``str.lower()`` plus the few characters that Python's case-insensitive
``re`` matching equates with an ASCII letter but ``lower()`` does not map to it (``ſ``,
``ı``, the dot of ``İ``): so a needle occurs in the folded text whenever a detector's own
gate (a ``lower()`` substring test or a ``(?i:word)`` regex) would find it. Needles must be
folded already (checked when they are declared).

Measured on the realistic benchmark texts (union of the shipped rule pack's needles, about
1,300 literals including every Unicode digit): ``pyahocorasick`` 18 µs per text, a
trie-shaped ``re`` alternation (what ``LiteralSet`` used to be) 76 µs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Generic, TypeVar

import ahocorasick

__all__ = [
    "ENV_VAR",
    "Needles",
    "Prefilter",
    "fold",
    "prefilter_enabled",
    "unicode_digits",
]

#: ``MEMAUDIT_PREFILTER=0`` turns the prefilter off (every detector runs on every memory);
#: for the exactness test and the benchmark's comparison.
ENV_VAR = "MEMAUDIT_PREFILTER"

#: Characters that ``re``'s IGNORECASE equates with an ASCII letter and that ``lower()``
#: does not turn into it; U+0307 is the combining dot that ``"İ".lower()`` leaves after "i".
_FOLD = str.maketrans({"ſ": "s", "ı": "i", "\u0307": None})


@cache
def unicode_digits() -> frozenset[str]:
    """Every character ``re``'s ``\\d`` matches (the Unicode decimal digits, category Nd)."""
    return frozenset(c for c in map(chr, range(sys.maxunicode + 1)) if c.isdecimal())


def fold(text: str) -> str:
    """The text the needles are searched in: lower case, see the module docstring."""
    low = text.lower()
    return low if text.isascii() else low.translate(_FOLD)


def prefilter_enabled() -> bool:
    """Whether the prefilter is on (``MEMAUDIT_PREFILTER`` is not ``0``/``false``/``off``)."""
    return os.environ.get(ENV_VAR, "1").strip().lower() not in ("0", "false", "off", "no")


@dataclass(frozen=True)
class Needles:
    """What one part of a detector needs in a text to possibly find something.

    Attributes:
        literals: folded strings; the part may fire only if one occurs in ``fold(text)``.
        always: the part may fire on any text (``literals`` is then ignored).
    """

    literals: frozenset[str] = frozenset()
    always: bool = False

    @classmethod
    def of(cls, *groups: Iterable[str]) -> Needles:
        """Needles from groups of literals (each folded here; empty strings refused).

        Raises:
            ValueError: an empty literal (it would make the part always fire: say so with
                :meth:`anything`).
        """
        words: set[str] = set()
        for group in groups:
            for word in group:
                if not word:
                    raise ValueError("prefilter: an empty needle (use Needles.anything())")
                words.add(fold(word))
        return cls(frozenset(words))

    @classmethod
    def anything(cls) -> Needles:
        """A part that may fire on any text."""
        return cls(always=True)

    def __or__(self, other: Needles) -> Needles:
        if self.always or other.always:
            return Needles.anything()
        return Needles(self.literals | other.literals)


K = TypeVar("K", bound=Hashable)


class Prefilter(Generic[K]):
    """Decides, in one pass over a text, which keys' needles occur in it.

    Args:
        needles: key (a detector part) -> its needles.
    """

    def __init__(self, needles: Mapping[K, Needles]) -> None:
        self.keys: tuple[K, ...] = tuple(needles)
        self._always = frozenset(k for k, n in needles.items() if n.always)
        masks: dict[str, int] = {}
        for i, key in enumerate(self.keys):
            found = needles[key]
            if found.always:
                continue
            for word in found.literals:
                masks[word] = masks.get(word, 0) | (1 << i)
        self._full = sum(1 << i for i, k in enumerate(self.keys) if k not in self._always)
        self._automaton: ahocorasick.Automaton | None = None
        if masks:
            automaton = ahocorasick.Automaton()
            for word, mask in masks.items():
                automaton.add_word(word, mask)
            automaton.make_automaton()
            self._automaton = automaton

    def decide(self, text: str) -> frozenset[K]:
        """The keys that may fire on ``text`` (every ``always`` key included)."""
        seen = 0
        if self._automaton is not None and self._full:
            full = self._full
            for _, mask in self._automaton.iter(fold(text)):
                seen |= mask
                if seen == full:
                    break
        if not seen:
            return self._always
        return self._always | frozenset(k for i, k in enumerate(self.keys) if seen >> i & 1)
