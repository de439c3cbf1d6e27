"""GDPR special categories of personal data (art. 9) and criminal records (art. 10).

Presidio has no recognizer for these, so this detector works from tables
(:mod:`auditor.detectors._special_terms`): per category and language (English, Korean),
patterns that say something about a person ("diagnosed with diabetes", "votes Labour",
"goes to church", "당뇨", "우울증", "임신", "약을 복용 중"), and benign look-alikes that
cancel a hit ("the party starts at 8" never matches; "the Great Depression", "European
Union", "SSH key fingerprint", "probation period at the new job" are excluded). Topic
words alone ("religion", "healthy diet", "party") are not enough.

A hit in a sentence that describes a thing (an app, a paper, a market, a clinic's service:
``data/special_frames.yaml``) and names no singular experiencer (I, she, the user, a
relative, 저는, 그는) is dropped as ``description_frame``: "this app helps patients track
insulin" and "우울증 치료제 시장" are nobody's health; so is a hit in a sentence that lists
three or more protected attributes and no person pronoun (``attribute_list``: "regardless
of age, disability, ethnicity ..."). Extra patterns (mental health,
substance use, sexual violence, gender identity, partners, biometric embeddings, union
membership) are data in ``data/special_patterns.yaml``.

Entities (one detection per category found in a memory, with every matching span):
``health``, ``religion``, ``political_opinion``, ``sexual_orientation`` (includes sex life
and gender identity), ``ethnic_origin``, ``trade_union``, ``genetic``, ``biometric``,
``criminal_record``. The score is the strongest pattern's (0.6 weak ... 0.85 explicit).

**Consent.** ``DetectContext.consents`` maps a subject to the categories it explicitly
opted in to. When the memory's subject has opted in to the detected category, the
detection is still returned (the rule still reports it) with
``details["allowed_by_consent"] = True``, and the reason says so; the scan records such a
finding as allowed instead of open, so a reviewer can still see what is stored under the
consent, and a revoked consent turns the next scan's finding open. Without consent the
flag is False.

Reasons and details never contain the matched words: they name the category, the
pattern ids, the languages and the counts; spans point at the text.

Params:
    categories: categories to look for (default: all nine).
    languages: pattern languages to run (default ``[en, ko]``; Korean patterns run only on
        text that contains Hangul).
    min_score: lowest score reported (default 0.5).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from auditor.detectors import _special_terms as terms
from auditor.detectors._literals import LiteralSet, necessary_literals_by_case
from auditor.detectors.base import DetectContext, Detection, Detector, MemoryView, Span
from auditor.detectors.prefilter import Needles, fold

__all__ = ["CATEGORIES", "SpecialCategoryDetector"]

CATEGORIES = terms.CATEGORIES
LANGUAGES = ("en", "ko")
#: Which GDPR article covers each category.
ARTICLE = {c: "GDPR art. 9" for c in CATEGORIES} | {"criminal_record": "GDPR art. 10"}

#: Hits kept per category and memory (a long page full of matches stays cheap to report).
MAX_HITS_PER_CATEGORY = 100

_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_SENTENCE_END = re.compile(r"[.!?。\n]")


@dataclass(frozen=True)
class _Pattern:
    category: str
    language: str
    id: str
    regex: re.Pattern[str]
    score: float
    topic_prone: bool
    #: literals one of which every match contains (folded), or None: always run
    needles: frozenset[str] | None = None
    #: with ``needles``, literals of case-sensitive parts (``(?-i:STI)``): a match contains
    #: one of ``needles`` in the folded text or one of these in the text as it is
    cased_needles: frozenset[str] = frozenset()


@dataclass(frozen=True)
class _Exclusion:
    id: str
    regex: re.Pattern[str]
    scope: str  # "overlap" | "sentence"


def _compile_patterns() -> dict[str, list[_Pattern]]:
    by_category: dict[str, list[_Pattern]] = {c: [] for c in CATEGORIES}
    for category, language, pattern_id, regex, score in terms.PATTERNS:
        needles = necessary_literals_by_case(regex, re.IGNORECASE)
        by_category[category].append(
            _Pattern(
                category,
                language,
                pattern_id,
                re.compile(regex, re.IGNORECASE),
                score,
                (category, language, pattern_id) in terms.TOPIC_PRONE,
                None if needles is None else needles[0],
                frozenset() if needles is None else needles[1],
            )
        )
    return by_category


def _compile_exclusions() -> dict[str, list[_Exclusion]]:
    by_category: dict[str, list[_Exclusion]] = {c: [] for c in CATEGORIES}
    for category, exclusion_id, regex, scope in terms.EXCLUSIONS:
        if scope not in ("overlap", "sentence"):
            raise ValueError(f"exclusion {exclusion_id}: scope must be overlap or sentence")
        by_category[category].append(
            _Exclusion(exclusion_id, re.compile(regex, re.IGNORECASE), scope)
        )
    return by_category


_PATTERNS = _compile_patterns()
_EXCLUSIONS = _compile_exclusions()
_DESCRIPTION = {
    "en": re.compile(terms.DESCRIPTION_CUES["en"], re.IGNORECASE),
    "ko": re.compile(terms.DESCRIPTION_CUES["ko"]),
}
#: how far after a hit a description cue still heads a compound with it ("diabetes app")
_COMPOUND_GAP = 12
#: what ends a compound: punctuation, brackets, a clause
_BREAK = re.compile(r"[,.;:!?()\[\]\n]")
_EXPERIENCERS = {
    "en": re.compile(terms.EXPERIENCERS["en"], re.IGNORECASE),
    "ko": re.compile(terms.EXPERIENCERS["ko"]),
}
#: Exclusion id reported when a description frame cancels a hit.
DESCRIPTION_FRAME = "description_frame"
#: Exclusion id reported when a hit is an item of a list of protected attributes.
ATTRIBUTE_LIST = "attribute_list"
_ATTRIBUTE_NAMES = {
    "en": re.compile(terms.ATTRIBUTE_NAMES["en"], re.IGNORECASE),
    "ko": re.compile(terms.ATTRIBUTE_NAMES["ko"]),
}
#: distinct attribute names that make a sentence a list of them
_LIST_LEAST = 3
#: persons that make such a list someone's ("she was turned down for her age, ..."): the
#: pronouns only, as a list's sentence often opens with a capital word ("Everyone is")
_LIST_PERSONS = {
    "en": re.compile(
        r"\b(?:i|i'm|i've|me|my|mine|myself|he|she|him|his|her|hers|user|user's)\b",
        re.IGNORECASE,
    ),
    "ko": re.compile(
        r"저는|제가|저의|(?<![가-힣])제 |나는|내가|나의|(?<![가-힣])내 |그는|그녀|사용자"
    ),
}
_PERSON_CUES = {
    "en": re.compile(terms.PERSON_CUES_EN, re.IGNORECASE | re.MULTILINE),
    "ko": re.compile(terms.PERSON_CUES_KO),
}
#: A Korean hit followed at once by a copula or "have" is said of someone even when no
#: subject is named (Korean drops it: "당뇨라서 단 음식은 못 먹어요", "공황장애가 있어서"); a
#: topic takes a particle instead ("당뇨에 좋은", "우울증은 ...") and "있는 사람" names a
#: population, not a person.
_KO_PREDICATED = re.compile(
    r"(?:이)?(?:라서|여서|이어서|예요|에요|이에요|입니다|이고|인데|이야|야|이다|다)(?![가-힣])"
    r"|(?:이|가)\s?(?:있|생겼|생겨서|심해|심하|재발)(?!는)"
)


@dataclass(frozen=True)
class _Hit:
    pattern: _Pattern
    start: int
    end: int
    score: float
    about_person: bool = True


class _Text:
    """One memory's text with its sentences located once (cheap per-hit lookups)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._ends: list[int] | None = None
        self._person: dict[int, list[tuple[int, int]]] = {}
        self._sentence_exclusion: dict[tuple[str, int], bool] = {}
        self._descriptive: dict[tuple[int, int, int], bool] = {}
        self._attribute_list: dict[int, bool] = {}

    def sentence(self, start: int) -> tuple[int, int, int]:
        """``(index, start, end)`` of the sentence (or line) holding offset ``start``."""
        if self._ends is None:
            self._ends = [m.end() for m in _SENTENCE_END.finditer(self.text)]
        i = bisect.bisect_right(self._ends, start)
        lo = self._ends[i - 1] if i else 0
        hi = self._ends[i] - 1 if i < len(self._ends) else len(self.text)
        return i, lo, hi

    def about_person(self, start: int, end: int | None = None) -> bool:
        """Whether the sentence around ``start`` speaks about a person: a person cue outside
        the hit ``start:end`` itself (a condition opening a sentence as its topic,
        "우울증은 흔한 질환이다", is no name followed by its topic marker)."""
        i, lo, hi = self.sentence(start)
        if i not in self._person:
            self._person[i] = [
                m.span() for cue in _PERSON_CUES.values() for m in cue.finditer(self.text, lo, hi)
            ]
        end = start if end is None else end
        return any(e <= start or s >= end for s, e in self._person[i])

    def descriptive(self, start: int, end: int | None = None) -> bool:
        """Whether the sentence around ``start`` describes a thing and names no experiencer.

        "This app helps patients track insulin", "우울증 치료제 시장": a description cue
        (an app, a paper, a market) and no singular person (I, she, the user, 저는, 그는).
        The cue must name the topic: before the hit, or right after it as the head of a
        compound ("diabetes app", "우울증 치료제"). A thing named later in the sentence
        ("Has a DUI conviction, so avoid rental companies") leaves the hit about the
        memory's subject, who in a memory note often goes unnamed.
        """
        i, lo, hi = self.sentence(start)
        end = start if end is None else end
        key = (i, start, end)
        if key not in self._descriptive:
            head_hi = min(hi, end + _COMPOUND_GAP)
            gap = self.text[end:head_hi]
            cut = _BREAK.search(gap)
            if cut:
                head_hi = end + cut.start()
            described = any(
                (m := cue.search(self.text, lo, head_hi)) is not None
                and (m.start() < start or m.start() >= end)
                for cue in _DESCRIPTION.values()
            )
            self._descriptive[key] = described and not any(
                who.search(self.text, lo, hi) for who in _EXPERIENCERS.values()
            )
        return self._descriptive[key]

    def attribute_list(self, start: int) -> bool:
        """Whether the sentence around ``start`` lists protected attributes ("regardless of
        age, disability, ethnicity, gender identity ...", "인종, 성별, 종교, 장애를 이유로"):
        :data:`_LIST_LEAST` or more distinct names and no person pronoun. A policy, not a
        person."""
        i, lo, hi = self.sentence(start)
        if i not in self._attribute_list:
            names = {
                m.group().lower()
                for regex in _ATTRIBUTE_NAMES.values()
                for m in regex.finditer(self.text, lo, hi)
            }
            self._attribute_list[i] = len(names) >= _LIST_LEAST and not any(
                who.search(self.text, lo, hi) for who in _LIST_PERSONS.values()
            )
        return self._attribute_list[i]

    def excluded(self, hit: _Hit, exclusions: Sequence[_Exclusion]) -> str | None:
        """The id of the exclusion that cancels ``hit``, or None."""
        if self.descriptive(hit.start, hit.end):
            return DESCRIPTION_FRAME
        if self.attribute_list(hit.start):
            return ATTRIBUTE_LIST
        for exclusion in exclusions:
            if exclusion.scope == "overlap":
                lo, hi = max(0, hit.start - 60), min(len(self.text), hit.end + 60)
                for m in exclusion.regex.finditer(self.text, lo, hi):
                    if m.start() < hit.end and hit.start < m.end():
                        return exclusion.id
                continue
            i, lo, hi = self.sentence(hit.start)
            key = (exclusion.id, i)
            if key not in self._sentence_exclusion:
                self._sentence_exclusion[key] = bool(exclusion.regex.search(self.text, lo, hi))
            if self._sentence_exclusion[key]:
                return exclusion.id
        return None

    def scored(self, pattern: _Pattern, start: int, end: int) -> _Hit:
        """A hit with its score: topic-prone patterns lose points without a person cue (a
        Korean hit predicated of an unnamed subject counts as one: :data:`_KO_PREDICATED`)."""
        if (
            not pattern.topic_prone
            or self.about_person(start, end)
            or (pattern.language == "ko" and _KO_PREDICATED.match(self.text, end) is not None)
        ):
            return _Hit(pattern, start, end, pattern.score)
        return _Hit(pattern, start, end, round(pattern.score - terms.TOPIC_PENALTY, 4), False)


class _Literals:
    """The patterns' literals that occur in a text: the folded ones found at once, the
    case-sensitive ones when a pattern first needs them (few patterns have any)."""

    def __init__(self, folded: set[str], cased: LiteralSet, text: str) -> None:
        self.folded = folded
        self._cased_set = cased
        self._text = text
        self._cased: set[str] | None = None

    def may_match(self, pattern: _Pattern) -> bool:
        """Whether one of the literals every match of ``pattern`` holds occurs."""
        if pattern.needles is None or not self.folded.isdisjoint(pattern.needles):
            return True
        if not pattern.cased_needles:
            return False
        if self._cased is None:
            self._cased = self._cased_set.present(self._text)
        return not self._cased.isdisjoint(pattern.cased_needles)


class SpecialCategoryDetector(Detector):
    """GDPR special categories in English and Korean, consent-aware; see the module docstring.

    Args:
        params: ``categories``, ``languages``, ``min_score``.

    Raises:
        ValueError: a parameter is invalid (the message names it).
    """

    name = "special_category"

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        p = self.params
        unknown = set(p) - {"categories", "languages", "min_score"}
        if unknown:
            raise ValueError(f"{sorted(unknown)[0]}: unknown parameter of special_category")
        categories = p.get("categories", list(CATEGORIES))
        if not isinstance(categories, list) or not all(c in CATEGORIES for c in categories):
            raise ValueError(f"categories: a list of {', '.join(CATEGORIES)}")
        languages = p.get("languages", list(LANGUAGES))
        if not isinstance(languages, list) or not all(lang in LANGUAGES for lang in languages):
            raise ValueError("languages: a list of en, ko")
        min_score = p.get("min_score", 0.5)
        if not isinstance(min_score, (int, float)) or not 0.0 <= float(min_score) <= 1.0:
            raise ValueError("min_score: a number between 0 and 1")
        self.categories: tuple[str, ...] = tuple(categories)
        self.languages = frozenset(languages)
        self.min_score = float(min_score)
        self._anchors = {c: terms.ANCHORS[c] for c in self.categories}
        # one pass over the text finds every anchor; categories without one are skipped
        self._anchor_set = LiteralSet(a for c in self.categories for a in self._anchors[c])
        # and one more finds the patterns' own literals: a pattern none of whose literals
        # occurs cannot match (:func:`auditor.detectors._literals.necessary_literals_by_case`)
        self._pattern_needles = LiteralSet(
            n for c in self.categories for p in _PATTERNS[c] if p.needles for n in p.needles
        )
        # (the case-sensitive ones, looked for in the text as it is)
        self._cased_needles = LiteralSet(
            n for c in self.categories for p in _PATTERNS[c] for n in p.cased_needles
        )

    def prefilter_needles(self) -> Mapping[str, Needles]:
        """One part: the anchors of the categories looked for (no anchor, no pattern runs)."""
        return {"anchors": Needles.of(self._anchor_set.words)}

    def analyze(self, memory: MemoryView, ctx: DetectContext) -> list[Detection]:
        """Special-category data in one memory's fact.

        Args:
            memory: the memory.
            ctx: the scan context; ``ctx.consents`` marks detections the subject consented to.

        Returns:
            One detection per category found.
        """
        text = memory.fact
        lower = text.lower()
        has_hangul = _HANGUL.search(text) is not None
        consented = ctx.consents.get(memory.subject, frozenset())
        doc = _Text(text)
        detections: list[Detection] = []
        present = self._anchor_set.present(lower)
        if not present:
            return detections
        literals = _Literals(self._pattern_needles.present(fold(text)), self._cased_needles, text)
        for category in self.categories:
            if present.isdisjoint(self._anchors[category]):
                continue
            kept: list[_Hit] = []
            dropped: set[str] = set()
            for pattern in _PATTERNS[category]:
                if pattern.language not in self.languages or pattern.score < self.min_score:
                    continue
                if pattern.language == "ko" and not has_hangul:
                    continue
                if not literals.may_match(pattern):
                    continue
                for m in pattern.regex.finditer(text):
                    hit = doc.scored(pattern, m.start(), m.end())
                    if hit.score < self.min_score:
                        continue
                    reason = doc.excluded(hit, _EXCLUSIONS[category])
                    if reason is None:
                        kept.append(hit)
                    else:
                        dropped.add(reason)
                    if len(kept) >= MAX_HITS_PER_CATEGORY:
                        break
                if len(kept) >= MAX_HITS_PER_CATEGORY:
                    break
            if kept:
                detections.append(
                    self._detection(memory, category, kept, dropped, category in consented)
                )
        return detections

    def _detection(
        self,
        memory: MemoryView,
        category: str,
        hits: list[_Hit],
        dropped: set[str],
        allowed: bool,
    ) -> Detection:
        hits = sorted(hits, key=lambda h: (h.start, -h.end))
        spans: list[Span] = []
        for hit in hits:  # merge overlapping spans
            if spans and hit.start < spans[-1].end:
                last = spans[-1]
                spans[-1] = Span(last.start, max(last.end, hit.end), category)
            else:
                spans.append(Span(hit.start, hit.end, category))
        score = max(h.score for h in hits)
        pattern_ids = sorted({f"{h.pattern.language}:{h.pattern.id}" for h in hits})
        languages = sorted({h.pattern.language for h in hits})
        reason = (
            f"Special category '{category}' ({ARTICLE[category]}) indicated by "
            f"{len(hits)} match(es) of pattern(s) {', '.join(pattern_ids)} "
            f"(score {score:.2f}); the matched words are not repeated here."
        )
        if allowed:
            reason += " The subject explicitly opted in to this category: allowed by consent."
        details: dict[str, Any] = {
            "category": category,
            "article": ARTICLE[category],
            "patterns": pattern_ids,
            "languages": languages,
            "matches": len(hits),
            "about_a_person": any(h.about_person for h in hits),
            "allowed_by_consent": allowed,
        }
        if dropped:
            details["excluded_look_alikes"] = sorted(dropped)
        return Detection(
            memory_ids=(memory.memory_id,),
            detector=self.name,
            entity=category,
            score=score,
            reason=reason,
            spans=tuple(spans),
            details=details,
        )
