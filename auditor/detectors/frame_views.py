"""More readings of one English sentence for the frame reader: the sentence once per name
of its subject when an appositive names it twice (:func:`appositive_views`), and the
relation a reduced relative clause carries as a sentence of its own
(:func:`reduced_relative_view`). Read by
:func:`auditor.detectors.contradiction_frames.frames_of`."""

from __future__ import annotations

from collections.abc import Sequence

from auditor.detectors._contradiction_text import stem
from auditor.detectors._frame_words import Tok, _data
from auditor.detectors.frame_relations import relation_groups
from auditor.detectors.frame_verbs import looks_verb

__all__ = ["appositive_views", "reduced_relative_view"]

#: words that open an appositive naming one thing (or a capitalised name, checked apart)
_APPOSITIVE_OPENERS = frozenset({"a", "an", "the", "my", "his", "her", "their", "our", "your"})
#: at most this many words in an appositive ("Minji's side project, a habit tracker, is")
_APPOSITIVE_WORDS = 6


def appositive_views(text: str, toks: Sequence[Tok]) -> list[Sequence[Tok]]:
    """The sentence once per name of its subject when an appositive names it twice ("Minji's
    side project, a habit tracker, is released under MIT": "Minji's side project is ..." and
    "a habit tracker is ..."), else the sentence as it is."""
    d = _data()
    if len(toks) < 6 or "," not in {t.low for t in toks[:_APPOSITIVE_WORDS]}:  # noqa: PLR2004
        return [toks]
    first = next(i for i, t in enumerate(toks) if t.low == ",")
    second = next(
        (
            i
            for i in range(first + 2, min(len(toks), first + 2 + _APPOSITIVE_WORDS))
            if toks[i].low == ","
        ),
        -1,
    )
    if second < 0 or second + 1 >= len(toks) or not looks_verb(toks, second + 1):
        return [toks]
    if any(t.low in d["clause_stops_set"] - {","} for t in toks[first + 1 : second]):
        return [toks]  # "Minji, but not her team, ..."
    rest = list(toks[second + 1 :])
    views: list[Sequence[Tok]] = [[*toks[:first], *rest]]
    named = toks[first + 1 : second]
    # the appositive is a second name of one thing ("a habit tracker", "his son", "Clara"),
    # not a description of several ("two renowned anthropologists")
    # ("Margaret's" is capitalised although str.istitle reads its "s" as a word of its own)
    opener = (
        named[0].low in _APPOSITIVE_OPENERS or text[named[0].start : named[0].start + 1].isupper()
    )
    if opener and not any(t.low in d["conjunctions_set"] for t in toks[:first]):
        views.append([*named, *rest])
    return views


#: how far after the copula a reduced relative clause's participle may stand
_REDUCED_WORDS = 8


def reduced_relative_view(toks: Sequence[Tok]) -> Sequence[Tok] | None:
    """The relation a noun phrase after the copula carries in a reduced relative clause,
    as a sentence of its own ("Lumen is an open-source app licensed under MIT": "Lumen is
    licensed under MIT"), for the relations of one group (licence, platform, ...) only: the
    words of such a relation name the attribute whatever the noun phrase says."""
    d = _data()
    lows = [t.low for t in toks]
    cop = next((i for i, w in enumerate(lows[:4]) if w in d["copulas_set"]), -1)
    if cop < 1 or cop + 3 >= len(lows) or lows[cop + 1] not in ("a", "an", "the"):
        return None
    groups = relation_groups()
    for k in range(cop + 2, min(len(lows) - 2, cop + 2 + _REDUCED_WORDS)):
        if lows[k] in d["clause_stops_set"]:
            return None
        if (
            lows[k] in d["participles_set"]
            and lows[k + 1] in d["prepositions_set"]
            and f"{stem(lows[k])} {stem(lows[k + 1])}" in groups
        ):
            return [*toks[: cop + 1], *toks[k:]]
    return None
