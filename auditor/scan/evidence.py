"""A finding's evidence: a redaction of the memory around what fired, never a copy of it.

:func:`evidence_for` builds the evidence stored with a finding: what fired (detector,
entities, score, a scrubbed reason), where (spans), and one short snippet per memory.

A snippet is cut from a window of the fact around the first detected span, and in that
window:

* the finding's own spans are masked as ``[LABEL]`` when its category is sensitive or
  secret;
* every personal-data, special-category and secret span that ANY of the per-memory
  detectors finds in the window is masked too (:class:`EvidenceMasker` runs the ``pii``,
  ``special_category`` and ``secrets`` detectors over the window), so an address finding no
  longer repeats the health mention beside it;
  When the scan already ran one of those detectors on that memory (``known``: the scan's
  own detections), its spans are taken from there, cut to the window, instead of running
  it again: on the whole fact they are the same spans; on a part of a fact of at most
  :data:`REUSE_MAX_CHARS` characters where no detector stopped at a cap, they are what the
  scan judged sensitive there with the whole fact's context, and a value across the
  window's edge is masked up to it. A longer fact's window is searched itself;
* the rest is scrubbed by :func:`auditor.logging.scrub` (e-mail addresses, numbers, tokens);
* control sequences, control characters and bidi overrides are removed and white space is
  collapsed (:func:`auditor.safetext.one_line`).

Injection and contradiction snippets (whose spans are not masked: the directive is the
evidence) are cut to :data:`EXCERPT_CHARS`; sensitive ones to :data:`SNIPPET_CHARS`. Only the
window is ever scanned, so the cost does not grow with the length of the fact. If a masking
detector fails, the snippet is withheld (``[snippet withheld: ...]``) rather than shown
unmasked.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import structlog

from auditor.config import Settings
from auditor.detectors.base import DetectContext, Detection, Detector, MemoryView
from auditor.detectors.prefilter import Needles, Prefilter, prefilter_enabled
from auditor.logging import scrub
from auditor.safetext import one_line

__all__ = [
    "EXCERPT_CHARS",
    "REUSE_MAX_CHARS",
    "SNIPPET_CHARS",
    "EvidenceMasker",
    "evidence_for",
    "redacted_snippet",
]

#: characters shown of a sensitive or secret finding's snippet (all values masked)
SNIPPET_CHARS = 160
#: characters shown of an injection or contradiction excerpt (the raw payload is cut here)
EXCERPT_CHARS = 100
#: characters masked and scrubbed beyond each edge of the shown window (then cut away), so a
#: value crossing the edge is recognised whole
_MARGIN = 96
#: windows whose spans the masker keeps (a memory's findings share their window)
_RECENT_WINDOWS = 64
#: the per-memory detectors whose spans every snippet masks (their default parameters)
MASKING_DETECTORS = ("pii", "special_category", "secrets")
WITHHELD = "[snippet withheld: the masking detectors failed]"

Span = tuple[int, int, str]
#: per detector, what it found on a memory's whole fact (``Engine.kept`` of the rule engine)
Known = Mapping[str, Sequence[Detection]]
_log = structlog.get_logger(__name__)


class EvidenceMasker:
    """Finds every personal-data, special-category and secret span in a piece of text.

    The detectors are built on first use (the registry shares them with the scan's rules
    when the parameters are equal). Consent is ignored: evidence masks a special-category
    mention even when the subject consented to keeping it.

    Args:
        settings: memaudit settings (the detectors' context).
        detectors: detector names to run; :data:`MASKING_DETECTORS` by default.
    """

    def __init__(self, settings: Settings, detectors: Sequence[str] = MASKING_DETECTORS) -> None:
        self.settings = settings
        self.names = tuple(detectors)
        self._built: list[Detector] | None = None
        self._prefilter: Prefilter[tuple[int, str]] | None = None
        self._parts: list[frozenset[str] | None] = []
        self._lock = threading.Lock()
        self._recent: OrderedDict[str, list[Span]] = OrderedDict()
        self._recent_lock = threading.Lock()

    def _detectors(self) -> list[Detector]:
        with self._lock:
            if self._built is None:
                from auditor.detectors import build

                built = [build(name, {}) for name in self.names]
                needles: dict[tuple[int, str], Needles] = {}
                parts: list[frozenset[str] | None] = []
                for index, detector in enumerate(built):
                    declared = detector.prefilter_needles() if prefilter_enabled() else None
                    parts.append(frozenset(declared) if declared else None)
                    for part, found in (declared or {}).items():
                        needles[(index, part)] = found
                self._prefilter = Prefilter(needles) if needles else None
                self._parts = parts
                self._built = built
            return self._built

    def spans(self, text: str, known: Known | None = None, offset: int = 0) -> list[Span]:
        """Spans (start, end, label) of everything the masking detectors find in ``text``.

        The detectors' own prefilter needles decide which of them can fire, as in a scan
        (exact: a detector part without its needles finds nothing); the spans of the last
        few windows are kept, since a memory's findings share their window.

        Args:
            text: the text to mask.
            known: detections of some of the masking detectors (the scan's own) on a text
                of which ``text`` is the part starting at ``offset``; those detectors are
                not run again, and what they found is cut to ``text``.
            offset: where ``text`` starts in the text ``known`` is about.

        Raises:
            Exception: whatever a detector raises (the caller withholds the snippet).
        """
        with self._recent_lock:
            cached = self._recent.get(text)
            if cached is not None:
                self._recent.move_to_end(text)
                return list(cached)
        found: list[Span] = []
        if known:
            end = offset + len(text)
            for name in self.names:
                for d in known.get(name, ()):
                    found += [
                        (
                            max(sp.start, offset) - offset,
                            min(sp.end, end) - offset,
                            sp.label or d.entity,
                        )
                        for sp in d.spans
                        if sp.end > offset and sp.start < end
                    ]
        missing = [name for name in self.names if not known or name not in known]
        if missing:  # only then are the detectors built (Presidio, spaCy: seconds)
            detectors = self._detectors()
            found += self._run(
                text, [d for n, d in zip(self.names, detectors, strict=True) if n in missing]
            )
        with self._recent_lock:
            self._recent[text] = found
            if len(self._recent) > _RECENT_WINDOWS:
                self._recent.popitem(last=False)
        return list(found)

    def _run(self, text: str, detectors: Sequence[Detector]) -> list[Span]:
        """Spans ``detectors`` (some of :meth:`_detectors`) find in ``text``."""
        built = self._built or []
        view = MemoryView(memory_id="evidence", subject="evidence:window", fact=text, trust_tier="")
        ctx = DetectContext(now=datetime.now(UTC), settings=self.settings)
        may = self._prefilter.decide(text) if self._prefilter is not None else None
        found: list[Span] = []
        for index, detector in enumerate(built):
            if detector not in detectors:
                continue
            declared = self._parts[index]
            if declared is None or may is None:
                detections = detector.analyze(view, ctx)
            else:
                parts = frozenset(p for p in declared if (index, p) in may)
                if not parts:
                    continue
                detections = detector.analyze_parts(view, ctx, parts)
            for d in detections:
                found += [(sp.start, sp.end, sp.label or d.entity) for sp in d.spans]
        return found


#: Longest fact whose detections mask a part of it: below one secret-engine window
#: (:data:`auditor.detectors.secrets_engine.WINDOW`), so no detector searched it in pieces.
REUSE_MAX_CHARS = 16_384
#: Fewer detections than the special-category detector's cap per category
#: (:data:`auditor.detectors.special_categories.MAX_HITS_PER_CATEGORY`): none was cut off.
_REUSE_MAX_HITS = 100


def _reusable(fact: str, known: Known | None) -> bool:
    """Whether the scan's detections on ``fact`` can mask any window of it.

    They can when the detectors saw the whole fact in one piece and stopped at no cap: then
    a window's sensitive values are those the scan found there, judged with the whole
    fact's context (the judgement the finding itself rests on), and a value that crosses
    the window's edge is masked up to it.
    """
    if not known or len(fact) > REUSE_MAX_CHARS:
        return False
    return all(len(found) < _REUSE_MAX_HITS for found in known.values())


def _window(fact: str, anchor: int, limit: int) -> tuple[int, int]:
    lo = max(0, anchor - limit // 3 - _MARGIN)
    hi = min(len(fact), anchor + limit + _MARGIN)
    return lo, hi


def redacted_snippet(
    fact: str,
    spans: Sequence[Span],
    *,
    mask_own: bool = True,
    masker: EvidenceMasker | None = None,
    limit: int = SNIPPET_CHARS,
    known: Known | None = None,
) -> str:
    """The fact around its first span: masked, scrubbed, cleaned and cut to ``limit``.

    Args:
        fact: the memory text.
        spans: the finding's spans in this memory (start, end, label).
        mask_own: mask the finding's own spans (sensitive data, secrets); otherwise they
            stay (an injected directive), still scrubbed and cut.
        masker: also mask what the masking detectors find in the window (None: scrub only).
        limit: most characters shown.
        known: what some masking detectors found on the whole ``fact`` (the scan's own
            detections): used instead of running them on the window, cut to it, when the
            fact is short enough that no detector capped its search (:func:`_reusable`).

    Returns:
        The snippet, with ``…`` where text was cut on either side.
    """
    anchor = min(max(min((s for s, _, _ in spans), default=0), 0), len(fact))
    lo, hi = _window(fact, anchor, limit)
    window = fact[lo:hi]
    masks: list[Span] = []
    if mask_own:
        masks += [(s - lo, e - lo, label) for s, e, label in spans if e > lo and s < hi]
    if masker is not None:
        try:
            whole = lo == 0 and hi == len(fact)
            reuse = known if whole or _reusable(fact, known) else None
            masks += masker.spans(window, reuse, lo)
        except Exception as exc:  # noqa: BLE001 - never show unmasked text instead
            _log.warning("evidence_masking_failed", error_type=type(exc).__name__)
            return WITHHELD
    anchor -= lo
    pieces: list[str] = []
    out = 0
    anchor_out: int | None = None
    cursor = 0
    for start, end, label in sorted((max(s, 0), min(e, len(window)), lb) for s, e, lb in masks):
        start, end = max(start, cursor), max(end, cursor)
        if end <= start:
            continue
        if anchor_out is None and cursor <= anchor < start:
            head = scrub(window[cursor:anchor])
            pieces.append(head)
            out += len(head)
            anchor_out = out
            cursor = anchor
        gap = scrub(window[cursor:start])
        mark = f"[{label.upper()}]"
        if anchor_out is None and anchor < end:
            anchor_out = out + len(gap)
        pieces += [gap, mark]
        out += len(gap) + len(mark)
        cursor = end
    if anchor_out is None and cursor <= anchor:
        head = scrub(window[cursor:anchor])
        pieces.append(head)
        out += len(head)
        anchor_out = out
        cursor = anchor
    pieces.append(scrub(window[cursor:]))
    masked = "".join(pieces)
    begin = max(0, (anchor_out or 0) - limit // 3)
    shown = one_line(masked[begin : begin + limit])
    before = lo > 0 or begin > 0
    after = begin + limit < len(masked) or hi < len(fact)
    return ("…" if before else "") + shown + ("…" if after else "")


def evidence_for(
    detections: Sequence[Detection],
    views: dict[str, MemoryView],
    mask_spans: bool,
    masker: EvidenceMasker | None = None,
    known: Mapping[str, Known] | None = None,
) -> dict[str, Any]:
    """Evidence of one finding from its detections: what fired, where, a redacted snippet.

    Args:
        detections: the detections merged into this finding (same rule, same memories).
        views: the memories involved, by id.
        mask_spans: mask the detected spans (sensitive data, secrets) and show up to
            :data:`SNIPPET_CHARS`; otherwise the span text may stay (an injected directive),
            cut to :data:`EXCERPT_CHARS`.
        masker: masks every personal-data and secret span found in each snippet's window
            (the scan passes one); None scrubs with patterns only.
        known: per memory id, what masking detectors the scan ran found on its fact
            (:attr:`auditor.rulepack.engine.Engine.kept`); the masker reuses it.
    """
    first = detections[0]
    per_memory: dict[str, list[Span]] = {}
    for d in detections:
        for sp in d.spans:
            mid = sp.memory_id or d.memory_ids[0]
            per_memory.setdefault(mid, []).append((sp.start, sp.end, sp.label))
    snippets = {}
    for mid in first.memory_ids:
        view = views.get(mid)
        if view is None:
            continue
        snippets[mid] = redacted_snippet(
            view.fact,
            per_memory.get(mid, []),
            mask_own=mask_spans,
            masker=masker,
            limit=SNIPPET_CHARS if mask_spans else EXCERPT_CHARS,
            known=known.get(mid) if known is not None else None,
        )
    details = {k: v for k, v in first.details.items() if k not in ("value", "text", "match")}
    return {
        "detector": first.detector,
        "entities": sorted({d.entity for d in detections}),
        "score": round(max(d.score for d in detections), 4),
        "reason": one_line(scrub(first.reason, limit=500)),
        "spans": [
            {"memory_id": mid, "start": s, "end": e, "label": label}
            for mid, spans in per_memory.items()
            for s, e, label in sorted(spans)
        ],
        "snippets": snippets,
        "details": details,
        "content_hashes": {
            mid: views[mid].content_hash for mid in first.memory_ids if mid in views
        },
        **({"context_ids": list(first.context_ids)} if first.context_ids else {}),
    }
