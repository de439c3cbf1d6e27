"""Reading one memory for the contradiction detector: its profile and the lexicon.

:func:`build_profile` turns a fact into a :class:`Profile`: what the pair judge compares.
It is computed once per memory and scan (and cached by content hash), so the per-pair work
is set arithmetic. Offsets always point into the original fact (no normalisation that could
shift them), so spans stay exact.

The lexicon (value sets, cue words, number words) comes from
:mod:`auditor.detectors._contradiction_data`, possibly extended by a rule's params
(:class:`Lexicon`). The words of a fact are read by
:mod:`auditor.detectors._contradiction_text`, its numbers and dates by
:mod:`auditor.detectors._contradiction_quantities`.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from auditor.detectors import _contradiction_data as data
from auditor.detectors._contradiction_owners import avoided, conditional, owned, someone_else
from auditor.detectors._contradiction_quantities import (
    DateMention,
    NumberMention,
    _dates,
    _number_value,
    _numbers,
    _times,
)
from auditor.detectors._contradiction_text import (
    _KO_NEG_TOKEN,
    Token,
    _negations,
    _tokens,
    is_hangul,
    ko_root,
    negated_at,
    past_state_at,
    stem,
    token_at,
)
from auditor.detectors._literals import LiteralSet, necessary_literals
from auditor.detectors.prefilter import fold
from auditor.detectors.transliteration import (
    HANGUL_LEAD,
    NAME_LEAD,
    hangul_skeleton,
    is_name,
    latin_skeletons,
    without_possessive,
)

__all__ = [
    "Lexicon",
    "Profile",
    "QuestionAnswer",
    "TraitMention",
    "ValueMention",
    "build_profile",
    "cue_sets_for",
    "find_values",
]

Polarity = Literal["pos", "neg", "past"]

_HANGUL_RUN = re.compile(r"[\uac00-\ud7a3]+")

_QA = re.compile(
    r"^\s*(?:" + "|".join(data.QA_QUESTION_MARKERS) + r")\s*[:.)]\s*(?P<q>.+?)\s+"
    r"(?:" + "|".join(data.QA_ANSWER_MARKERS) + r")\s*[:.)]\s*(?P<a>.+?)\s*$",
    re.IGNORECASE | re.DOTALL,
)

#: The same memory layout without markers: one question, then its short answer
#: ("How many moons does Mars have? Two."); bounded repetitions, linear time.
_QA_PLAIN = re.compile(r"^\s*(?P<q>[^?\n]{8,300}\?)\s+(?P<a>[^?\n]{1,80}?)\s*$")

_WH = re.compile(
    r"(?i)^\s*(?P<wh>how many|how much|how long|how old|how far|how tall|what year|which year|"
    r"what date|when|who|whom|whose|where|which|what|why|how|is|are|was|were|do|does|did|can|"
    r"has|have|had)\b"
)

_CAPITALISED = re.compile(r"\b[A-Z][\w'’.-]*")

#: A substring each transition pattern needs (cheap prefilter, same order as the patterns).
_TRANSITION_NEEDLES = ("from", "replaced", "from", "에서")


@dataclass(frozen=True, slots=True)
class ValueMention:
    """A value of an exclusive slot found in a fact."""

    slot: str
    value: str
    start: int
    end: int
    polarity: Polarity


@dataclass(frozen=True, slots=True)
class TraitMention:
    """One side (``a`` or ``b``) of an exclusive trait pair found in a fact."""

    trait: str
    side: Literal["a", "b"]
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class QuestionAnswer:
    """A question / answer memory ("Q: ... A: ...")."""

    q_start: int
    q_end: int
    a_start: int
    a_end: int
    q_stems: frozenset[str]
    a_stems: frozenset[str]
    a_text: str
    wh: str
    a_numbers: tuple[float, ...]
    a_dates: tuple[DateMention, ...]
    a_proper: bool
    yes_no: bool
    choice: bool


@dataclass(frozen=True)
class Profile:
    """What the pair judge knows about one fact.

    The fields the candidate search reads (tokens, stems, bigrams, values, traits, the
    question/answer reading) are read when the profile is built; the others are read from
    the fact the first time the pair judge asks for them (cached properties of the same
    functions), so a memory that meets no candidate pair, about a third of a realistic
    store's, never pays for its dates, numbers, negations, scopes and names.
    """

    tokens: tuple[Token, ...]
    stems: frozenset[str]
    bigrams: frozenset[str]
    values: tuple[ValueMention, ...]
    traits: tuple[TraitMention, ...]
    qa: QuestionAnswer | None
    hangul: bool
    question: bool
    length: int
    text: str = field(repr=False)
    lex: Lexicon = field(repr=False, compare=False)

    @functools.cached_property
    def dates(self) -> tuple[DateMention, ...]:
        """Dates and periods named in the fact (another person's marked ``other``)."""
        tokens = self.tokens
        return tuple(
            dataclasses.replace(d, other=True) if self._someone_elses(d.start) else d
            for d in _dates(self.text, tokens)
        )

    @functools.cached_property
    def numbers(self) -> tuple[NumberMention, ...]:
        """Numbers outside the dates (with their units), then clock-time bounds."""
        spans = [(d.start, d.end) for d in self.dates]
        found = _numbers(self.text, self.tokens, spans, self.hangul)
        return tuple(
            dataclasses.replace(n, other=True) if self._someone_elses(n.start) else n
            for n in (*found, *_times(self.text, self.tokens))
        )

    def _someone_elses(self, start: int) -> bool:
        """Whether the value at character ``start`` is said of a relative, not the subject."""
        k = token_at(self.tokens, start)
        return k < len(self.tokens) and someone_else(self.tokens, k)

    @functools.cached_property
    def negations(self) -> tuple[tuple[int, int], ...]:
        """Token ranges under a negation."""
        return _negations(self.text, self.tokens, self.hangul)

    @functools.cached_property
    def scopes(self) -> frozenset[str]:
        """Where a statement holds ("at work", "for side projects")."""
        return frozenset(scope for scope, _s, _e in self.scope_spans)

    @functools.cached_property
    def scope_spans(self) -> tuple[tuple[str, int, int], ...]:
        """The scopes with the character span each was read from."""
        return _scopes(self.text, self.lex)

    def scopes_near(self, start: int, end: int) -> frozenset[str]:
        """The scopes read in the clause of the characters ``start:end`` ("Seojun is an only
        child; his parents live in Gimhae": Gimhae scopes where the parents live, not the
        only child)."""
        if not self.scope_spans:
            return frozenset()
        first = token_at(self.tokens, start)
        if first >= len(self.tokens):
            return self.scopes
        clause = self.tokens[first].clause
        inside = [t for t in self.tokens if t.clause == clause]
        lo, hi = inside[0].start, inside[-1].end
        return frozenset(scope for scope, s, e in self.scope_spans if s < hi and e > lo)

    @functools.cached_property
    def name_skeletons(self) -> tuple[frozenset[str], frozenset[str]]:
        """(Hangul, Latin) consonant skeletons of the name the fact is about: a Hangul word
        among its first words, or a Latin name among them, outside the value sets
        (:mod:`auditor.detectors.transliteration`): "Lumen's CI ..." and "루멘 CI는 ..."
        are about one thing."""
        skip = self.lex.known_values
        hangul: set[str] = set()
        latin: set[str] = set()
        for k, t in enumerate(self.tokens[:NAME_LEAD]):
            if not t.content or t.stem in skip:
                continue
            if is_hangul(t.text):
                skeleton = hangul_skeleton(t.stem) if k < HANGUL_LEAD else None
                if skeleton:
                    hangul.add(skeleton)
            elif is_name(self.text[t.start : t.end]):
                latin.update(latin_skeletons(without_possessive(t.text)))
        return frozenset(hangul), frozenset(latin)

    @functools.cached_property
    def universal(self) -> bool:
        """Whether the fact says always / never / every."""
        return any(t.text in data.UNIVERSAL_WORDS for t in self.tokens)

    @functools.cached_property
    def hedged(self) -> bool:
        """Whether the fact is hedged ("maybe", "I think")."""
        low = self.text.lower()
        return any(h in low for h in self.lex.hedges)

    @functools.cached_property
    def ko_roots(self) -> frozenset[str]:
        """Roots of the Hangul content words outside negations."""
        if not self.hangul:
            return frozenset()
        return frozenset(
            ko_root(t.text)
            for t in self.tokens
            if t.content and is_hangul(t.text) and not _KO_NEG_TOKEN.search(t.text)
        )

    @functools.cached_property
    def proper(self) -> frozenset[str]:
        """Stems of capitalised words that are not a sentence's first (names, titles)."""
        return _proper_words(self.text, self.tokens)

    @property
    def negated(self) -> bool:
        """Whether the fact contains a negation."""
        return bool(self.negations)


def _triggers(pattern: str) -> frozenset[str]:
    """Literals (folded) one of which is in every match of a trait pattern: the ones the
    regex parser proves necessary ("(?:cheese|beef)?burgers?" -> burger), else its literal
    prefix ("" when it has none: the pattern is then tried on every text)."""
    found = necessary_literals(pattern, re.IGNORECASE)
    return found if found is not None else frozenset({_literal_prefix(pattern)})


def _literal_prefix(pattern: str) -> str:
    """The literal text a trait pattern starts with (lower case; "" when there is none).

    Used as a cheap substring prefilter: a pattern can only match where its prefix occurs.
    """
    depth = 0
    escaped = False
    for ch in pattern:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "|" and depth == 0:
            return ""  # a top-level alternative: no common prefix
    body = pattern.removeprefix(r"\b")
    out = []
    for ch in body:
        if ch.isalnum() or ch in " '-" or is_hangul(ch):
            out.append(ch)
        else:
            break
    # the character before an optional or a group may be optional itself
    if body[len(out) : len(out) + 1] in ("?", "*") and out:
        out.pop()
    return "".join(out).lower().strip()


@dataclass(frozen=True)
class Lexicon:
    """The compiled tables: slot value patterns, trait patterns, scope and hedge patterns.

    Args:
        slots: exclusive slots (see :class:`~auditor.detectors._contradiction_data.SlotSpec`).
        traits: exclusive trait pairs.
        hedges: hedge phrases.
    """

    slots: Mapping[str, data.SlotSpec]
    traits: Mapping[str, data.TraitSpec]
    hedges: tuple[str, ...]
    alias_index: dict[str, tuple[str, str]] = field(init=False)
    hangul_aliases: dict[str, tuple[str, str]] = field(init=False)
    multi_first: frozenset[str] = field(init=False)
    max_alias_words: int = field(init=False)
    trait_patterns: dict[str, tuple[re.Pattern[str], re.Pattern[str], frozenset[str]]] = field(
        init=False
    )
    trait_triggers: dict[str, tuple[str, ...]] = field(init=False)
    #: every trait trigger in one automaton (one pass per text), and the traits with none
    trait_gate: LiteralSet = field(init=False)
    trait_always: frozenset[str] = field(init=False)
    trait_ko_cues: dict[str, tuple[str, ...]] = field(init=False)
    scope_patterns: tuple[re.Pattern[str], ...] = field(init=False)
    #: per scope pattern, literals one of which each match holds (None: no such set)
    scope_gates: tuple[LiteralSet | None, ...] = field(init=False)
    transition_patterns: tuple[re.Pattern[str], ...] = field(init=False)
    known_values: frozenset[str] = field(init=False)
    #: slots whose conflict two relations of one thing do not explain away (``any_relation``)
    any_relation_slots: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        alias_index: dict[str, tuple[str, str]] = {}
        for slot, spec in self.slots.items():
            for value, aliases in spec["values"].items():
                for alias in [value.replace("_", " "), *aliases]:
                    key = " ".join(alias.lower().split())
                    alias_index.setdefault(key, (slot, value))
        object.__setattr__(self, "alias_index", alias_index)
        object.__setattr__(
            self,
            "any_relation_slots",
            frozenset(name for name, spec in self.slots.items() if spec.get("any_relation")),
        )
        object.__setattr__(
            self,
            "hangul_aliases",
            {k: v for k, v in alias_index.items() if is_hangul(k) and " " not in k},
        )
        object.__setattr__(
            self, "max_alias_words", max((len(k.split()) for k in alias_index), default=1)
        )
        object.__setattr__(
            self, "multi_first", frozenset(k.split()[0] for k in alias_index if " " in k)
        )
        traits = {
            name: (
                re.compile("|".join(f"(?:{p})" for p in spec["a"]), re.I),
                re.compile("|".join(f"(?:{p})" for p in spec["b"]), re.I),
                frozenset(c.lower() for c in spec["b_cues"]),
            )
            for name, spec in self.traits.items()
        }
        object.__setattr__(self, "trait_patterns", traits)
        object.__setattr__(
            self,
            "trait_ko_cues",
            {
                name: tuple(c for c in spec["b_cues"] if is_hangul(c))
                for name, spec in self.traits.items()
            },
        )
        object.__setattr__(
            self,
            "trait_triggers",
            {
                name: tuple(sorted({t for p in (*spec["a"], *spec["b"]) for t in _triggers(p)}))
                for name, spec in self.traits.items()
            },
        )
        object.__setattr__(
            self,
            "trait_gate",
            LiteralSet(t for words in self.trait_triggers.values() for t in words if t),
        )
        object.__setattr__(
            self,
            "trait_always",
            frozenset(name for name, words in self.trait_triggers.items() if "" in words),
        )
        object.__setattr__(
            self, "scope_patterns", tuple(re.compile(p) for p in data.SCOPE_PATTERNS)
        )
        gates = (necessary_literals(p.pattern, p.flags) for p in self.scope_patterns)
        object.__setattr__(
            self, "scope_gates", tuple(None if g is None else LiteralSet(g) for g in gates)
        )
        object.__setattr__(
            self, "transition_patterns", tuple(re.compile(p) for p in data.TRANSITION_PATTERNS)
        )
        known = {w for a in alias_index for w in a.split()}
        object.__setattr__(self, "known_values", frozenset(known))

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> Lexicon:
        """The default tables, extended by ``params`` (``extra_slots``, ``extra_traits``,
        ``extra_hedges``).

        Raises:
            ValueError: a malformed extension (the message names the parameter).
        """
        slots: dict[str, data.SlotSpec] = {k: v for k, v in data.SLOTS.items()}
        extra = params.get("extra_slots", {})
        if not isinstance(extra, Mapping):
            raise ValueError("params.extra_slots must map slot names to slot specs")
        for name, spec in extra.items():
            if not isinstance(spec, Mapping) or not isinstance(spec.get("values"), Mapping):
                raise ValueError(f"params.extra_slots.{name} needs a 'values' mapping")
            values = {
                str(v): [str(a) for a in (aliases or [])] for v, aliases in spec["values"].items()
            }
            slots[str(name)] = {
                "title": str(spec.get("title", name)),
                "values": values,
                "cues": [str(c) for c in spec.get("cues", [])],
                "window": int(spec.get("window", 4)),
                "shared_context": bool(spec.get("shared_context", False)),
                "any_relation": bool(spec.get("any_relation", False)),
            }
        traits: dict[str, data.TraitSpec] = {k: v for k, v in data.TRAITS.items()}
        extra_traits = params.get("extra_traits", {})
        if not isinstance(extra_traits, Mapping):
            raise ValueError("params.extra_traits must map trait names to trait specs")
        for name, tspec in extra_traits.items():
            try:
                traits[str(name)] = {
                    "title": str(tspec.get("title", name)),
                    "a": [str(p) for p in tspec["a"]],
                    "b": [str(p) for p in tspec["b"]],
                    "b_cues": [str(c) for c in tspec.get("b_cues", [])],
                    "reason": str(tspec.get("reason", "the two traits exclude each other")),
                    "lasting": bool(tspec.get("lasting", False)),
                }
                for p in (*traits[str(name)]["a"], *traits[str(name)]["b"]):
                    re.compile(p)
            except (KeyError, TypeError, AttributeError, re.error) as exc:
                raise ValueError(f"params.extra_traits.{name}: {exc}") from None
        hedges = tuple(data.HEDGE_PHRASES) + tuple(
            str(h).lower() for h in params.get("extra_hedges", [])
        )
        return cls(slots, traits, hedges)


def _cue_near(
    tokens: Sequence[Token], first: int, last: int, cues: frozenset[str], window: int
) -> bool:
    lo, hi = max(0, first - window), min(len(tokens), last + window + 1)
    for i in range(lo, hi):
        if first <= i <= last:
            continue
        t = tokens[i]
        if t.text in cues or t.stem in cues:
            return True
        if is_hangul(t.text) and any(t.text.startswith(c) for c in cues if is_hangul(c)):
            return True
    return False


def _alias_word(word: str) -> str:
    """A Latin word without the Korean particle glued to it ("actions로" -> "actions"), as
    slot aliases are written; other words as they are."""
    if word.isascii() or not word[:1].isascii():
        return word
    for k, c in enumerate(word):
        if not c.isascii():
            return word[:k]
    return word


def find_values(
    text: str, tokens: Sequence[Token], lex: Lexicon
) -> list[tuple[int, int, int, int, str, str]]:
    """Every value of every slot in a fact, by token look-up (no giant alternation regex).

    Multi-word aliases ("vs code", "new york") are matched on adjacent tokens; a Hangul
    token matches an alias it starts with (서울에서 -> 서울).

    Returns:
        ``(first token, last token, start, end, slot, value)`` tuples, left to right.
    """
    out: list[tuple[int, int, int, int, str, str]] = []
    n = len(tokens)
    i = 0
    index = lex.alias_index
    hangul = is_hangul(text)  # no Hangul in the fact, none in any of its tokens
    while i < n:
        hit: tuple[int, tuple[str, str]] | None = None
        widest = min(lex.max_alias_words, n - i) if tokens[i].text in lex.multi_first else 1
        for width in range(widest, 0, -1):
            last = i + width - 1
            if width > 1 and any(
                text[tokens[k].end : tokens[k + 1].start].strip() for k in range(i, last)
            ):
                continue
            key = (
                _alias_word(tokens[i].text)
                if width == 1
                else " ".join(_alias_word(tokens[k].text) for k in range(i, last + 1))
            )
            found = index.get(key)
            if found is None and width > 1 and hangul and is_hangul(tokens[last].text):
                # the last word with its particle or copula off ("다크 모드다", "라이트 테마를")
                found = index.get(key[: key.rfind(" ") + 1] + tokens[last].stem)
            if found is not None:
                hit = (last, found)
                break
        if hit is None and hangul and is_hangul(tokens[i].text):
            word = tokens[i].text
            found = lex.hangul_aliases.get(tokens[i].stem)
            if found is None:
                for cut in range(len(word) - 1, 1, -1):
                    found = lex.hangul_aliases.get(word[:cut])
                    if found is not None:
                        break
            if found is not None:
                hit = (i, found)
        if hit is None:
            i += 1
            continue
        last, (slot, value) = hit
        out.append((i, last, tokens[i].start, tokens[last].end, slot, value))
        i = last + 1
    return out


def _values(
    text: str,
    tokens: Sequence[Token],
    lex: Lexicon,
    hangul: bool,
    cue_sets: Mapping[str, frozenset[str]],
) -> tuple[ValueMention, ...]:
    mentions = find_values(text, tokens, lex)
    if not mentions:
        return ()
    found: list[ValueMention] = []
    past: list[tuple[int, int]] = []
    current: list[tuple[int, int]] = []
    low = text.lower()
    for pattern, needle in zip(lex.transition_patterns, _TRANSITION_NEEDLES, strict=True):
        if needle not in low:
            continue
        for m in pattern.finditer(text):
            past.append(m.span("old"))
            current.append(m.span("new"))
    for first, last, start, end, slot, value in mentions:
        spec = lex.slots[slot]
        cues = cue_sets[slot]
        if cues and not _cue_near(tokens, first, last, cues, int(spec.get("window", 4))):
            continue
        if someone_else(tokens, first):
            continue  # "태윤의 아내는 윈도우 노트북을 쓴다": the wife's laptop
        polarity: Polarity = "pos"
        if any(a <= start < b for a, b in past) and not any(a <= start < b for a, b in current):
            polarity = "past"
        elif past_state_at(tokens, first, last, hangul):
            polarity = "past"  # "lived in Chicago for ten years"
        elif negated_at(tokens, first, last, hangul):
            polarity = "neg"
        found.append(ValueMention(slot, value, start, end, polarity))
    return tuple(found)


def _traits(
    text: str, tokens: Sequence[Token], lex: Lexicon, hangul: bool
) -> tuple[TraitMention, ...]:
    out: list[TraitMention] = []
    present = lex.trait_gate.present(fold(text))
    for name, (pat_a, pat_b, cues) in lex.trait_patterns.items():
        if name not in lex.trait_always and present.isdisjoint(lex.trait_triggers[name]):
            continue
        for side, pattern in (("a", pat_a), ("b", pat_b)):
            for m in pattern.finditer(text):
                first = token_at(tokens, m.start())
                last = max(first, token_at(tokens, m.end() - 1))
                if first >= len(tokens):
                    continue
                if side == "a":
                    if _EXCEPTION.search(text):
                        continue  # "술을 마시지 않지만 ... 막걸리 한 잔만은 예외로": not absolute
                    # a negation inside the match is part of the trait ("doesn't drink")
                    if negated_at(tokens, first, first, False) and not re.search(
                        r"n't|not|never|안|않|못|끊", m.group(), re.I
                    ):
                        continue
                    if hangul and _ko_is_not(tokens, last):
                        continue  # "비건은 아니라서": is not vegan
                    if someone_else(tokens, first):
                        continue  # "her son Tobi is allergic to cats": the son's trait
                else:
                    if negated_at(tokens, first, last, hangul) or avoided(tokens, first):
                        continue
                    if someone_else(tokens, first):
                        continue  # "her husband loves shrimp": not the subject's own taste
                    if cues:
                        clause = tokens[first].clause
                        lo = token_at(tokens, max(0, m.start() - 60))
                        hi = token_at(tokens, m.start() + 60)
                        near = [
                            t
                            for k, t in enumerate(tokens[lo:hi], start=lo)
                            if (t.clause == clause or hangul) and not conditional(tokens, k)
                        ]
                        ko_cues = lex.trait_ko_cues[name]
                        if not any(
                            t.text in cues
                            or t.stem in cues
                            or (ko_cues and any(c in t.text for c in ko_cues))
                            for t in near
                        ) and not owned(tokens, first, cues):
                            continue
                out.append(TraitMention(name, "a" if side == "a" else "b", m.start(), m.end()))
    return tuple(out)


#: words that make an exception to what a fact rules out ("doesn't drink, except a glass
#: of wine at Christmas", "막걸리 한 잔만은 예외로"): its trait is not absolute
_EXCEPTION = re.compile(
    r"\b(?:except|excepting|apart from|other than|with the exception of|an exception)\b"
    r"|예외|빼고는|빼면|제외하면|말고는"
)


def _ko_is_not(tokens: Sequence[Token], last: int) -> bool:
    """Whether a Korean word is denied by the copula after it ("비건은 아니라서", "채식주의자가
    아니다"): the next word is a form of 아니다, in the same clause."""
    nxt = last + 1
    return (
        nxt < len(tokens)
        and tokens[nxt].clause == tokens[last].clause
        and tokens[nxt].text.startswith("아니")
    )


def _scopes(text: str, lex: Lexicon) -> tuple[tuple[str, int, int], ...]:
    scopes: list[tuple[str, int, int]] = []
    folded: str | None = None
    for pattern, gate in zip(lex.scope_patterns, lex.scope_gates, strict=True):
        if gate is not None:
            folded = fold(text) if folded is None else folded
            if not gate.any_in(folded):
                continue  # no match can lack all of the gate's literals
        for m in pattern.finditer(text):
            scope = m.group("scope").lower()
            if scope in lex.known_values or scope in data.EN_STOPWORDS:
                continue
            scope = {
                "side project": "personal",
                "side projects": "personal",
                "personal projects": "personal",
                "personal project": "personal",
                "hobby": "personal",
                "weekend": "personal",
                "private": "personal",
                "hobby project": "personal",
                "hobby projects": "personal",
                "at work": "work",
                "work projects": "work",
                "work project": "work",
                "at the office": "work",
                "in the office": "work",
                "회사에서": "work",
                "회사 프로젝트": "work",
                "업무용": "work",
                "업무에서": "work",
                "개인 프로젝트": "personal",
                "사이드 프로젝트": "personal",
                "at home": "home",
                "집에서": "home",
                "레거시": "legacy",
            }.get(scope, scope)
            scopes.append((scope, m.start("scope"), m.end("scope")))
    return tuple(scopes)


def _question_answer(text: str, lex: Lexicon) -> QuestionAnswer | None:
    m = _QA.match(text) or _QA_PLAIN.match(text)
    if m is None:
        return None
    question, answer = m.group("q"), m.group("a")
    q_tokens = _tokens(question)
    a_tokens = _tokens(answer)
    wh_match = _WH.match(question)
    wh = wh_match.group("wh").lower() if wh_match else ""
    if not wh:
        for ko, kind in data.WH_NUMERIC.items():
            if is_hangul(ko) and ko in question:
                wh = kind
                break
    a_low = answer.strip().lower().rstrip(".")
    yes_no = a_low in ("yes", "no", "네", "아니오", "아니요", "예", "true", "false")
    a_dates = _dates(answer, a_tokens)
    a_numbers = tuple(
        n.value
        for n in _numbers(answer, a_tokens, [(d.start, d.end) for d in a_dates], is_hangul(answer))
    )
    word_nums = tuple(float(v) for t in a_tokens if (v := _number_value(t.text)) is not None)
    q_stems = frozenset(t.stem for t in q_tokens if t.content)
    a_stems = frozenset(t.stem for t in a_tokens if t.content)
    choice = (
        bool(a_stems)
        and a_stems <= q_stems
        and (
            " or " in question.lower()
            or "," in question
            or "또는" in question
            or wh in ("which", "who", "whom", "whose")
        )
    )
    return QuestionAnswer(
        q_start=m.start("q"),
        q_end=m.end("q"),
        a_start=m.start("a"),
        a_end=m.end("a"),
        q_stems=q_stems,
        a_stems=a_stems,
        a_text=answer,
        wh=wh,
        a_numbers=tuple(dict.fromkeys(a_numbers + word_nums)),
        a_dates=a_dates,
        a_proper=any(t[:1].isupper() for t in answer.split()),
        yes_no=yes_no,
        choice=choice,
    )


def _proper_words(text: str, tokens: Sequence[Token]) -> frozenset[str]:
    """Capitalised words that are not the first word of a sentence (names, titles)."""
    out: set[str] = set()
    for m in _CAPITALISED.finditer(text):
        before = text[: m.start()].rstrip()
        if not before or before[-1] in ".!?:\"'“(—–\n":
            # sentence start: only a name when the next word is capitalised too
            rest = text[m.end() :].lstrip()
            if not rest[:1].isupper():
                continue
        word = m.group().strip(".'’").lower()
        if word and word not in data.EN_STOPWORDS:
            out.add(stem(word))
    return frozenset(out)


def build_profile(text: str, lex: Lexicon, cue_sets: Mapping[str, frozenset[str]]) -> Profile:
    """Everything the pair judge compares, read from one fact.

    Args:
        text: the fact (untrusted; only read with linear-time regexes).
        lex: the compiled lexicon.
        cue_sets: slot name -> cue words (lower case), precomputed from ``lex``.

    Returns:
        The fact's profile.
    """
    hangul = is_hangul(text)
    tokens = _tokens(text)
    stems = frozenset(t.stem for t in tokens if t.content)
    bigrams: frozenset[str] = frozenset()
    if hangul:
        grams: set[str] = set()
        for run in _HANGUL_RUN.findall(text):
            grams.update(run[i : i + 2] for i in range(len(run) - 1))
            if len(run) == 1:
                grams.add(run)
        bigrams = frozenset(grams)
    qa = _question_answer(text, lex)
    return Profile(
        tokens=tokens,
        stems=stems,
        bigrams=bigrams,
        values=_values(text, tokens, lex, hangul, cue_sets),
        traits=_traits(text, tokens, lex, hangul),
        qa=qa,
        hangul=hangul,
        question=qa is None and text.rstrip().endswith(("?", "？")),
        length=len(text),
        text=text,
        lex=lex,
    )


def cue_sets_for(lex: Lexicon) -> dict[str, frozenset[str]]:
    """Slot name -> its cue words (lower case)."""
    return {
        name: frozenset(c.lower() for c in spec.get("cues", [])) for name, spec in lex.slots.items()
    }
