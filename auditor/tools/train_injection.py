"""Train the learned injection classifier (:mod:`auditor.detectors.injection_model`).

``python -m auditor.tools.train_injection [ROOT...] [--write]`` reads every corpus under the
roots (default ``../shared/train`` and ``../shared/eval`` beside the repository) that is scored
for ``injection``, plus the hand-written cases of ``auditor/tools/data/injection_extra.jsonl``,
and:

1. fits an L2 logistic regression (scikit-learn, ``liblinear``, deterministic) on the hashed
   n-gram features of the **train** split, with sample weights that give every (corpus,
   class) the same total weight up to a square-root size factor: the benign folders are
   all-negative and the attack folders all-positive, so without it the model would learn
   which folder a text came from;
2. calibrates the window-max logit on the **dev** split (Platt scaling) and chooses the
   thresholds there: ``untrusted`` (agent / external tiers) is the highest dev F1 whose dev
   false-alarm rate stays at or below 1%; ``user`` is the lowest threshold whose false-alarm
   rate on the dev negatives is at or below 0.2% (a user's own words need stronger evidence);
3. writes ``auditor/detectors/data/injection_model.json.gz`` (with ``--write``): gzip with a
   zero timestamp of canonical JSON, float16 weights, so the same data gives the same bytes.
   The file records the sha256 of the train and dev data (ids, texts, labels), the feature
   spec, window, thresholds, dev figures and library versions.

The model sees the text only (never ``source.type``): arrival is the rules' business
(tier-aware ``applies_to``), and the corpora's types are confounded with their labels.

Texts longer than the window are cut into the same overlapping windows as at run time. A
negative's windows are all negatives; a positive's windows are positives where they are not
part of its clean twin (spliced corpora) and all positives otherwise.

:func:`loco_report` fits on all corpora but one and scores the one left out.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import platform
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from auditor.detectors.injection_model import (
    DEFAULT_MODEL,
    FEATURE_SPEC,
    InjectionModel,
    distinct,
    featurize,
    window_starts,
)
from auditor.tools.splits import corpus_folders, split_of_corpus

__all__ = [
    "EXTRA",
    "Item",
    "TrainConfig",
    "build_payload",
    "compose_items",
    "data_sha256",
    "load_items",
    "iter_loco",
    "loco_report",
    "main",
    "serialise",
    "train",
]

REPO = Path(__file__).resolve().parents[2]
DEFAULT_ROOTS = (REPO.parent / "shared" / "train", REPO.parent / "shared" / "eval")
EXTRA = Path(__file__).with_name("data") / "injection_extra.jsonl"
TEMPLATES = Path(__file__).with_name("data") / "injection_templates.json"
#: composed texts per language and class
_COMPOSED_ATTACKS = 300
_COMPOSED_REPORTS = 120
_MAX_QUOTE_CHARS = 200
#: --quick leave-one-out: only corpora of at least this many memories
_QUICK_MIN = 150
LABEL = "injection"


@dataclass(frozen=True)
class Item:
    """One labelled text of a corpus."""

    corpus: str
    memory_id: str
    text: str
    label: int
    split: str
    twin_text: str | None = None


@dataclass(frozen=True)
class TrainConfig:
    """Hyper-parameters (chosen on dev; see the module docstring)."""

    c: float = 256.0
    window: int = 1024
    size_power: float = 0.5
    extra_weight: float = 2.0
    max_untrusted_fpr: float = 0.01
    max_group_fpr: float = 0.02
    min_group_negatives: int = 20
    max_user_fpr: float = 0.002


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load_items(roots: Iterable[Path], extra: Path | None = EXTRA) -> list[Item]:
    """Every scored memory of the injection corpora under ``roots`` (ignored ones left out).

    The hand-written ``extra`` cases are all in the train split.
    """
    items: list[Item] = []
    for folder in corpus_folders(roots):
        labels = json.loads((folder / "labels.json").read_text(encoding="utf-8"))
        notes = labels.get("notes") or {}
        if LABEL not in (notes.get("scored_labels") or []):
            continue
        splits, _ = split_of_corpus(folder)
        positives = {k for k, v in (labels.get("memory_labels") or {}).items() if LABEL in v}
        ignore = set(labels.get("ignore") or [])
        records = _read_jsonl(folder / "memories.jsonl")
        facts = {str(r["memory_id"]): str(r.get("fact", "")) for r in records}
        splice: Mapping[str, Any] = notes.get("splice") or {}
        for mid, fact in facts.items():
            if mid in ignore:
                continue
            twin = (splice.get(mid) or {}).get("clean_twin")
            items.append(
                Item(
                    corpus=folder.name,
                    memory_id=mid,
                    text=fact,
                    label=int(mid in positives),
                    split=splits[mid],
                    twin_text=facts.get(str(twin)) if twin else None,
                )
            )
    if extra is not None and extra.is_file():
        for rec in _read_jsonl(extra):
            items.append(
                Item("hand-written", str(rec["id"]), str(rec["text"]), int(rec["label"]), "train")
            )
    return items


def _rank(text: str) -> str:
    return hashlib.sha256(("memaudit-compose:" + text).encode("utf-8")).hexdigest()


def _pick(texts: Iterable[str], k: int) -> list[str]:
    """A deterministic sample of ``k`` distinct texts (by hash rank, not by order)."""
    return sorted(set(texts), key=_rank)[:k]


def compose_items(items: Sequence[Item], templates: Path | None = TEMPLATES) -> list[Item]:
    """Train-split texts composed from the hand-written blocks of ``templates``.

    Attacks: an (optional) benign host, an addressee, an (optional) override and a directive,
    English and Korean. Negatives: the hosts alone, users' directive-like preferences and
    retractions ("ignore my earlier message about ..."), and attack strings of the train
    split (short, stand-alone ones) quoted inside reporting frames.
    """
    if templates is None or not templates.is_file():
        return []
    blocks = json.loads(templates.read_text(encoding="utf-8"))
    out: list[Item] = []

    def add(kind: str, texts: Iterable[str], label: int) -> None:
        for k, text in enumerate(texts):
            out.append(Item("composed", f"{kind}-{k:04d}", text, label, "train"))

    quotes = sorted(
        {
            " ".join(i.text.split())
            for i in items
            if i.split == "train"
            and i.label
            and i.twin_text is None
            and i.corpus.startswith("injection-")
            and "spliced" not in i.corpus
            and 20 <= len(i.text) <= _MAX_QUOTE_CHARS
        }
    )
    for lang in ("en", "ko"):
        hosts = [*blocks["hosts"][lang], ""]
        attacks = (
            f"{h} {a}{o}{d}".strip()
            for h in hosts
            for a in blocks["addressees"][lang]
            for o in blocks["overrides"][lang]
            for d in blocks["directives"][lang]
        )
        add(f"attack-{lang}", _pick(attacks, _COMPOSED_ATTACKS), 1)
        add(f"host-{lang}", blocks["hosts"][lang], 0)
        add(f"pref-{lang}", blocks["preferences"][lang], 0)
        retract = blocks["retractions"][lang]
        add(f"retract-{lang}", (s + t for s in retract["starts"] for t in retract["topics"]), 0)
        reports = (f.replace("{q}", q) for f in blocks["report_frames"][lang] for q in quotes)
        add(f"report-{lang}", _pick(reports, _COMPOSED_REPORTS), 0)
    return out


def data_sha256(items: Iterable[Item]) -> str:
    """sha256 of the (corpus, id, label, text) of ``items``, in a canonical order."""
    digest = hashlib.sha256()
    for it in sorted(items, key=lambda i: (i.corpus, i.memory_id)):
        digest.update(json.dumps([it.corpus, it.memory_id, it.label, it.text]).encode("utf-8"))
        digest.update(b"\n")
    return digest.hexdigest()


# -- features ------------------------------------------------------------------------------


def _windows(item: Item, window: int) -> list[tuple[int, int, int]]:
    """(start, end, label) of the training windows of one item."""
    n = len(item.text)
    if n <= window:
        return [(0, n, item.label)]
    out: list[tuple[int, int, int]] = []
    for s in window_starts(n, window).tolist():
        e = min(s + window, n)
        label = item.label
        if label and item.twin_text is not None and item.text[s:e] in item.twin_text:
            label = 0
        out.append((s, e, label))
    return out


Features = dict[tuple[str, str], tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]]


def _featurize_all(items: Iterable[Item], cache: Features | None) -> Features:
    cache = {} if cache is None else cache
    for it in items:
        key = (it.corpus, it.memory_id)
        if key not in cache:
            cache[key] = featurize(it.text)
    return cache


def _matrix(
    feats: Sequence[tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]],
    spans: Sequence[Sequence[tuple[int, int]]],
) -> Any:  # scipy.sparse.csr_matrix
    """One row per (text, window): presence / sqrt(distinct features of the window)."""
    from scipy.sparse import csr_matrix  # type: ignore[import-untyped]

    rows: list[npt.NDArray[np.intp]] = []
    cols: list[npt.NDArray[np.intp]] = []
    vals: list[npt.NDArray[np.float64]] = []
    row = 0
    for (idx, pos), wins in zip(feats, spans, strict=True):
        for s, e in wins:
            sel = distinct(idx[(pos >= s) & (pos < e)])
            n = max(len(sel), 1)
            rows.append(np.full(len(sel), row, dtype=np.intp))
            cols.append(sel)
            vals.append(np.full(len(sel), 1.0 / math.sqrt(n)))
            row += 1
    dim = 1 << int(FEATURE_SPEC["bits"])
    data = np.concatenate(vals) if vals else np.zeros(0)
    return csr_matrix(
        (data, (np.concatenate(rows), np.concatenate(cols))), shape=(row, dim), dtype=np.float64
    )


def _weights(
    items: Sequence[Item], power: float, extra: float = 1.0
) -> dict[tuple[str, int], float]:
    """Per (corpus, class) weight per item: every group totals ``size ** power``."""
    sizes: dict[tuple[str, int], int] = {}
    for it in items:
        key = (it.corpus, it.label)
        sizes[key] = sizes.get(key, 0) + 1
    per = {k: (n**power) / n for k, n in sizes.items()}
    for key in per:
        if key[0] in ("hand-written", "composed"):
            per[key] *= extra

    # balance the classes: positives and negatives carry equal total weight
    totals = [sum(n * per[k] for k, n in sizes.items() if k[1] == c) for c in (0, 1)]
    scale = {c: (sum(totals) / 2) / t if t else 1.0 for c, t in enumerate(totals)}
    return {k: w * scale[k[1]] for k, w in per.items()}


@dataclass
class Fitted:
    """A fitted linear model before calibration."""

    weights: npt.NDArray[np.float64]
    bias: float


def fit(items: Sequence[Item], config: TrainConfig, cache: Features | None = None) -> Fitted:
    """Fit the logistic regression on ``items`` (every window a row)."""
    from sklearn.linear_model import LogisticRegression  # type: ignore[import-untyped]

    per = _weights(items, config.size_power, config.extra_weight)
    feats = _featurize_all(items, cache)
    spans: list[list[tuple[int, int]]] = []
    y: list[int] = []
    w: list[float] = []
    for it in items:
        wins = _windows(it, config.window)
        spans.append([(s, e) for s, e, _ in wins])
        share = per[(it.corpus, it.label)] / len(wins)
        for _, _, lab in wins:
            y.append(lab)
            w.append(share)
    x = _matrix([feats[(it.corpus, it.memory_id)] for it in items], spans)
    model = LogisticRegression(C=config.c, solver="liblinear", max_iter=1000, random_state=0)
    model.fit(x, np.array(y), sample_weight=np.array(w))
    # float16 round trip: the run-time model uses exactly the stored weights
    weights = model.coef_[0].astype("<f2").astype(np.float64)
    return Fitted(weights, float(model.intercept_[0]))


def _as_model(fitted: Fitted, config: TrainConfig, calibration: tuple[float, float]) -> Any:
    return InjectionModel(
        {
            "feature_spec": FEATURE_SPEC,
            "weights_f16_gzip_hex": gzip.compress(
                fitted.weights.astype("<f2").tobytes(), mtime=0
            ).hex(),
            "bias": fitted.bias,
            "calibration": list(calibration),
            "window": config.window,
            "thresholds": {},
        }
    )


def max_logits(model: InjectionModel, texts: Iterable[str]) -> npt.NDArray[np.float64]:
    """The highest window logit of every text."""
    return np.array([float(model.logits(t)[1].max()) for t in texts])


def platt(logits: npt.NDArray[np.float64], labels: npt.NDArray[np.int_]) -> tuple[float, float]:
    """Platt scaling ``(a, b)``: ``p = sigmoid(a * logit + b)`` fitted on held-out scores."""
    from sklearn.linear_model import LogisticRegression

    if len(set(labels.tolist())) < 2:
        return 1.0, 0.0
    lr = LogisticRegression(C=1e6, solver="lbfgs", max_iter=1000)
    lr.fit(logits.reshape(-1, 1), labels)
    return float(lr.coef_[0][0]), float(lr.intercept_[0])


def scores(labels: npt.NDArray[np.int_], flagged: npt.NDArray[np.bool_]) -> dict[str, Any]:
    """P, R, F1 and false-alarm rate of ``flagged`` against ``labels``."""
    tp = int((flagged & (labels == 1)).sum())
    fp = int((flagged & (labels == 0)).sum())
    fn = int((~flagged & (labels == 1)).sum())
    neg = int((labels == 0).sum())
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return {
        "n": len(labels),
        "pos": int(labels.sum()),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": round(p, 4),
        "recall": round(r, 4),
        "f1": round(f1, 4),
        "fpr": round(fp / neg, 4) if neg else 0.0,
    }


def choose_thresholds(
    probs: npt.NDArray[np.float64],
    labels: npt.NDArray[np.int_],
    config: TrainConfig,
    groups: Sequence[str] | None = None,
) -> dict[str, float]:
    """Thresholds on held-out (dev) probabilities.

    ``untrusted``: the best F1 whose pooled false-alarm rate is at most
    ``max_untrusted_fpr`` and whose rate on every group (corpus) with at least
    ``min_group_negatives`` negatives is at most ``max_group_fpr`` (hard negatives such as
    security documentation must not be traded for recall on easy benign chatter).
    ``user``: the lowest threshold (not below ``untrusted``) whose pooled false-alarm rate
    is at most ``max_user_fpr``.
    """
    grid = np.round(np.arange(0.30, 0.995, 0.01), 2)
    names = sorted(set(groups)) if groups is not None else []
    masks = []
    for name in names:
        mask = np.array([g == name for g in groups or []]) & (labels == 0)
        if mask.sum() >= config.min_group_negatives:
            masks.append(mask)
    best, best_f1 = 0.99, -1.0
    user = 0.99
    for t in grid[::-1]:
        flagged = probs >= t
        s = scores(labels, flagged)
        if s["fpr"] <= config.max_user_fpr:
            user = float(t)
        worst = max((float(flagged[m].mean()) for m in masks), default=0.0)
        if (
            s["fpr"] <= config.max_untrusted_fpr
            and worst <= config.max_group_fpr
            and s["f1"] >= best_f1
        ):
            best, best_f1 = float(t), s["f1"]
    return {"untrusted": best, "user": max(user, best)}


def _versions() -> dict[str, str]:
    import scipy  # type: ignore[import-untyped]
    import sklearn  # type: ignore[import-untyped]

    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
    }


def train(items: Sequence[Item], config: TrainConfig) -> tuple[dict[str, Any], dict[str, Any]]:
    """Fit on the train split, calibrate and choose thresholds on dev.

    Returns the artifact payload and a report (dev figures per corpus, timings).
    """
    started = time.perf_counter()
    tr = [i for i in items if i.split == "train"]
    dev = [i for i in items if i.split == "dev"]
    fitted = fit(tr, config)
    raw = _as_model(fitted, config, (1.0, 0.0))
    dev_logits = max_logits(raw, (i.text for i in dev))
    dev_labels = np.array([i.label for i in dev])
    cal = platt(dev_logits, dev_labels)
    probs = 1.0 / (1.0 + np.exp(-(cal[0] * dev_logits + cal[1])))
    thresholds = choose_thresholds(probs, dev_labels, config, [i.corpus for i in dev])
    per_corpus: dict[str, Any] = {}
    for name in sorted({i.corpus for i in dev}):
        mask = np.array([i.corpus == name for i in dev])
        per_corpus[name] = scores(dev_labels[mask], probs[mask] >= thresholds["untrusted"])
    payload = build_payload(
        fitted,
        config,
        cal,
        thresholds,
        train_sha256=data_sha256(tr),
        dev_sha256=data_sha256(dev),
        counts={"train": len(tr), "dev": len(dev)},
        dev_scores=scores(dev_labels, probs >= thresholds["untrusted"]),
    )
    report = {"dev": per_corpus, "seconds": round(time.perf_counter() - started, 1)}
    return payload, report


def build_payload(
    fitted: Fitted,
    config: TrainConfig,
    calibration: tuple[float, float],
    thresholds: Mapping[str, float],
    *,
    train_sha256: str,
    dev_sha256: str,
    counts: Mapping[str, int],
    dev_scores: Mapping[str, Any],
) -> dict[str, Any]:
    """The artifact's JSON object."""
    return {
        "format": "memaudit-injection-model/1",
        "feature_spec": FEATURE_SPEC,
        "window": config.window,
        "bias": round(fitted.bias, 6),
        "calibration": [round(calibration[0], 6), round(calibration[1], 6)],
        "thresholds": dict(thresholds),
        "hyper_parameters": {
            "model": "logistic regression (liblinear, L2)",
            "C": config.c,
            "size_power": config.size_power,
            "extra_weight": config.extra_weight,
            "max_untrusted_fpr": config.max_untrusted_fpr,
            "max_group_fpr": config.max_group_fpr,
            "min_group_negatives": config.min_group_negatives,
            "max_user_fpr": config.max_user_fpr,
        },
        "train_sha256": train_sha256,
        "dev_sha256": dev_sha256,
        "counts": dict(counts),
        "dev_scores_untrusted": dict(dev_scores),
        "versions": _versions(),
        "weights_f16_gzip_hex": gzip.compress(
            fitted.weights.astype("<f2").tobytes(), compresslevel=9, mtime=0
        ).hex(),
    }


def serialise(payload: Mapping[str, Any]) -> bytes:
    """Canonical bytes of the artifact: sorted-key JSON, gzip with a zero timestamp."""
    body = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return gzip.compress(body, compresslevel=9, mtime=0)


# -- leave one corpus out --------------------------------------------------------------------


def iter_loco(
    train_roots: Iterable[Path], config: TrainConfig | None = None, quick: bool = False
) -> Iterator[dict[str, Any]]:
    """The rows of :func:`loco_report`, one held-out corpus at a time."""
    config = config or TrainConfig()
    items = load_items(train_roots)
    items += compose_items(items)
    names = sorted(
        {i.corpus for i in items if i.label and i.corpus not in ("hand-written", "composed")}
    )
    cache = _featurize_all(items, None)
    for name in names:
        held = [i for i in items if i.corpus == name]
        if quick and len(held) < _QUICK_MIN:
            continue
        started = time.perf_counter()
        fitted = fit([i for i in items if i.corpus != name], config, cache)
        model = _as_model(fitted, config, (1.0, 0.0))
        logits = max_logits(model, (i.text for i in held))
        labels = np.array([i.label for i in held])
        test = np.array([i.split == "test" for i in held])
        yield {
            "corpus": name,
            "test": scores(labels[test], logits[test] >= 0.0),
            "all": scores(labels, logits >= 0.0),
            "seconds": round(time.perf_counter() - started, 1),
        }


def loco_report(
    train_roots: Iterable[Path], config: TrainConfig | None = None, quick: bool = False
) -> list[dict[str, Any]]:
    """Leave-one-corpus-out figures of the classifier alone.

    For every corpus with injection positives, fit on the train + dev splits of all the
    other corpora (the hand-written and composed cases included), and score the held-out
    corpus's test split and all of it at the balanced model's natural cut (raw logit >= 0,
    no calibration: nothing of the held-out corpus is used). ``quick`` keeps only the
    corpora of at least 150 memories (the larger attack and spliced corpora). One fit takes
    about as long as training the shipped model, so the full table takes minutes per corpus
    on a small machine: see the ``seconds`` of each row.
    """
    return list(iter_loco(train_roots, config, quick))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("roots", nargs="*", type=Path, default=list(DEFAULT_ROOTS))
    parser.add_argument("--write", action="store_true", help=f"write {DEFAULT_MODEL.name}")
    parser.add_argument("--loco", action="store_true", help="print the leave-one-out table")
    parser.add_argument(
        "--quick", action="store_true", help=f"loco: corpora of >= {_QUICK_MIN} memories only"
    )
    args = parser.parse_args(argv)
    config = TrainConfig()
    if args.loco:
        for row in iter_loco(args.roots, config, quick=args.quick):
            t, a = row["test"], row["all"]
            print(
                f"{row['corpus']:38} test P={t['precision']:.2f} R={t['recall']:.2f} "
                f"F1={t['f1']:.2f} FPR={t['fpr']:.3f} | all P={a['precision']:.2f} "
                f"R={a['recall']:.2f} F1={a['f1']:.2f} FPR={a['fpr']:.3f} ({row['seconds']} s)",
                flush=True,
            )
        return 0
    items = load_items(args.roots)
    items += compose_items(items)
    payload, report = train(items, config)
    for name, s in report["dev"].items():
        print(
            f"dev {name:38} P={s['precision']:.2f} R={s['recall']:.2f} F1={s['f1']:.2f} "
            f"FPR={s['fpr']:.3f} (n={s['n']})"
        )
    print(f"thresholds {payload['thresholds']} calibration {payload['calibration']}")
    data = serialise(payload)
    print(f"trained in {report['seconds']} s; artifact {len(data)} bytes")
    if args.write:
        DEFAULT_MODEL.parent.mkdir(parents=True, exist_ok=True)
        DEFAULT_MODEL.write_bytes(data)
        print(f"wrote {DEFAULT_MODEL}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
