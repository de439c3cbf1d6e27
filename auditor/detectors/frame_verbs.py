"""Where an English sentence's verb is: the word that ends its head ("Kestrel's releases
*go* out", "I *sleep* around 7 hours", "Chloe *bakes* sourdough", "the store *opens*") and
whether a head is only a name. Read by :mod:`auditor.detectors.contradiction_frames`."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from auditor.detectors._frame_words import AGE_VERBS, Tok, _data, _number

__all__ = ["en_boundary", "looks_verb", "named_entity"]


#: subjects whose verb has no -s ("I sleep", "we deploy"): the word after one is the verb
_PLAIN_SUBJECTS = frozenset({"i", "we", "they", "you"})


def _after_plain_subject(toks: Sequence[Tok], i: int, d: Mapping[str, Any]) -> bool:
    """Whether the word at ``i`` is a verb right after "I" / "we" / "they" / "you" (adverbs,
    "do" and negations between: "I usually sleep", "I don't eat")."""
    if i == 0 or toks[0].low not in _PLAIN_SUBJECTS:
        return False
    low = toks[i].low
    if not low.isalpha() or low in d["qualifiers_set"] or low.endswith("ly"):
        return False
    nxt = toks[i + 1].low if i + 1 < len(toks) else ""
    if low in d["never_words_set"] or low == "also" or (low == "do" and nxt in ("not", "never")):
        return False
    k = i - 1
    while k > 0 and (
        toks[k].low.endswith(("ly", "n't"))
        or toks[k].low in d["qualifiers_set"]
        or toks[k].low in d["never_words_set"]
        or toks[k].low in ("do", "also")
    ):
        k -= 1
    return k == 0 and toks[0].low in _PLAIN_SUBJECTS


#: words in -s that open a sentence without being its verb ("Thanks for your help")
_NOT_VERBS = frozenset({"thanks", "regards", "cheers", "congrats", "greetings", "news"})
#: "'s" that is "is" or "us", not a possessive ("it's", "let's")
_CONTRACTED_IS = frozenset(
    {"it's", "that's", "he's", "she's", "what's", "there's", "here's", "who's", "let's"}
)
#: at most this many words of a subject before a verb in -s ("The user prefers", "Chloe bakes")
_SUBJECT_WORDS = 2


@functools.cache
def _lead_skip() -> frozenset[str]:
    """Words before a verb that are not its subject ("only", "never", "usually")."""
    d = _data()
    return frozenset(d["qualifiers_set"] | d["only_words_set"] | d["never_words_set"])


def _after_possessed_plural(toks: Sequence[Tok], i: int, d: Mapping[str, Any]) -> bool:
    """Whether the word at ``i`` is a verb in the base form right after a possessed plural
    noun ("Kestrel's releases go out", "Hana's shifts start at 7")."""
    if i < 2 or toks[i - 2].low in _CONTRACTED_IS or not toks[i - 2].low.endswith("'s"):  # noqa: PLR2004
        return False
    noun, low = toks[i - 1].low, toks[i].low
    return (
        noun.isalpha()
        and noun.endswith("s")
        and not noun.endswith(("ss", "us", "is"))
        and low.isalpha()
        and low not in d["prepositions_set"]
        and low not in d["determiners_set"]
        and low not in d["qualifiers_set"]
        and low not in ("and", "or", "of")
    )


def looks_verb(toks: Sequence[Tok], i: int) -> bool:
    d = _data()
    low = toks[i].low
    if low in d["copulas_set"]:
        return True
    if low in ("does", "do", "did") and i + 1 < len(toks) and toks[i + 1].low in ("not", "never"):
        return False  # "Beacon does not run on Windows": the verb comes after the negation
    if _after_plain_subject(toks, i, d):
        return True
    if i > 0 and toks[i - 1].low in d["determiners_set"] and toks[i - 1].low != "a":
        return False  # "the store opens": a noun after an article ("Server A runs": a name)
    if i > 0 and toks[i - 1].low.endswith("'s") and toks[i - 1].low not in _CONTRACTED_IS:
        return False  # "Kestrel's releases go out": a noun after a possessive
    if _after_possessed_plural(toks, i, d):
        return True  # "Kestrel's releases go out", "Hana's shifts start at 7"
    if low in d["relation_verbs_set"]:
        return True
    if low in AGE_VERBS and i + 1 < len(toks) and _number(toks[i + 1].low) is not None:
        return True  # "Ben turned 36 last month": an age
    if len(low) > 3 and low.endswith("s") and not low.endswith(("ss", "us", "is", "'s")):
        nxt = toks[i + 1].low if i + 1 < len(toks) else ""
        if nxt in d["prepositions_set"] or nxt in d["determiners_set"] or _number(nxt) is not None:
            return True
        # first, or right after a one- or two-word subject ("Answers tickets ...", "Chloe
        # bakes sourdough", "The user prefers tabs"), unless a verb follows ("Hana's shifts
        # are ...")
        if i > _SUBJECT_WORDS + 3 or not low.isalpha() or low in _NOT_VERBS:
            return False
        skip = _lead_skip()
        before = [t for t in toks[:i] if t.low not in skip]
        return (
            len(before) <= _SUBJECT_WORDS
            and not (before and before[-1].low in d["determiners_set"])
            and nxt not in d["copulas_set"]
            and nxt not in d["relation_verbs_set"]
        )
    return False


def en_boundary(toks: Sequence[Tok]) -> int:
    """Index of the relation word (copula, verb or ":") ending the head; -1 when none."""
    for i, t in enumerate(toks):
        if t.low == ":" and i > 0:
            return i
        if t.low in (",", "(", ")"):
            return -1
        if looks_verb(toks, i):
            return i
    return -1


def named_entity(text: str, head_toks: Sequence[Tok], offset: int) -> bool:
    """Whether an English head is only a name ("Priya", "Project Falcon"): capitalised words,
    none a possessive. A named person or thing has many attributes, so "Priya is the product
    manager" and "Priya is allergic to penicillin" say two of them, not two values of one
    ("Priya's manager is", "the project's licence is": an attribute of the name)."""
    return bool(head_toks) and all(
        text[t.start - offset : t.start - offset + 1].isupper() and not t.low.endswith("'s")
        for t in head_toks
    )
