"""``memaudit eval``: precision, recall and F1 of the rule pack on a labelled corpus.

A corpus is a folder with ``memories.jsonl`` (canonical records) and ``labels.json`` (the
format of ``shared/eval/README.md``). Per-memory labels are scored per label over positives
and negatives (ignored memories are left out); contradictions are scored as unordered pairs.
The false-alarm rate is the share of the negatives that were flagged.

By default only the corpus's **test split** is scored (:mod:`auditor.tools.splits`): the
rule pack's patterns, word lists, thresholds and models are fitted on train and dev only,
so a figure on them would flatter. ``split="all"`` scores the whole corpus.

For contradiction pairs, *candidate recall* is reported beside pair precision and recall
when a candidate generator is given: the share of labelled conflicting pairs that reached
the verdict step (or the LLM judge) at all. A pair that never becomes a candidate cannot be
found by any verdict, however good.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from auditor.config import Settings
from auditor.detectors.base import DetectContext, MemoryView
from auditor.errors import InputError
from auditor.records import parse_record
from auditor.rulepack.engine import Engine, Hit
from auditor.sources.files.jsonl import JsonlSource
from auditor.tools.splits import SPLITS, split_of_corpus

__all__ = [
    "CATEGORY_LABEL",
    "SPLIT_CHOICES",
    "CandidateFn",
    "EvalReport",
    "LabelScore",
    "engine_candidates",
    "evaluate_corpus",
    "load_corpus",
]

#: what ``--split`` accepts
SPLIT_CHOICES = (*SPLITS, "all")
#: memories of one corpus -> the pairs that reach the contradiction verdict step
CandidateFn = Callable[[Sequence[MemoryView]], set[frozenset[str]]]

#: the labels' lists of memory pairs (a split keeps a pair whole or leaves it out)
PAIR_KEYS = ("contradictions", "non_contradictions", "duplicates", "non_duplicates")
#: finding category -> corpus label
CATEGORY_LABEL = {
    "injection": "injection",
    "sensitive": "sensitive",
    "secret": "secret",
    "lifecycle": "lifecycle",
    "expired": "expired",
    "trust": "trust",
}


@dataclass
class LabelScore:
    """Scores of one label (or of contradiction pairs)."""

    label: str
    positives: int
    negatives: int
    tp: int
    fp: int
    fn: int
    misses: list[str] = field(default_factory=list)
    false_alarms: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def false_alarm_rate(self) -> float:
        return self.fp / self.negatives if self.negatives else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "positives": self.positives,
            "negatives": self.negatives,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
            "false_alarm_rate": round(self.false_alarm_rate, 4),
            "misses": self.misses,
            "false_alarms": self.false_alarms,
        }


@dataclass
class EvalReport:
    """What ``memaudit eval`` prints for one corpus."""

    corpus: str
    memories: int
    scores: list[LabelScore]
    seconds: float
    errors: int
    rules_fired: dict[str, int]
    split: str = "all"
    #: the split came from the recorded assignment (False: computed for an unknown corpus)
    split_recorded: bool = True
    #: share of labelled conflicting pairs that reached the verdict step, if measured
    candidate_recall: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "corpus": self.corpus,
            "split": self.split,
            "split_recorded": self.split_recorded,
            "memories": self.memories,
            "candidate_recall": (
                None if self.candidate_recall is None else round(self.candidate_recall, 4)
            ),
            "seconds": round(self.seconds, 3),
            "memories_per_second": round(self.memories / self.seconds, 1) if self.seconds else None,
            "detector_errors": self.errors,
            "rules_fired": self.rules_fired,
            "scores": [s.as_dict() for s in self.scores],
        }


def load_corpus(folder: Path, settings: Settings) -> tuple[list[MemoryView], dict[str, Any]]:
    """The corpus's memories (as views) and labels.

    Raises:
        InputError: the folder lacks ``memories.jsonl`` or ``labels.json``, or a record is bad.
    """
    mem_path, label_path = folder / "memories.jsonl", folder / "labels.json"
    for p in (mem_path, label_path):
        if not p.is_file():
            raise InputError(f"{folder}: not a labelled corpus (missing {p.name})")
    views: list[MemoryView] = []
    stated: set[str] = set()  # memories whose record states a status
    for item in JsonlSource(mem_path, settings).items():
        if item.error:
            raise InputError(f"{mem_path}: {item.location}: {item.error}")
        if item.raw is None:
            continue
        view = MemoryView.from_record(parse_record(item.raw, item.location, settings), settings)
        views.append(view)
        if item.raw.get("status") is not None:
            stated.add(view.memory_id)
    # as the importer does: a record without a status that another supersedes is superseded
    replaced = {v.supersedes for v in views if v.supersedes} - stated
    views = [
        dataclasses.replace(v, status="superseded")
        if v.memory_id in replaced and v.status == "active"
        else v
        for v in views
    ]
    try:
        labels = json.loads(label_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{label_path}: cannot read labels: {exc}") from None
    return views, labels


def _pairs(hits: Sequence[Hit], category: str = "contradiction") -> set[frozenset[str]]:
    return {
        frozenset(h.detection.memory_ids[:2])
        for h in hits
        if h.rule.category == category and len(set(h.detection.memory_ids)) >= 2
    }


def _in_split(
    folder: Path, views: list[MemoryView], labels: dict[str, Any], split: str
) -> tuple[list[MemoryView], dict[str, Any], bool]:
    """The views and labels of one split (pairs are never cut: they share a split)."""
    if split == "all":
        return views, labels, True
    if split not in SPLITS:
        raise InputError(f"unknown split {split!r}: choose one of {', '.join(SPLIT_CHOICES)}")
    assignment, recorded = split_of_corpus(folder)
    keep = {mid for mid, s in assignment.items() if s == split}
    sub = dict(labels)
    sub["memory_labels"] = {
        k: v for k, v in (labels.get("memory_labels") or {}).items() if k in keep
    }
    for key in PAIR_KEYS:
        sub[key] = [p for p in labels.get(key) or [] if all(m in keep for m in p)]
    return [v for v in views if v.memory_id in keep], sub, recorded


def engine_candidates(engine: Engine) -> CandidateFn | None:
    """The contradiction candidate pairs of the engine's contradiction rules, or None.

    Every distinct parameter set of the ``contradiction`` detector among the engine's rules
    contributes its candidates (a pair is a candidate if any rule would compare it).
    """
    from auditor.detectors.contradiction import candidate_pairs

    params = [dict(g.params) for g in engine.subject_groups if g.name == "contradiction"]
    if not params:
        return None

    def candidates(views: Sequence[MemoryView]) -> set[frozenset[str]]:
        found: set[frozenset[str]] = set()
        for p in params:
            found |= candidate_pairs(views, p)
        return found

    return candidates


def evaluate_corpus(
    folder: Path,
    engine: Engine,
    settings: Settings,
    now: datetime | None = None,
    *,
    split: str = "test",
    candidates: CandidateFn | None = None,
) -> EvalReport:
    """Run ``engine`` over one split of the corpus and score it against the labels.

    ``candidates`` defaults to the engine's own contradiction candidates
    (:func:`engine_candidates`).

    Raises:
        InputError: the folder is not a labelled corpus, or ``split`` is unknown.
    """
    views, labels = load_corpus(folder, settings)
    views, labels, recorded = _in_split(folder, views, labels, split)
    ctx = DetectContext(now=now or datetime.now(UTC), settings=settings)
    started = time.perf_counter()
    hits, errors = engine.run(views, ctx)
    seconds = time.perf_counter() - started
    ids = {v.memory_id for v in views}
    ignore = set(labels.get("ignore", []))
    memory_labels: dict[str, list[str]] = labels.get("memory_labels", {})
    scored = labels.get("notes", {}).get("scored_labels") or sorted(
        {lab for labs in memory_labels.values() for lab in labs}
    )
    flagged, fired = _flagged_and_fired(hits)
    scores = _label_scores(scored, memory_labels, ids, ignore, flagged)
    gold = {frozenset(p) for p in labels.get("contradictions", [])}
    candidate_recall: float | None = None
    if candidates is None:
        candidates = engine_candidates(engine)
    if gold and candidates is not None:
        candidate_recall = len(candidates(views) & gold) / len(gold)
    if gold or labels.get("non_contradictions"):
        scores.append(_pair_score(hits, gold, labels))
    if labels.get("duplicates") or labels.get("non_duplicates"):
        scores.append(_duplicate_score(hits, labels))
    return EvalReport(
        folder.name,
        len(views),
        scores,
        seconds,
        len(errors),
        fired,
        split=split,
        split_recorded=recorded,
        candidate_recall=candidate_recall,
    )


def _flagged_and_fired(hits: Sequence[Hit]) -> tuple[dict[str, set[str]], dict[str, int]]:
    """Corpus label -> the memories flagged with it, and rule id -> how often it fired."""
    flagged: dict[str, set[str]] = {}
    fired: dict[str, int] = {}
    for h in hits:
        fired[h.rule.id] = fired.get(h.rule.id, 0) + 1
        label = CATEGORY_LABEL.get(h.rule.category)
        if label:
            flagged.setdefault(label, set()).update(h.detection.memory_ids)
    return flagged, fired


def _label_scores(
    scored: Sequence[str],
    memory_labels: dict[str, list[str]],
    ids: set[str],
    ignore: set[str],
    flagged: dict[str, set[str]],
) -> list[LabelScore]:
    """The score of each per-memory label (contradictions are scored as pairs)."""
    scores: list[LabelScore] = []
    for label in scored:
        if label == "contradiction":
            continue
        positives = {i for i, labs in memory_labels.items() if label in labs and i in ids}
        negatives = ids - positives - ignore
        got = flagged.get(label, set()) - ignore
        scores.append(
            LabelScore(
                label,
                len(positives),
                len(negatives),
                tp=len(got & positives),
                fp=len(got & negatives),
                fn=len(positives - got),
                misses=sorted(positives - got),
                false_alarms=sorted(got & negatives),
            )
        )
    return scores


def _pair_score(
    hits: Sequence[Hit], gold: set[frozenset[str]], labels: dict[str, Any]
) -> LabelScore:
    """The score of the reported contradiction pairs against the labelled ones."""
    non = {frozenset(p) for p in labels.get("non_contradictions", [])}
    return _scored_pairs("contradiction_pairs", _pairs(hits), gold, non)


def _duplicate_score(hits: Sequence[Hit], labels: dict[str, Any]) -> LabelScore:
    """The score of the reported near-duplicate pairs against the labelled ones.

    A duplicate finding names the kept (newest) memory and the older copy: its pair is
    compared unordered. ``non_duplicates`` (pairs that must not be reported) are the
    negatives; any reported pair that is not a labelled duplicate counts as a false alarm.
    """
    gold = {frozenset(p) for p in labels.get("duplicates", [])}
    non = {frozenset(p) for p in labels.get("non_duplicates", [])}
    return _scored_pairs("duplicate_pairs", _pairs(hits, "duplicate"), gold, non)


def _scored_pairs(
    label: str,
    reported: set[frozenset[str]],
    gold: set[frozenset[str]],
    non: set[frozenset[str]],
) -> LabelScore:
    """Reported pairs against labelled ones (every reported pair not in ``gold`` is a false
    alarm; ``non`` only sizes the negatives)."""
    return LabelScore(
        label,
        len(gold),
        len(non),
        tp=len(reported & gold),
        fp=len(reported - gold),
        fn=len(gold - reported),
        misses=sorted("+".join(sorted(p)) for p in gold - reported),
        false_alarms=sorted("+".join(sorted(p)) for p in reported - gold),
    )
