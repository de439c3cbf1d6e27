"""A learned injection layer beside the rules: a hashed n-gram linear classifier.

The pattern detector (:mod:`auditor.detectors.injection`) finds what its tables name; this
detector scores how much a text *reads like* a planted instruction, learned from the train
splits of the labelled corpora by :mod:`auditor.tools.train_injection`. It is small, CPU only
and needs nothing beyond NumPy at run time: the model is plain data
(``data/injection_model.json.gz``: one weight per hashed feature, a bias, a calibration and
the thresholds chosen on the dev split), so scikit-learn is needed only to train it.

**Features** (identical at training and run time, :func:`featurize`). Every code point is
folded on its own (NFKC when that gives one character, lower case, every decimal digit to
``0``, white space to a space), so the text keeps its length and offsets stay valid. Then
character n-grams of 2 to 5 code points (over the text padded with one space each side) are
hashed into ``2**bits`` buckets with a fixed, platform-independent 32-bit hash (FNV-1a over
code points, a multiplicative bucket). Word unigrams and bigrams can be switched on in the
spec (``word_ngrams``); on the dev split they added nothing over character n-grams and cost
time, so the shipped model does not use them. Every feature sits at the position where it
starts.

**Score.** A window's logit is ``bias + sum(weights of its distinct features) / sqrt(their
number)`` (binary features, L2-normalised: repeating a sentence does not raise its score);
the probability is ``sigmoid(a * logit + b)`` with ``a, b`` fitted on the dev split
(Platt scaling), so ``score`` is a calibrated probability. Texts longer than ``window``
characters (default 1,024) are scored as overlapping windows (stride ``window / 2``) and the
highest window wins, so an instruction appended at the end of a long tool result is judged
on its own neighbourhood instead of being diluted by the host. Features are sorted by
position once and every window is a slice, so the cost is O(n log n) NumPy work over at
most ``max_chars`` characters (default 65,536: at most 128 windows; the rest of a longer
text is not read, and the detection's details say so).

Entity: ``learned_injection`` (one per memory), spans: the window(s) whose score passed
``min_score`` (default: the lowest threshold recorded in the model). The reason gives the
score, never the text.

Params (all optional):
    min_score (float 0..1): lowest probability reported (default: the model's lowest
        recorded threshold); rules filter further with ``match.min_score``.
    window (int, 128..8192): window length in characters (default: the model's).
    max_chars (int, >= 1024): characters read per memory (default 65,536).
    model (str): path of another model file (default: the shipped one).
"""

from __future__ import annotations

import gzip
import json
import math
import unicodedata
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from auditor.detectors.base import DetectContext, Detection, Detector, MemoryView, Span
from auditor.detectors.injection_quotes import reported_quote_spans

__all__ = [
    "DEFAULT_MODEL",
    "FEATURE_SPEC",
    "InjectionModel",
    "InjectionModelDetector",
    "WindowScores",
    "codepoints",
    "distinct",
    "featurize",
    "load_model",
]

DEFAULT_MODEL = Path(__file__).with_name("data") / "injection_model.json.gz"

#: the feature specification; recorded in the model file, checked when it is loaded
FEATURE_SPEC: dict[str, Any] = {
    "version": 1,
    "normalise": "per code point: NFKC if one char, lower, digits->0, spaces->space",
    "char_ngrams": [2, 5],
    "word_ngrams": [],
    "hash": "fnv-1a 32-bit over code points (words: polynomial mod 2**32), golden-ratio bucket",
    "bits": 18,
    "value": "presence (0/1) per window / sqrt(distinct features of the window)",
}

_U32 = np.uint32
_Int = TypeVar("_Int", np.intp, np.uint32)
_FNV_PRIME = _U32(16777619)
_FNV_OFFSET = 2166136261
_GOLDEN = _U32(0x9E3779B1)  # Knuth's multiplicative hash constant (odd)
_R = 0x01000193  # polynomial base of word hashes: odd, hence invertible modulo 2**32
_R_INV = pow(_R, -1, 1 << 32)
_WORD_SEED = _U32(0x7F4A7C15)
_BIGRAM_SEED = _U32(0x85EBCA6B)
_BMP = 0x10000


@cache
def _tables() -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.bool_]]:
    """Per-code-point folding (BMP) and word-character tables, built once per process.

    Folding: lower case (its first character), NFKC when it gives one character
    (full-width forms, compatibility letters), every decimal digit to ``0``, every space
    separator or control white space to a space. Word characters: letters, marks, digits
    and ``_`` (Unicode categories L*, M*, N*).
    """
    fold = np.arange(_BMP, dtype=np.uint32)
    word = np.zeros(_BMP, dtype=np.bool_)
    for cp in range(_BMP):
        ch = chr(cp)
        if 0xD800 <= cp < 0xE000:
            continue
        folded = unicodedata.normalize("NFKC", ch)
        if len(folded) != 1:
            folded = ch
        folded = folded.lower()[:1] or folded  # 'İ' lower-cases to two: keep the first
        cat = unicodedata.category(folded)
        if cat == "Nd":
            folded = "0"
        elif folded.isspace():
            folded = " "
        fold[cp] = ord(folded)
        word[cp] = cat[0] in "LMN" or folded == "_"
    return fold, word


def codepoints(text: str) -> npt.NDArray[np.uint32]:
    """The folded code points of ``text``: one per character of the original."""
    raw = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype="<u4")
    fold, _ = _tables()
    cps = raw.astype(np.uint32)
    bmp = cps < _BMP
    if bmp.all():
        return fold[cps]
    cps[bmp] = fold[cps[bmp]]
    return cps


def _bucket(h: npt.NDArray[np.uint32], bits: int) -> npt.NDArray[np.intp]:
    return ((h * _GOLDEN) >> _U32(32 - bits)).astype(np.intp)


def _is_word(cps: npt.NDArray[np.uint32]) -> npt.NDArray[np.bool_]:
    _, word = _tables()
    out = np.ones(len(cps), dtype=np.bool_)  # astral planes: letters (CJK ext.) but symbols
    bmp = cps < _BMP
    out[bmp] = word[cps[bmp]]
    out[(cps >= 0x1F000) & (cps < 0x20000)] = False  # emoji and pictographs
    return out


def _char_features(
    cps: npt.NDArray[np.uint32], lo: int, hi: int, bits: int
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    padded = np.concatenate((np.array([32], dtype=np.uint32), cps, np.array([32], np.uint32)))
    total = len(padded)
    last = max(len(cps) - 1, 0)
    base = np.clip(np.arange(total, dtype=np.intp) - 1, 0, last)
    idx: list[npt.NDArray[np.intp]] = []
    pos: list[npt.NDArray[np.intp]] = []
    for n, count, h in _ngram_hashes(padded, lo, hi):
        idx.append(_bucket(h ^ _U32(n), bits))
        pos.append(base[:count])  # the padding shifts offsets by one
    if not idx:
        empty = np.zeros(0, dtype=np.intp)
        return empty, empty
    return np.concatenate(idx), np.concatenate(pos)


def _batch_char_keys(texts: Sequence[str], lo: int, hi: int, bits: int) -> npt.NDArray[np.intp]:
    """The character n-gram buckets of several non-empty texts at once, each tagged with its
    text's index in the bits above ``bits`` (``index << bits | bucket``).

    The texts are folded together (:func:`codepoints` folds each code point on its own),
    padded one space each side as in :func:`_char_features` and laid end to end; an n-gram
    whose first and last code points belong to two texts is dropped, so each text keeps
    exactly its own n-grams.
    """
    lengths = np.fromiter(map(len, texts), dtype=np.intp, count=len(texts))
    folded = codepoints("".join(texts))
    index = np.arange(len(texts), dtype=np.intp)
    padded = np.full(len(folded) + 2 * len(texts), 32, dtype=np.uint32)
    padded[np.arange(len(folded)) + 2 * np.repeat(index, lengths) + 1] = folded
    owner = np.repeat(index, lengths + 2)
    out: list[npt.NDArray[np.intp]] = []
    for n, count, h in _ngram_hashes(padded, lo, hi):
        first = owner[:count]
        inside = first == owner[n - 1 : n - 1 + count]
        out.append((first[inside] << bits) | _bucket(h[inside] ^ _U32(n), bits))
    return np.concatenate(out) if out else np.zeros(0, dtype=np.intp)


def _ngram_hashes(
    padded: npt.NDArray[np.uint32], lo: int, hi: int
) -> Iterator[tuple[int, int, npt.NDArray[np.uint32]]]:
    """``(n, count, hashes)`` for n from ``lo`` to ``hi``: the FNV-1a hash of every n-gram of
    ``padded`` (``count`` of them, one per start), each length rolled from the one before."""
    total = len(padded)
    h = np.full(total, _FNV_OFFSET, dtype=np.uint32)
    for n in range(1, hi + 1):
        count = total - n + 1
        if count <= 0:
            return
        h = (h[:count] ^ padded[n - 1 : n - 1 + count]) * _FNV_PRIME
        if n >= lo:
            yield n, count, h


def _word_features(
    cps: npt.NDArray[np.uint32], bits: int
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    empty = np.zeros(0, dtype=np.intp)
    n = len(cps)
    if n == 0:
        return empty, empty
    edges = np.diff(_is_word(cps).astype(np.int8), prepend=0, append=0)
    starts = np.flatnonzero(edges == 1)
    if len(starts) == 0:
        return empty, empty
    ends = np.flatnonzero(edges == -1)
    # polynomial prefix hashes modulo 2**32: hash(s, e) = (P[e] - P[s]) * R**-s
    powers = np.full(n, _R, dtype=np.uint32)
    powers[0] = 1
    powers = np.cumprod(powers, dtype=np.uint32)
    inverse = np.full(n, _R_INV, dtype=np.uint32)
    inverse[0] = 1
    inverse = np.cumprod(inverse, dtype=np.uint32)
    prefix = np.zeros(n + 1, dtype=np.uint32)
    np.cumsum((cps + _U32(1)) * powers, dtype=np.uint32, out=prefix[1:])
    words = (prefix[ends] - prefix[starts]) * inverse[starts]
    uni = _bucket(words ^ _WORD_SEED, bits)
    if len(words) == 1:
        return uni, starts.astype(np.intp)
    bi = _bucket((words[:-1] * _FNV_PRIME) ^ (words[1:] + _BIGRAM_SEED), bits)
    return np.concatenate((uni, bi)), np.concatenate((starts, starts[:-1])).astype(np.intp)


def featurize(
    text: str, spec: Mapping[str, Any] = FEATURE_SPEC
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]]:
    """Hashed feature ids of ``text`` and the character position each starts at.

    Both arrays have one entry per feature occurrence (a repeated n-gram occurs repeatedly).
    """
    cps = codepoints(text)
    bits = int(spec["bits"])
    lo, hi = (int(x) for x in spec["char_ngrams"])
    cidx, cpos = _char_features(cps, lo, hi, bits)
    if spec.get("word_ngrams"):
        widx, wpos = _word_features(cps, bits)
        return np.concatenate((cidx, widx)), np.concatenate((cpos, wpos))
    return cidx, cpos


def distinct(ids: npt.NDArray[_Int]) -> npt.NDArray[_Int]:
    """The distinct values of ``ids``, sorted (a sort and a mask: faster than ``np.unique``)."""
    if len(ids) == 0:
        return ids
    ordered = np.sort(ids)
    keep = np.empty(len(ordered), dtype=np.bool_)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def window_starts(length: int, window: int) -> npt.NDArray[np.intp]:
    """Start offsets of the overlapping windows (stride ``window // 2``) covering a text."""
    stride = max(window // 2, 1)
    if length <= window:
        return np.zeros(1, dtype=np.intp)
    starts = np.arange(0, length - window + 1, stride, dtype=np.intp)
    if starts[-1] + window < length:  # the last window ends at the text's end
        starts = np.append(starts, length - window)
    return starts


@dataclass(frozen=True)
class WindowScores:
    """Calibrated probabilities of the windows of one text."""

    starts: npt.NDArray[np.intp]
    ends: npt.NDArray[np.intp]
    probs: npt.NDArray[np.float64]
    chars_read: int
    truncated: bool

    @property
    def best(self) -> float:
        """The highest window probability (0 for an empty text)."""
        return float(self.probs.max()) if len(self.probs) else 0.0


class InjectionModel:
    """The loaded classifier: weights, bias, calibration, thresholds and window length."""

    def __init__(self, payload: Mapping[str, Any]) -> None:
        spec = payload["feature_spec"]
        if spec != FEATURE_SPEC:
            raise ValueError("model file: feature_spec differs from this code's featurizer")
        self.spec: dict[str, Any] = dict(spec)
        raw = gzip.decompress(bytes.fromhex(payload["weights_f16_gzip_hex"]))
        weights = np.frombuffer(raw, dtype="<f2").astype(np.float64)
        if len(weights) != 1 << int(spec["bits"]):
            raise ValueError("model file: weight vector has the wrong length")
        self.weights = weights
        self.bias = float(payload["bias"])
        self.calibration = (float(payload["calibration"][0]), float(payload["calibration"][1]))
        self.window = int(payload["window"])
        self.thresholds: dict[str, float] = {
            str(k): float(v) for k, v in payload["thresholds"].items()
        }
        self.meta: dict[str, Any] = {
            k: v for k, v in payload.items() if k != "weights_f16_gzip_hex"
        }

    def logits(
        self, text: str, window: int | None = None, max_chars: int = 65_536
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float64], int]:
        """Window starts and raw logits of ``text`` (read up to ``max_chars`` characters)."""
        window = window or self.window
        body = text[:max_chars]
        n = len(body)
        starts = window_starts(n, window)
        if n == 0:
            return starts, np.full(1, self.bias), 0
        idx, pos = featurize(body, self.spec)
        if len(starts) == 1:  # one window (most memories): no need to order by position
            present = distinct(idx)
            value = float(self.weights[present].sum()) / math.sqrt(max(len(present), 1))
            return starts, np.array([self.bias + value]), n
        order = np.argsort(pos, kind="stable")
        idx, pos = idx[order], pos[order]
        ends = np.minimum(starts + window, n)
        lo = np.searchsorted(pos, starts, side="left")
        hi = np.searchsorted(pos, ends, side="left")
        logits = np.empty(len(starts))
        for k in range(len(starts)):
            present = distinct(idx[lo[k] : hi[k]])
            count = max(len(present), 1)
            logits[k] = self.bias + float(self.weights[present].sum()) / math.sqrt(count)
        return starts, logits, n

    def batch_logits(self, texts: Sequence[str]) -> npt.NDArray[np.float64]:
        """The one-window logit of each text, for a whole batch in one pass of NumPy work.

        Each text must be non-empty and fit one window (``1 <= len <= window``, read
        whole): then its value equals :meth:`logits`'s, bit for bit (the n-grams are the
        same, each text's n-grams never cross into its neighbour's, and a sum of the
        model's half-precision weights is exact in double precision in any order). Many
        short texts cost a few large array operations instead of a few dozen small ones
        each: most memories are short, and small-array overhead was most of their cost.

        Raises:
            ValueError: the spec has word n-grams (scored one text at a time), or a text
                is empty.
        """
        if self.spec.get("word_ngrams"):
            raise ValueError("batch scoring covers character n-grams only")
        if not texts:
            return np.zeros(0)
        if not all(texts):
            raise ValueError("batch scoring needs non-empty texts")
        bits = int(self.spec["bits"])
        lo, hi = (int(x) for x in self.spec["char_ngrams"])
        keys = _batch_char_keys(texts, lo, hi, bits)
        if (len(texts) << bits) <= np.iinfo(np.uint32).max:
            # the same keys in half the width: NumPy sorts them in about half the time
            present = distinct(keys.astype(np.uint32)).astype(np.intp)
        else:
            present = distinct(keys)
        which = present >> bits
        k = len(texts)
        sums = np.bincount(which, weights=self.weights[present & ((1 << bits) - 1)], minlength=k)
        counts = np.bincount(which, minlength=k)
        return self.bias + sums / np.sqrt(np.maximum(counts, 1))

    def score(self, text: str, window: int | None = None, max_chars: int = 65_536) -> WindowScores:
        """Calibrated probabilities of every window of ``text``."""
        window = window or self.window
        starts, logit, n = self.logits(text, window, max_chars)
        return self.calibrated(starts, logit, n, window, len(text) > max_chars)

    def calibrated(
        self,
        starts: npt.NDArray[np.intp],
        logit: npt.NDArray[np.float64],
        n: int,
        window: int,
        truncated: bool,
    ) -> WindowScores:
        """The :class:`WindowScores` of windows at ``starts`` with these raw logits."""
        a, b = self.calibration
        probs = 1.0 / (1.0 + np.exp(-(a * logit + b)))
        ends = np.minimum(starts + window, n)
        return WindowScores(starts, ends, probs, n, truncated)

    def probability(self, text: str) -> float:
        """The highest window probability of ``text``."""
        return self.score(text).best


def model_from_bytes(data: bytes) -> InjectionModel:
    """A model from the bytes of a model file (gzip-compressed JSON)."""
    payload = json.loads(gzip.decompress(data).decode("utf-8"))
    return InjectionModel(payload)


@cache
def load_model(path: str | None = None) -> InjectionModel:
    """The model at ``path`` (default: the shipped one), loaded once per process.

    Raises:
        FileNotFoundError: no model file (rebuild it with
            ``python -m auditor.tools.train_injection --write``).
        ValueError: the file does not match this featurizer.
    """
    return model_from_bytes(Path(path or DEFAULT_MODEL).read_bytes())


def _blank_spans(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """``text`` with each span replaced by as many spaces (positions unchanged)."""
    parts: list[str] = []
    at = 0
    for start, end in spans:
        parts.append(text[at:start])
        parts.append(" " * (end - start))
        at = end
    parts.append(text[at:])
    return "".join(parts)


def _merge(starts: Sequence[int], ends: Sequence[int]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for s, e in sorted(zip(starts, ends, strict=True)):
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


class InjectionModelDetector(Detector):
    """Scores a memory's text with the learned classifier (entity ``learned_injection``)."""

    name = "injection_model"
    entity = "learned_injection"

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        path = self.params.get("model")
        if path is not None and not isinstance(path, str):
            raise ValueError("params.model must be a file path")
        self.model = load_model(path)
        default_min = min(self.model.thresholds.values(), default=0.5)
        self.min_score = float(self.params.get("min_score", default_min))
        if not 0.0 <= self.min_score <= 1.0:
            raise ValueError("params.min_score must be between 0 and 1")
        self.window = int(self.params.get("window", self.model.window))
        if not 128 <= self.window <= 8192:
            raise ValueError("params.window must be between 128 and 8192")
        self.max_chars = int(self.params.get("max_chars", 65_536))
        if self.max_chars < 1024:
            raise ValueError("params.max_chars must be at least 1024")
        #: logits of the current batch's one-window texts (:meth:`prepare`)
        self._prepared: dict[str, float] = {}
        #: a calibrated logit under this gives a probability under ``min_score`` whatever the
        #: rounding of the exponential (a margin of a millionth: rounding is ~1e-16)
        self._clearly_under: float | None = (
            math.log(self.min_score / (1 - self.min_score)) - 1e-6
            if 0 < self.min_score < 1
            else None
        )

    def prepare(self, memories: Sequence[MemoryView]) -> None:
        """Score the batch's one-window texts together (:meth:`InjectionModel.batch_logits`);
        :meth:`analyze` takes their logits from here (the batch's only: the last batch's
        are dropped) and scores any other text itself."""
        limit = min(self.window, self.max_chars)
        texts = list(dict.fromkeys(m.fact for m in memories if 0 < len(m.fact) <= limit))
        logits: list[float] = self.model.batch_logits(texts).tolist() if texts else []
        self._prepared = dict(zip(texts, logits, strict=True))

    def _score(self, text: str, logit: float | None) -> WindowScores:
        """The text's window scores: from its prepared one-window ``logit``, else computed."""
        if logit is None:
            return self.model.score(text, self.window, self.max_chars)
        one = np.zeros(1, dtype=np.intp)
        return self.model.calibrated(one, np.array([logit]), len(text), self.window, False)

    def _only_what_it_quotes(self, text: str) -> bool:
        """Whether the text reads as an instruction only through quotations that a reporting
        context surrounds (:func:`auditor.detectors.injection_quotes.reported_quote_spans`):
        scored again with them blanked, it stays under ``min_score``."""
        spans = reported_quote_spans(text)
        if not spans:
            return False
        rest = self.model.score(_blank_spans(text, spans), self.window, self.max_chars)
        return rest.best < self.min_score

    def analyze(self, memory: MemoryView, ctx: DetectContext) -> list[Detection]:
        """One detection when the best window's probability reaches ``min_score``, unless
        only quotations in a reporting context carry it (a write-up quoting an attack)."""
        logit = self._prepared.get(memory.fact)
        if logit is not None and self._clearly_under is not None:
            a, b = self.model.calibration
            if a * logit + b < self._clearly_under:
                return []  # far under min_score (the exact probability below agrees)
        result = self._score(memory.fact, logit)
        best = result.best
        if best < self.min_score or not memory.fact.strip():
            return []
        if self._only_what_it_quotes(memory.fact):
            return []
        hot = np.flatnonzero(result.probs >= self.min_score)
        spans = tuple(
            Span(s, e, self.entity)
            for s, e in _merge(result.starts[hot].tolist(), result.ends[hot].tolist())
        )
        windows = len(result.probs)
        where = "the text" if windows == 1 else f"{len(hot)} of {windows} windows"
        return [
            Detection(
                memory_ids=(memory.memory_id,),
                detector=self.name,
                entity=self.entity,
                score=round(best, 4),
                reason=(
                    f"learned classifier: {where} read as a planted instruction "
                    f"(probability {best:.2f})"
                ),
                spans=spans,
                details={
                    "probability": round(best, 4),
                    "windows": windows,
                    "windows_flagged": len(hot),
                    "chars_read": result.chars_read,
                    "truncated": result.truncated,
                    "model_train_sha256": self.model.meta.get("train_sha256", ""),
                },
            )
        ]
