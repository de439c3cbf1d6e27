"""Hand-over notes (``state.json``, SEEDS.md section 2) imported as memories.

The state importer (:mod:`auditor.sources.files.state`) turns every item of a note into a memory
whose ``extra`` carries ``state_section`` (``objective``, ``constraints``, ``decisions``,
``completed``, ``open_questions``, ``next_actions``, ``sources``), ``state_item_source``
(the item's evidence, null when missing), ``state_status`` and ``decision_id`` (decisions)
and ``checked_at`` (sources). Memories without ``state_section`` are ignored.

Entities:

* ``completed_without_evidence``: an item marked completed names no evidence source.
* ``source_unchecked``: a consulted source was never checked (``checked_at`` is null).
* ``source_missing``: a source path (or a completed item's evidence) no longer exists under
  ``params.source_root``. Off by default: the detector touches the filesystem only when
  ``params.check_paths`` is true and a root is configured, and never looks outside the root.
* ``decision_conflict``: two open decisions, or a decision and a constraint that is not
  older than it, cannot both hold. Offline heuristics, tuned for precision:

  - *negation*: one item negates a clause ("never post automatically", "do not use X",
    "자동으로 게시하지 말 것") whose content words all occur, un-negated, in the other;
  - *opposite value*: both fill the same slot with different values from one group of
    alternatives (:data:`VALUE_GROUPS`: PostgreSQL vs SQLite, npm vs pnpm, automatic vs
    manual, ...) and share enough of the rest of their wording.

Params:
    check_paths: look for source files under ``source_root`` (default false).
    source_root: the folder that source paths are relative to (required by ``check_paths``).
    closed_statuses: decision statuses that take a decision out of conflict checks (default:
        rejected, superseded, dropped, withdrawn, reverted, cancelled, canceled, obsolete).
    min_context_jaccard: least word overlap (Jaccard, values left out) of an opposite-value
        pair (default 0.3).
    same_namespace: compare only items of one note (namespace) (default true).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from auditor.detectors.base import DetectContext, Detection, Detector, MemoryView

__all__ = ["VALUE_GROUPS", "HandoverDetector"]

#: Section names as the importer writes them, and their singular category names.
_SECTION = {
    "objective": "objective",
    "constraints": "constraint",
    "constraint": "constraint",
    "decisions": "decision",
    "decision": "decision",
    "completed": "completed",
    "open_questions": "open_question",
    "open_question": "open_question",
    "next_actions": "next_action",
    "next_action": "next_action",
    "sources": "source",
    "source": "source",
}
DEFAULT_CLOSED = (
    "rejected",
    "superseded",
    "dropped",
    "withdrawn",
    "reverted",
    "cancelled",
    "canceled",
    "obsolete",
)

#: Groups of mutually exclusive values for one slot; a name maps aliases to one value.
VALUE_GROUPS: dict[str, dict[str, str]] = {
    "database": {
        "postgresql": "postgresql",
        "postgres": "postgresql",
        "mysql": "mysql",
        "mariadb": "mariadb",
        "sqlite": "sqlite",
        "mongodb": "mongodb",
        "mongo": "mongodb",
        "dynamodb": "dynamodb",
        "cassandra": "cassandra",
        "oracle": "oracle",
        "mssql": "mssql",
        "clickhouse": "clickhouse",
        "firestore": "firestore",
    },
    "language": {
        "python": "python",
        "golang": "go",
        "rust": "rust",
        "java": "java",
        "kotlin": "kotlin",
        "typescript": "typescript",
        "javascript": "javascript",
        "ruby": "ruby",
        "php": "php",
        "swift": "swift",
        "scala": "scala",
    },
    "package_manager": {
        "npm": "npm",
        "pnpm": "pnpm",
        "yarn": "yarn",
        "bun": "bun",
        "pip": "pip",
        "poetry": "poetry",
        "uv": "uv",
        "conda": "conda",
        "pipenv": "pipenv",
    },
    "cloud": {"aws": "aws", "gcp": "gcp", "azure": "azure"},
    "data_format": {
        "json": "json",
        "csv": "csv",
        "yaml": "yaml",
        "xml": "xml",
        "parquet": "parquet",
        "toml": "toml",
    },
    "frontend": {"react": "react", "vue": "vue", "angular": "angular", "svelte": "svelte"},
    "queue": {"kafka": "kafka", "rabbitmq": "rabbitmq", "sqs": "sqs", "nats": "nats"},
    "ci": {"jenkins": "jenkins", "circleci": "circleci", "travis": "travis"},
    "mode": {
        "automatic": "automatic",
        "automatically": "automatic",
        "auto": "automatic",
        "manual": "manual",
        "manually": "manual",
        "자동": "automatic",
        "자동으로": "automatic",
        "수동": "manual",
        "수동으로": "manual",
    },
    "timing": {
        "synchronous": "sync",
        "synchronously": "sync",
        "sync": "sync",
        "asynchronous": "async",
        "asynchronously": "async",
        "async": "async",
    },
    "visibility": {"public": "public", "private": "private", "공개": "public", "비공개": "private"},
}
_VALUE_OF: dict[str, tuple[str, str]] = {
    alias: (group, value) for group, table in VALUE_GROUPS.items() for alias, value in table.items()
}

#: English negations; the negated clause follows them.
_NEG_EN = re.compile(
    r"\b(never|do not|don't|does not|doesn't|must not|mustn't|should not|shouldn't|"
    r"will not|won't|cannot|can't|no longer|not|no|avoid|stop)\b",
    re.IGNORECASE,
)
#: Korean negations; the negated clause precedes them.
_NEG_KO = re.compile(r"(지\s*(?:않|말)|금지|하지\s*마)")
_CLAUSE_END = re.compile(r"[.:;,!?()\n]|\b(?:but|instead|rather|unless|except)\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9][a-z0-9_+#-]*|[가-힣]+")
STOPWORDS = frozenset(
    """a an the to of in on for by with and or is are be been being it its this that these those
    as at from into onto when then than first only all any each their our we i you they he she
    his her them us my your should must will can could would may might shall do does did has
    have had so such also just very more most less same other own out up down over under again
    once here there where which who whom what how why if else while until after before about
    via per without within between through new""".split()
)
_KO_ENDINGS = (
    "하지",
    "하기",
    "하고",
    "한다",
    "했다",
    "해야",
    "하는",
    "하면",
    "할",
    "함",
    "됨",
    "되면",
    "되는",
    "으로",
    "에서",
    "에게",
    "로",
    "에",
    "을",
    "를",
    "은",
    "는",
    "이",
    "가",
    "와",
    "과",
    "도",
    "만",
    "의",
    "지",
    "하",
)
_EN_SUFFIXES = ("ing", "ed", "es", "s")


def _stem(word: str) -> str:
    """A crude stem: English plural/tense endings, Korean particles and verb endings."""
    if "가" <= word[0] <= "힣":
        changed = True
        while changed and len(word) > 1:
            changed = False
            for end in _KO_ENDINGS:
                if word.endswith(end) and len(word) > len(end):
                    word = word[: -len(end)]
                    changed = True
                    break
        return word
    for suffix in _EN_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _content(text: str) -> set[str]:
    """Content-word stems of ``text`` (stopwords left out)."""
    return {_stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS}


def _values(text: str) -> dict[str, set[str]]:
    """Slot values mentioned in ``text``: group -> values."""
    found: dict[str, set[str]] = {}
    for w in _WORD.findall(text.lower()):
        hit = _VALUE_OF.get(w)
        if hit:
            found.setdefault(hit[0], set()).add(hit[1])
    return found


@dataclass(frozen=True)
class _Negated:
    word: str
    tokens: frozenset[str]


def _negations(text: str) -> list[_Negated]:
    """Negated clauses of ``text`` (English: after the negation; Korean: before it)."""
    out: list[_Negated] = []
    for m in _NEG_EN.finditer(text):
        rest = text[m.end() :]
        end = _CLAUSE_END.search(rest)
        clause = rest[: end.start()] if end else rest
        tokens = _content(clause)
        if tokens:
            out.append(_Negated(m.group(1).lower(), frozenset(tokens)))
    for m in _NEG_KO.finditer(text):
        before = text[: m.start()]
        starts = [p.end() for p in _CLAUSE_END.finditer(before)]
        clause = before[starts[-1] if starts else 0 :]
        tokens = _content(clause)
        if tokens:
            out.append(_Negated(m.group(1), frozenset(tokens)))
    return out


@dataclass(frozen=True)
class _Item:
    view: MemoryView
    section: str
    tokens: frozenset[str]
    values: Mapping[str, frozenset[str]]
    negations: tuple[_Negated, ...]

    @property
    def label(self) -> str:
        did = self.view.extra.get("decision_id")
        return f"{self.section} {did}" if did else f"{self.section} {self.view.memory_id}"


def _natural(text: str) -> tuple[Any, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


class HandoverDetector(Detector):
    """Problems in imported hand-over notes (see the module docstring).

    Raises:
        ValueError: a bad parameter (the message names it).
    """

    name = "handover"
    scope = "subject"

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        p = self.params
        self._check_paths = bool(p.get("check_paths", False))
        root = p.get("source_root")
        if root is not None and not isinstance(root, str):
            raise ValueError("source_root must be a folder path")
        if self._check_paths and not root:
            raise ValueError("source_root is required when check_paths is true")
        self._root = Path(root) if root else None
        closed = p.get("closed_statuses", list(DEFAULT_CLOSED))
        if not isinstance(closed, list) or not all(isinstance(s, str) for s in closed):
            raise ValueError("closed_statuses must be a list of statuses")
        self._closed = frozenset(s.lower() for s in closed)
        jac = p.get("min_context_jaccard", 0.3)
        if isinstance(jac, bool) or not isinstance(jac, int | float) or not 0 <= jac <= 1:
            raise ValueError("min_context_jaccard must be a number between 0 and 1")
        self._min_jaccard = float(jac)
        self._same_namespace = bool(p.get("same_namespace", True))

    def analyze_group(self, memories: Sequence[MemoryView], ctx: DetectContext) -> list[Detection]:
        """Hand-over problems among one subject's memories."""
        notes = [
            (m, _SECTION[str(m.extra["state_section"])])
            for m in memories
            if str(m.extra.get("state_section")) in _SECTION
        ]
        out: list[Detection] = []
        for m, section in sorted(notes, key=lambda x: x[0].memory_id):
            if section == "completed" and not _text(m.extra.get("state_item_source")):
                out.append(
                    self._simple(
                        m,
                        "completed_without_evidence",
                        0.9,
                        "an item marked completed names no evidence (no source, run log or file)",
                        {"section": section},
                    )
                )
            if section == "source" and not _text(m.extra.get("checked_at")):
                out.append(
                    self._simple(
                        m,
                        "source_unchecked",
                        0.8,
                        "a consulted source was never checked (checked_at is empty)",
                        {"section": section},
                    )
                )
            if self._check_paths:
                out.extend(self._missing(m, section))
        out.extend(self._conflicts([(m, s) for m, s in notes if s in ("decision", "constraint")]))
        return out

    # -- simple checks ----------------------------------------------------------------------

    def _simple(
        self, m: MemoryView, entity: str, score: float, reason: str, details: dict[str, Any]
    ) -> Detection:
        return Detection(
            memory_ids=(m.memory_id,),
            detector=self.name,
            entity=entity,
            score=score,
            reason=reason,
            details=details,
        )

    def _missing(self, m: MemoryView, section: str) -> Iterable[Detection]:
        """``source_missing`` for a source path or a completed item's evidence."""
        if self._root is None:
            return
        if section == "source":
            path = _text(m.extra.get("state_path")) or m.fact.split(": ", 1)[0]
        elif section == "completed":
            path = _text(m.extra.get("state_item_source"))
        else:
            return
        if not path or "://" in path:
            return
        path = path.split("#", 1)[0].strip()
        root = self._root.resolve()
        target = (root / path).resolve()
        if not path or not target.is_relative_to(root) or target.exists():
            return
        yield self._simple(
            m,
            "source_missing",
            0.85,
            f"the {section} names a file that is no longer under the source root",
            {"section": section, "path": path},
        )

    # -- decision conflicts -------------------------------------------------------------------

    def _conflicts(self, notes: Sequence[tuple[MemoryView, str]]) -> list[Detection]:
        items = [
            _Item(
                m,
                section,
                frozenset(_content(m.fact)),
                {g: frozenset(v) for g, v in _values(m.fact).items()},
                tuple(_negations(m.fact)),
            )
            for m, section in notes
            if not (
                section == "decision"
                and str(m.extra.get("state_status") or "").lower() in self._closed
            )
        ]
        items.sort(
            key=lambda it: (
                0 if it.section == "decision" else 1,
                _natural(str(it.view.extra.get("decision_id") or "")),
                it.view.memory_id,
            )
        )
        out: list[Detection] = []
        for i, a in enumerate(items):
            for b in items[i + 1 :]:
                if a.section == "constraint" and b.section == "constraint":
                    continue
                if self._same_namespace and a.view.namespace != b.view.namespace:
                    continue
                if not _constraint_not_older(a, b):
                    continue
                found = _negation_conflict(a, b) or self._value_conflict(a, b)
                if found:
                    kind, score, details = found
                    out.append(
                        Detection(
                            memory_ids=(a.view.memory_id, b.view.memory_id),
                            detector=self.name,
                            entity="decision_conflict",
                            score=score,
                            reason=f"{a.label} and {b.label} cannot both hold ({kind})",
                            details={
                                "kind": kind,
                                "items": [a.label, b.label],
                                **details,
                            },
                        )
                    )
        return out

    def _value_conflict(self, a: _Item, b: _Item) -> tuple[str, float, dict[str, Any]] | None:
        for group in sorted(set(a.values) & set(b.values)):
            va, vb = a.values[group], b.values[group]
            if not va.isdisjoint(vb):
                continue
            drop = set(VALUE_GROUPS[group]) | {_stem(v) for v in VALUE_GROUPS[group]}
            ta, tb = a.tokens - drop, b.tokens - drop
            union = ta | tb
            jac = len(ta & tb) / len(union) if union else 0.0
            if ta & tb and jac >= self._min_jaccard:
                return (
                    "opposite_value",
                    round(0.65 + 0.25 * jac, 3),
                    {
                        "slot": group,
                        "values": [sorted(va), sorted(vb)],
                        "context_jaccard": round(jac, 3),
                    },
                )
        return None


def _negation_conflict(a: _Item, b: _Item) -> tuple[str, float, dict[str, Any]] | None:
    """One item negates a clause that the other states (un-negated)."""
    for neg_item, other in ((a, b), (b, a)):
        for neg in neg_item.negations:
            needed = 1 if any(t in _VALUE_OF for t in neg.tokens) else 2
            if len(neg.tokens) < needed or not neg.tokens <= other.tokens:
                continue
            if any(neg.tokens <= o.tokens for o in other.negations):
                continue  # both negate it: they agree
            return (
                "negation",
                0.8,
                {
                    "negated_by": neg_item.label,
                    "negation": neg.word,
                    "shared_words": len(neg.tokens),
                },
            )
    return None


def _constraint_not_older(a: _Item, b: _Item) -> bool:
    """A decision conflicts with a constraint only when the constraint is not older."""
    pairs = [(a, b), (b, a)]
    for dec, con in pairs:
        if dec.section == "decision" and con.section == "constraint":
            d_at = dec.view.updated_at or dec.view.created_at
            c_at = con.view.updated_at or con.view.created_at
            return d_at is None or c_at is None or c_at >= d_at
    return True


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""
