"""Data for :mod:`auditor.detectors.special_categories`: patterns per category and language.

GDPR article 9 special categories (health, religion or belief, political opinion, sexual
orientation and sex life, racial or ethnic origin, trade-union membership, genetic and
biometric data) and article 10 criminal records, in English and Korean.

The rows live in data files beside this module (their headers give the rules):
``data/special_terms.yaml`` (fragments, patterns, exclusions, person cues, anchors),
``data/special_patterns.yaml`` (more patterns, each with its own anchors) and
``data/special_frames.yaml`` (description cues and experiencers). They are read once, at
import, with the bounded YAML loader; a malformed file stops the import with a
:class:`ValueError` that names the file and the entry.

Rows, all plain data compiled once by the detector:

* :data:`PATTERNS`: ``(category, language, pattern id, regex, score)``. English regexes are
  compiled case-insensitively (``(?-i:...)`` marks the parts where case matters); a pattern
  says something *about a person* ("diagnosed with", "votes Labour", "goes to church"),
  not merely a topic word ("party", "religion", "healthy").
* :data:`EXCLUSIONS`: ``(category, exclusion id, regex, scope)``: benign look-alikes.
  ``overlap``: a hit overlapping the exclusion's match is dropped ("the Great Depression",
  "European Union"); ``sentence``: a hit in the same sentence as the exclusion is dropped
  ("SSH key fingerprint", "probation period at the new job").
* :data:`ANCHORS`: lower-case literals per category; a category's patterns run only when
  the text contains one of them (every pattern's match contains an anchor; the tests keep
  this honest).

Scores: 0.85 an explicit statement (diagnosis, membership, conviction), 0.75 a strong
indicator (a medication, a practice), 0.6 a weaker one (an observance, a sick leave).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from auditor import safe_yaml
from auditor.vocab import SPECIAL_CATEGORIES

__all__ = [
    "ANCHORS",
    "CATEGORIES",
    "ATTRIBUTE_NAMES",
    "DESCRIPTION_CUES",
    "EXPERIENCERS",
    "EXCLUSIONS",
    "PATTERNS",
    "PERSON_CUES_EN",
    "PERSON_CUES_KO",
    "TOPIC_PENALTY",
    "TOPIC_PRONE",
]

CATEGORIES = SPECIAL_CATEGORIES
#: A topic-prone pattern's score drops by this much without a person cue in the sentence.
TOPIC_PENALTY = 0.35

_DATA_DIR = Path(__file__).with_name("data")
_LANGUAGES = ("en", "ko")
_SCOPES = ("overlap", "sentence")
_FRAGMENT_REF = re.compile(r"\{([A-Z][A-Z0-9_]*)\}")

Row = tuple[str, str, str, str, float]


def _load_yaml(name: str) -> dict[str, Any]:
    loaded = safe_yaml.load_file(_DATA_DIR / name, where=name)
    if not isinstance(loaded, dict):
        raise ValueError(f"{name}: a mapping expected")
    return loaded


def _get(row: dict[str, Any], key: str, where: str) -> Any:
    if key not in row:
        raise ValueError(f"{where} lacks {key!r}")
    return row[key]


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{where}: a non-empty string expected, got {value!r}")
    return value


def _words(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{where}: a non-empty list of strings expected")
    return tuple(_text(v, f"{where}[{i}]") for i, v in enumerate(value))


def _joined(source: str) -> str:
    """A multi-line regex of a data file as one line (lines are stripped, then joined)."""
    return "".join(line.strip() for line in source.splitlines())


def _fragments(doc: dict[str, Any], name: str) -> dict[str, str]:
    raw = doc.get("fragments") or {}
    if not isinstance(raw, dict):
        raise ValueError(f"{name}: fragments: a mapping expected")
    fragments = {str(k): _joined(_text(v, f"{name}: fragment {k}")) for k, v in raw.items()}
    for key, source in fragments.items():
        if nested := _FRAGMENT_REF.search(source):
            raise ValueError(f"{name}: fragment {key} refers to {nested.group(0)} (no nesting)")
    return fragments


def _regex(value: Any, where: str, fragments: dict[str, str]) -> str:
    def expand(match: re.Match[str]) -> str:
        if match.group(1) not in fragments:
            raise ValueError(f"{where}: unknown fragment {match.group(0)}")
        return fragments[match.group(1)]

    return _FRAGMENT_REF.sub(expand, _joined(_text(value, f"{where}: regex")))


def _checked(regex: str, where: str) -> str:
    """``regex`` once it compiles (as the detector compiles it, so re's cache serves both)."""
    try:
        re.compile(regex, re.IGNORECASE)
    except re.error as exc:
        raise ValueError(f"{where}: invalid regex: {exc}") from None
    return regex


def _rows(doc: dict[str, Any], name: str, key: str) -> list[dict[str, Any]]:
    rows = doc.get(key)
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ValueError(f"{name}: {key}: a list of mappings expected")
    return rows


def _pattern(row: dict[str, Any], where: str, fragments: dict[str, str]) -> Row:
    """(category, language, id, regex, score) of one pattern row."""
    where = f"{where} {row.get('id', '?')!r}"
    category = _text(_get(row, "category", where), f"{where}: category")
    language = _text(_get(row, "language", where), f"{where}: language")
    if category not in CATEGORIES or language not in _LANGUAGES:
        raise ValueError(f"{where}: bad category or language ({category}, {language})")
    score = _get(row, "score", where)
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
        raise ValueError(f"{where}: score must be a number in 0..1, got {score!r}")
    if not isinstance(row.get("topic_prone", False), bool):
        raise ValueError(f"{where}: topic_prone must be true or false")
    regex = _checked(_regex(_get(row, "regex", where), where, fragments), where)
    return category, language, _text(row["id"], f"{where}: id"), regex, float(score)


def _terms() -> tuple[
    tuple[Row, ...],
    tuple[tuple[str, str, str, str], ...],
    frozenset[tuple[str, str, str]],
    str,
    str,
    dict[str, tuple[str, ...]],
]:
    """Rows of ``data/special_terms.yaml``: patterns, exclusions, topic-prone ids, cues, anchors."""
    name = "special_terms.yaml"
    doc = _load_yaml(name)
    fragments = _fragments(doc, name)
    known = {"category", "language", "id", "score", "topic_prone", "regex"}
    rows: list[Row] = []
    prone: set[tuple[str, str, str]] = set()
    for row in _rows(doc, name, "patterns"):
        if extra := sorted(set(row) - known):
            raise ValueError(f"{name}: pattern {row.get('id')!r}: unknown key(s) {extra}")
        rows.append(_pattern(row, f"{name}: pattern", fragments))
        if row.get("topic_prone"):
            prone.add(rows[-1][:3])
    exclusions: list[tuple[str, str, str, str]] = []
    for row in _rows(doc, name, "exclusions"):
        where = f"{name}: exclusion {row.get('id', '?')!r}"
        category = _text(_get(row, "category", where), f"{where}: category")
        scope = _get(row, "scope", where)
        if category not in CATEGORIES or scope not in _SCOPES:
            raise ValueError(f"{where}: bad category or scope ({category}, {scope})")
        regex = _checked(_regex(_get(row, "regex", where), where, fragments), where)
        exclusions.append((category, _text(row["id"], f"{where}: id"), regex, scope))
    cues = doc.get("person_cues")
    if not isinstance(cues, dict):
        raise ValueError(f"{name}: person_cues: a mapping of en and ko expected")
    cue_en = _regex(_get(cues, "en", f"{name}: person_cues"), f"{name}: person_cues.en", {})
    cue_ko = _regex(_get(cues, "ko", f"{name}: person_cues"), f"{name}: person_cues.ko", {})
    raw_anchors = doc.get("anchors")
    if not isinstance(raw_anchors, dict) or set(raw_anchors) != set(CATEGORIES):
        raise ValueError(f"{name}: anchors: one list per category expected")
    anchors = {str(c): _words(a, f"{name}: anchors.{c}") for c, a in raw_anchors.items()}
    return tuple(rows), tuple(exclusions), frozenset(prone), cue_en, cue_ko, anchors


def _extra_patterns() -> tuple[
    tuple[Row, ...],
    frozenset[tuple[str, str, str]],
    dict[str, tuple[str, ...]],
]:
    """Rows of ``data/special_patterns.yaml``: patterns, topic-prone ids, extra anchors."""
    name = "special_patterns.yaml"
    rows: list[Row] = []
    prone: set[tuple[str, str, str]] = set()
    anchors: dict[str, list[str]] = {}
    known = {"category", "language", "id", "score", "topic_prone", "anchors", "regex"}
    for row in _rows(_load_yaml(name), name, "patterns"):
        if extra := sorted(set(row) - known):
            raise ValueError(f"{name}: pattern {row.get('id')!r}: unknown key(s) {extra}")
        rows.append(_pattern(row, f"{name}: pattern", {}))
        category = rows[-1][0]
        if row.get("topic_prone"):
            prone.add(rows[-1][:3])
        where = f"{name}: pattern {row['id']!r}: anchors"
        anchors.setdefault(category, []).extend(
            a.lower() for a in _words(row.get("anchors"), where)
        )
    return tuple(rows), frozenset(prone), {c: tuple(a) for c, a in anchors.items()}


_ROWS, _EXCLUSIONS, _PRONE, _CUES_EN, _CUES_KO, _ANCHORS = _terms()
_EXTRA_ROWS, _EXTRA_PRONE, _EXTRA_ANCHORS = _extra_patterns()

#: (category, language, pattern id, regex, score): the rows of special_terms.yaml, then those
#: of special_patterns.yaml.
PATTERNS: tuple[Row, ...] = _ROWS + _EXTRA_ROWS
#: (category, exclusion id, regex, scope) of benign look-alikes.
EXCLUSIONS: tuple[tuple[str, str, str, str], ...] = _EXCLUSIONS
#: Patterns that also fit a text *about a topic* ("advances in cancer treatment", "insulin
#: is a hormone"): without a person cue in the sentence their score drops by
#: :data:`TOPIC_PENALTY` (below the default threshold).
TOPIC_PRONE: frozenset[tuple[str, str, str]] = _PRONE | _EXTRA_PRONE
#: Words that make a sentence about a person (the subject, a relative, someone named), or a
#: sentence that opens with a verb (memory facts often drop the subject: "Takes insulin").
PERSON_CUES_EN = _CUES_EN
PERSON_CUES_KO = _CUES_KO
#: Lower-case literals, one of which every match of the category contains (prefilter).
ANCHORS: dict[str, tuple[str, ...]] = {c: _ANCHORS[c] + _EXTRA_ANCHORS.get(c, ()) for c in _ANCHORS}

_FRAMES = _load_yaml("special_frames.yaml")
#: Sentences that describe a thing (an app, a paper, a market) rather than a person's state.
DESCRIPTION_CUES: dict[str, str] = {k: str(v) for k, v in _FRAMES["description_cues"].items()}
#: Singular experiencers: with one in the sentence, a description cue does not cancel a hit.
EXPERIENCERS: dict[str, str] = {k: str(v) for k, v in _FRAMES["experiencers"].items()}
#: Names of protected attributes per language (a list of them is a policy, not a person).
ATTRIBUTE_NAMES: dict[str, str] = {k: str(v) for k, v in _FRAMES["attribute_names"].items()}
