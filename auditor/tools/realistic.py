"""Realistic benchmark stores: texts from the *train* splits of the labelled corpora.

The synthetic store (:mod:`auditor.tools.synthetic`) is made of short, uniform template sentences;
real stores are not. This module builds a store of any size from the texts of the public
labelled corpora (``shared/eval`` and ``shared/train``: chat observations, tool outputs, API
responses, web and document snippets, configuration files and logs, Korean and English,
from a few characters up to several KB), drawing **only memories of the train split**
(:mod:`auditor.tools.splits`), so that a benchmark never touches a text that is kept for
scoring.

The texts are replicated to the requested size with new memory ids, new subjects (a
long-tailed number of memories per subject: many small subjects, a few large ones) and new
timestamps. Source type, kind, category and URI are kept from the original record (they
decide the trust tier and so which rules apply). Every text appears at most once per
"pass" over the shuffled pool; from the second pass on, a copy carries a short neutral
tag (`` [ab]``) so that its content hash differs: detectors cache work by content hash, and
a store that repeated the same few thousand texts verbatim would measure those caches
rather than the detectors. Everything is drawn from one seeded generator: the same
arguments and the same corpus files always give the same records.

The corpora are found at ``root`` (an argument), else ``$MEMAUDIT_CORPORA_DIR``, else
``../shared`` next to the repository checkout (the wheel does not carry them): the folders
``eval`` and ``train`` under it, or corpus folders directly under it.
"""

from __future__ import annotations

import json
import os
import random
import statistics
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from auditor.errors import InputError
from auditor.tools.splits import corpus_folders, split_of_corpus

__all__ = [
    "ENV_VAR",
    "CorporaMissing",
    "PoolText",
    "corpora_roots",
    "default_root",
    "describe",
    "realistic_records",
    "subject_sizes",
    "train_pool",
    "write_realistic",
]

#: environment variable naming the folder that holds ``eval/`` and ``train/``
ENV_VAR = "MEMAUDIT_CORPORA_DIR"
_SOURCE_TYPES = frozenset({"explicit_statement", "inferred", "external_content", "tool_output"})
_TAG_LETTERS = "abcdefghijklmnopqrstuvwxyz"
#: Pareto shape and scale of the memories-per-subject distribution (long tail)
_ALPHA, _SCALE = 1.2, 3.0


class CorporaMissing(InputError):
    """The labelled corpora the realistic store is drawn from are not there."""


@dataclass(frozen=True, slots=True)
class PoolText:
    """One train-split memory of a labelled corpus: the text and what decides its tier."""

    corpus: str
    memory_id: str
    fact: str
    source_type: str
    kind: str
    category: str
    uri: str | None


def default_root() -> Path:
    """``$MEMAUDIT_CORPORA_DIR``, else ``../shared`` next to the repository checkout."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2].parent / "shared"


def corpora_roots(root: Path | None = None) -> list[Path]:
    """The folders to look for corpora in (``root/eval``, ``root/train``, or ``root``).

    Raises:
        CorporaMissing: nothing there holds a labelled corpus; the message says where it
            looked and how to point at them.
    """
    base = root if root is not None else default_root()
    roots = [base / sub for sub in ("eval", "train") if (base / sub).is_dir()]
    if not roots and base.is_dir():
        roots = [base]
    if not roots or not corpus_folders(roots):
        raise CorporaMissing(
            f"no labelled corpora under {base} (expected {base}/eval and/or {base}/train with "
            f"<corpus>/memories.jsonl + labels.json): the realistic corpus is built from a "
            f"checkout's ../shared folder; point at it with {ENV_VAR}=DIR or the corpora "
            f"argument"
        )
    return roots


def _pool_text(folder: Path, rec: dict[str, Any]) -> PoolText | None:
    fact = rec.get("fact")
    if not isinstance(fact, str) or not fact.strip():
        return None
    raw = rec.get("source")
    source: dict[str, Any] = raw if isinstance(raw, dict) else {}
    src = str(source.get("type") or "explicit_statement")
    if src not in _SOURCE_TYPES:
        src = "explicit_statement"
    return PoolText(
        corpus=folder.name,
        memory_id=str(rec["memory_id"]),
        fact=fact,
        source_type=src,
        kind=str(rec.get("kind") or "semantic"),
        category=str(rec.get("category") or "note"),
        uri=source.get("uri") if isinstance(source.get("uri"), str) else None,
    )


def train_pool(roots: Sequence[Path]) -> list[PoolText]:
    """Every train-split memory with a non-empty fact, in a stable order (folder, file line).

    The split of a corpus comes from the recorded assignment (``splits.json``) when it knows
    the corpus, else from the same keyed hash (:func:`auditor.tools.splits.split_of_corpus`).
    """
    pool: list[PoolText] = []
    for folder in sorted(corpus_folders(roots), key=lambda p: (p.name, str(p))):
        splits, _recorded = split_of_corpus(folder)
        with (folder / "memories.jsonl").open(encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                rec = json.loads(line)
                if splits.get(str(rec.get("memory_id"))) != "train":
                    continue
                item = _pool_text(folder, rec)
                if item is not None:
                    pool.append(item)
    return pool


def subject_sizes(n: int, rng: random.Random, cap: int | None = None) -> list[int]:
    """Memories per subject, summing to ``n``: Pareto-distributed (many small, a few large).

    Args:
        n: the total number of memories.
        rng: the seeded generator.
        cap: the largest subject (default: ``n // 20``, at least 50 and at most 2,000).
    """
    limit = cap if cap is not None else max(50, min(2000, n // 20))
    sizes: list[int] = []
    left = n
    while left > 0:
        size = min(limit, left, max(1, int(_SCALE * rng.paretovariate(_ALPHA))))
        sizes.append(size)
        left -= size
    return sizes


def _tag(k: int) -> str:
    letters = ""
    while True:
        k, r = divmod(k, len(_TAG_LETTERS))
        letters = _TAG_LETTERS[r] + letters
        if k == 0:
            return letters
        k -= 1


def realistic_records(
    n: int,
    seed: int = 7,
    root: Path | None = None,
    pool: Sequence[PoolText] | None = None,
) -> Iterator[dict[str, Any]]:
    """``n`` canonical records whose texts are train-split memories of the labelled corpora.

    Args:
        n: how many records.
        seed: the generator's seed (same seed and corpora, same records).
        root: where the corpora are (see :func:`default_root`); ignored when ``pool`` is given.
        pool: the texts to draw from (default: :func:`train_pool` of the corpora at ``root``).

    Raises:
        CorporaMissing: no corpora at ``root``, or none with a train-split memory.
    """
    texts = list(pool) if pool is not None else train_pool(corpora_roots(root))
    if not texts:
        raise CorporaMissing("the labelled corpora hold no train-split memory to draw from")
    rng = random.Random(seed)
    order = list(range(len(texts)))
    rng.shuffle(order)
    base = datetime(2026, 1, 1, tzinfo=UTC)
    i = 0
    for subject_no, size in enumerate(subject_sizes(n, rng)):
        for _ in range(size):
            copy, at = divmod(i, len(order))
            item = texts[order[at]]
            fact = item.fact if copy == 0 else f"{item.fact} [{_tag(copy - 1)}]"
            created = base + timedelta(minutes=17 * i)
            yield {
                "memory_id": f"rl_{i:08d}",
                "subject": f"user:r{subject_no:06d}",
                "namespace": item.corpus,
                "kind": item.kind,
                "category": item.category,
                "fact": fact,
                "confidence": 0.8,
                "source": {
                    "type": item.source_type,
                    "session_id": f"s{i // 7}",
                    "turn": i % 7,
                    "uri": item.uri,
                },
                "created_at": created.isoformat(),
                "updated_at": created.isoformat(),
                "access_count": rng.randint(0, 30),
            }
            i += 1


def write_realistic(
    path: Path,
    n: int,
    seed: int = 7,
    root: Path | None = None,
    pool: Sequence[PoolText] | None = None,
) -> Path:
    """Write ``n`` realistic records as JSONL (see :func:`realistic_records`)."""
    with path.open("w", encoding="utf-8") as fh:
        for rec in realistic_records(n, seed, root, pool):
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    return path


def _is_hangul(ch: str) -> bool:
    return "\uac00" <= ch <= "\ud7a3"


def describe(facts: Sequence[str]) -> dict[str, float]:
    """Length statistics of some texts: count, MB (UTF-8), mean / median / p90 / max chars,
    and the share that contains Hangul."""
    if not facts:
        return {
            "count": 0,
            "mb": 0.0,
            "mean": 0.0,
            "median": 0.0,
            "p90": 0.0,
            "max": 0.0,
            "korean_share": 0.0,
        }
    lengths = sorted(len(f) for f in facts)
    korean = sum(1 for f in facts if any(_is_hangul(ch) for ch in f))
    return {
        "count": float(len(facts)),
        "mb": sum(len(f.encode("utf-8")) for f in facts) / 1e6,
        "mean": statistics.fmean(lengths),
        "median": float(lengths[len(lengths) // 2]),
        "p90": float(lengths[min(len(lengths) - 1, int(len(lengths) * 0.9))]),
        "max": float(lengths[-1]),
        "korean_share": korean / len(facts),
    }
