"""The word-list alternation of the pii patterns is a trie: same matches as the flat form.

:func:`auditor.detectors.pii_presidio.alternation` factors a word list by common prefix so
the regex engine stops trying every word at every position. These tests compare it with
the flat ``longest|...|shortest`` alternation it replaced: on generated word lists and
texts (both regex engines the detectors use, case-sensitive and not), and on every pattern
the pii modules build from word lists, over the corpora's train texts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import regex
from hypothesis import example, given, settings
from hypothesis import strategies as st

from auditor.detectors import pii_address, pii_nrp, pii_presidio
from tests.corpora import train_texts


def _flat(words: Iterable[str]) -> str:
    """The alternation as it was: every word, longest first."""
    return "|".join(re.escape(w) for w in sorted(set(words), key=lambda w: (-len(w), w)))


@contextmanager
def _flat_alternation() -> Iterator[None]:
    """The pii modules' pattern builders with the flat alternation."""
    trie = pii_presidio.alternation
    for module in (pii_nrp, pii_address):
        setattr(module, "_alternation", _flat)  # noqa: B010 - a private name, on purpose
    try:
        yield
    finally:
        for module in (pii_nrp, pii_address):
            setattr(module, "_alternation", trie)  # noqa: B010


_LETTERS = st.sampled_from(list("abcAB ṡſ-.가각"))
_WORDS = st.lists(st.text(_LETTERS, min_size=1, max_size=6), min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(words=_WORDS, text=st.text(_LETTERS, max_size=40), ignore_case=st.booleans())
# two words equal but for case at their start: under (?i) both branches match "BA"
@example(words=["B", "bA"], text="BA", ignore_case=True)
@example(words=["Bxyz", "B", "bA"], text="BA bxyz", ignore_case=True)
@example(words=["sA", "ſ"], text="SA ſa", ignore_case=True)
def test_the_trie_matches_what_the_flat_alternation_matches(
    words: list[str], text: str, ignore_case: bool
) -> None:
    flags = re.IGNORECASE if ignore_case else 0
    # the way the detectors use it: inside a group, followed by more pattern
    for shape in ("(?:{})", r"(?:{})s?(?![a-z])", r"(?<![a-z])(?:{})\b"):
        trie = shape.format(pii_presidio.alternation(words))
        flat = shape.format(_flat(words))
        assert [m.span() for m in re.finditer(trie, text, flags)] == [
            m.span() for m in re.finditer(flat, text, flags)
        ]
        assert [m.span() for m in regex.finditer(trie, text, flags)] == [
            m.span() for m in regex.finditer(flat, text, flags)
        ]


def test_prefixes_prefer_the_longest_word_as_the_flat_form_does() -> None:
    words = ["Dutch", "Dutchman", "Dutchmen", "Du"]
    pattern = re.compile(pii_presidio.alternation(words))
    assert [m.group() for m in pattern.finditer("Dutchmen, Dutchman, Dutch, Dux")] == [
        "Dutchmen",
        "Dutchman",
        "Dutch",
        "Du",
    ]
    assert pii_presidio.alternation([]) == ""


def _word_list_patterns() -> list[tuple[str, regex.Pattern[str]]]:
    out = [
        (f"nrp {p.name}", regex.compile(p.regex, regex.MULTILINE)) for p in pii_nrp._nrp_patterns()
    ]
    strong, weak = pii_address._address_patterns()
    presidio_flags = regex.DOTALL | regex.MULTILINE | regex.IGNORECASE  # Presidio's default
    out += [(f"address {p.name}", regex.compile(p.regex, presidio_flags)) for p in strong + weak]
    return out


def test_every_word_list_pattern_of_the_pii_modules_matches_as_before_on_the_corpora() -> None:
    texts = [t.fact for t in train_texts()]
    trie = _word_list_patterns()
    with _flat_alternation():
        flat = _word_list_patterns()
    assert [name for name, _ in trie] == [name for name, _ in flat]
    assert any(a.pattern != b.pattern for (_, a), (_, b) in zip(trie, flat, strict=True))
    matched = 0
    for (name, fast), (_, plain) in zip(trie, flat, strict=True):
        for text in texts:
            spans = [m.span() for m in fast.finditer(text)]
            assert spans == [m.span() for m in plain.finditer(text)], (name, text[:80])
            matched += len(spans)
    assert matched > 100  # the corpora exercise these patterns
