"""Deterministic train / dev / test splits of the labelled corpora.

Every memory of every labelled corpus (``shared/eval`` and ``shared/train``) falls in one
split, decided by a keyed hash of its *group*, never by its label or text content:

* a memory is its own group, except that
* the two memories of a labelled pair (``contradictions`` / ``non_contradictions``) share
  one group, so a pair is never cut in two;
* the examples of one secret-scanner rule (``notes.rule[id].id``) share one group;
* a spliced memory (``notes.splice``) shares the group of its attack string
  (``attack_source`` + ``attack_origin``) and of its clean twin, and a stand-alone attack
  item whose normalised text is contained in a spliced memory joins that group too: the
  same 90 attack strings recur over hundreds of hosts, and a model that saw one of them in
  training must not be scored on it.

``bucket = sha256("memaudit-split-v1:" + group key) mod 100``: 0-59 train, 60-79 dev,
80-99 test. The assignment of the public corpora is recorded in ``splits.json`` beside this
module (regenerate with ``python -m auditor.tools.splits --write ROOT...``; a test checks
that the record and the function agree). Fit patterns, word lists, thresholds and models on
``train`` and ``dev`` only; report ``test``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "SPLITS",
    "Split",
    "compute_splits",
    "corpus_folders",
    "recorded_splits",
    "split_for_key",
    "split_of_corpus",
]

Split = Literal["train", "dev", "test"]
SPLITS: tuple[Split, ...] = ("train", "dev", "test")
SEED = "memaudit-split-v1"
#: upper bounds of the hash buckets (out of 100) of train and dev; the rest is test
TRAIN_BELOW, DEV_BELOW = 60, 80
RECORD = Path(__file__).with_name("splits.json")
#: shortest stand-alone attack text that is linked to spliced hosts containing it
_MIN_LINK_CHARS = 20
_WS = re.compile(r"\s+")


def split_for_key(key: str) -> Split:
    """The split of a group key."""
    bucket = int(hashlib.sha256(f"{SEED}:{key}".encode()).hexdigest()[:8], 16) % 100
    if bucket < TRAIN_BELOW:
        return "train"
    return "dev" if bucket < DEV_BELOW else "test"


def _normalise(text: str) -> str:
    return _WS.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def corpus_folders(roots: Iterable[Path]) -> list[Path]:
    """Labelled corpus folders (with ``memories.jsonl`` and ``labels.json``) under ``roots``."""
    found: list[Path] = []
    for root in roots:
        if (root / "memories.jsonl").is_file() and (root / "labels.json").is_file():
            found.append(root)
            continue
        found.extend(
            p
            for p in sorted(root.iterdir())
            if (p / "memories.jsonl").is_file() and (p / "labels.json").is_file()
        )
    return found


class _Groups:
    """Union-find over memory ids and attack keys."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        parent = self.parent
        parent.setdefault(x, x)
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def union(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            # the smaller key becomes the root, so the group key does not depend on order
            lo, hi = sorted((ra, rb))
            self.parent[hi] = lo


def _facts(folder: Path) -> Iterator[tuple[str, str]]:
    with (folder / "memories.jsonl").open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                yield str(rec["memory_id"]), str(rec.get("fact", ""))
            except (ValueError, KeyError, TypeError) as exc:
                raise ValueError(f"{folder / 'memories.jsonl'}: line {n}: {exc}") from None


def _labels(folder: Path) -> dict[str, Any]:
    try:
        data = json.loads((folder / "labels.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{folder / 'labels.json'}: cannot read labels: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{folder / 'labels.json'}: not a JSON object")
    return data


def compute_splits(folders: Iterable[Path]) -> dict[str, dict[str, Split]]:
    """``{corpus name: {memory id: split}}`` for the given corpus folders, pooled.

    Corpora are pooled so that a stand-alone attack and the spliced hosts carrying it land
    in one split even though they sit in different folders.
    """
    groups = _Groups()
    members: dict[str, list[str]] = {}
    spliced: list[tuple[str, str]] = []  # (memory id, normalised fact)
    standalone: list[tuple[str, str]] = []
    for folder in folders:
        labels = _labels(folder)
        ids: list[str] = []
        facts: dict[str, str] = {}
        for mid, fact in _facts(folder):
            ids.append(mid)
            facts[mid] = fact
            groups.find(mid)
        members[folder.name] = ids
        for key in ("contradictions", "non_contradictions"):
            for pair in labels.get(key) or []:
                for other in pair[1:]:
                    groups.union(str(pair[0]), str(other))
        notes = labels.get("notes") or {}
        splice: Mapping[str, Any] = notes.get("splice") or {}
        for mid, info in splice.items():
            if not isinstance(info, Mapping):
                continue
            attack = f"attack:{info.get('attack_source')}|{info.get('attack_origin')}"
            groups.union(mid, attack)
            if info.get("clean_twin"):
                groups.union(mid, str(info["clean_twin"]))
            if mid in facts:
                spliced.append((mid, _normalise(facts[mid])))
        # a secret scanner's rule examples share the rule: fitting a pattern on one example of
        # a rule and scoring it on another of the same rule measures nothing
        rules: Mapping[str, Any] = notes.get("rule") or {}
        for mid, info in rules.items():
            if isinstance(info, Mapping) and info.get("id"):
                groups.union(mid, f"rule:{info['id']}")
        if not splice:
            positives = labels.get("memory_labels") or {}
            for mid, labs in positives.items():
                if "injection" in labs and mid in facts:
                    text = _normalise(facts[mid])
                    if len(text) >= _MIN_LINK_CHARS:
                        standalone.append((mid, text))
    for mid, text in standalone:
        for host, host_text in spliced:
            if text in host_text:
                groups.union(mid, host)
    return {
        name: {mid: split_for_key(groups.find(mid)) for mid in ids} for name, ids in members.items()
    }


def _record_payload(splits: Mapping[str, Mapping[str, Split]]) -> dict[str, Any]:
    return {
        "seed": SEED,
        "buckets": {
            "train": [0, TRAIN_BELOW],
            "dev": [TRAIN_BELOW, DEV_BELOW],
            "test": [DEV_BELOW, 100],
        },
        "corpora": {
            name: {s: sorted(m for m, v in assign.items() if v == s) for s in SPLITS}
            for name, assign in sorted(splits.items())
        },
    }


@cache
def recorded_splits() -> dict[str, dict[str, Split]]:
    """The recorded assignment of the public corpora: ``{corpus: {memory id: split}}``."""
    data = json.loads(RECORD.read_text(encoding="utf-8"))
    out: dict[str, dict[str, Split]] = {}
    for name, by_split in data["corpora"].items():
        out[name] = {mid: s for s in SPLITS for mid in by_split.get(s, [])}
    return out


def split_of_corpus(folder: Path) -> tuple[dict[str, Split], bool]:
    """The split of every memory of one corpus, and whether it came from the record.

    A corpus the record does not know (a user's own) is split by the same hash, with pairs
    and splices grouped within the folder.
    """
    recorded = recorded_splits().get(folder.name)
    if recorded is not None:
        ids = [mid for mid, _ in _facts(folder)]
        if all(mid in recorded for mid in ids):
            return {mid: recorded[mid] for mid in ids}, True
    return compute_splits([folder])[folder.name], False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("roots", nargs="+", type=Path, help="shared/eval, shared/train, ...")
    parser.add_argument("--write", action="store_true", help=f"write {RECORD.name}")
    args = parser.parse_args(argv)
    splits = compute_splits(corpus_folders(args.roots))
    payload = _record_payload(splits)
    for name, by_split in payload["corpora"].items():
        counts = " ".join(f"{s}={len(by_split[s])}" for s in SPLITS)
        print(f"{name:40} {counts}")
    if args.write:
        RECORD.write_text(json.dumps(payload, indent=0, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {RECORD}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
