"""The identifying values of a subject, collected just before an erasure deletes them.

Facts (as stored and normalised; long lines of multi-line facts on their own), the PII
spans the PII detector (Presidio, offline) finds in them, and the names of dashboard
accounts bound to the subject. Verification searches every table and file for them right
after the delete. They live in memory only: never stored, logged or printed.

Values another subject's memories also hold (a shared address) legitimately remain and
are not searched for: one streaming pass over the other subjects' facts finds them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import structlog
from sqlalchemy import select
from sqlalchemy.orm import Session

from auditor.config import Settings
from auditor.hashing import normalise_fact
from auditor.store.models import Memory, Principal
from auditor.store.residue import Matcher
from auditor.store.types import utcnow

__all__ = ["collect_values", "identifying_values"]

log = structlog.get_logger(__name__)

#: Lines of a multi-line fact searched on their own when at least this long.
_LINE_MIN_CHARS = 16
#: Values shorter than this cannot be searched at all (they match everything).
_SHORT_MIN_CHARS = 3
_BATCH_ROWS = 2000
#: Facts per PII detector call when a subject has many (see :func:`_pii_batches`).
_PII_BATCH_FACTS = 20
_PII_BATCH_CHARS = 8000
_PII_SEP = "\n\n"


_PII_LOCK = threading.Lock()
_PII: dict[str, Any] = {}


def _pii_spans(facts: Sequence[str], settings: Settings) -> tuple[set[str], str]:
    """PII values in ``facts`` (memory only). Returns (values, detector status)."""
    from auditor.detectors.base import DetectContext, MemoryView

    try:
        with _PII_LOCK:
            detector = _PII.get("detector")
            if detector is None:
                from auditor.detectors.pii import PiiDetector

                detector = _PII["detector"] = PiiDetector()
    except Exception as exc:  # noqa: BLE001 - facts are still searched without the spans
        log.warning("erasure_pii_detector_unavailable", error_type=type(exc).__name__)
        return set(), "unavailable"
    ctx = DetectContext(now=utcnow(), settings=settings)
    values: set[str] = set()
    status = "ok"
    for n, text in enumerate(_pii_batches(facts)):
        view = MemoryView(memory_id=f"erasure-{n}", subject="-", fact=text, trust_tier="user")
        try:
            detections = detector.analyze(view, ctx)
        except Exception as exc:  # noqa: BLE001 - one bad text must not stop the erasure
            log.warning("erasure_pii_failed", error_type=type(exc).__name__)
            status = "partial"
            continue
        for d in detections:
            for sp in d.spans:
                # a span never reaches across facts: split at the batch separator
                values.update(p.strip() for p in text[sp.start : sp.end].split(_PII_SEP))
    values.discard("")
    return values, status


def _pii_batches(facts: Sequence[str]) -> list[str]:
    """The texts given to the PII detector: each fact alone, or for many facts, batches.

    The detector's cost is mostly per call (its NLP pipeline), so a subject with
    thousands of memories is analysed ``_PII_BATCH_FACTS`` facts at a time, joined by a
    blank line (about three times faster; the spans are the same: see the tests).
    """
    if len(facts) <= _PII_BATCH_FACTS:
        return list(facts)
    out: list[str] = []
    batch: list[str] = []
    size = 0
    for fact in facts:
        if batch and (len(batch) >= _PII_BATCH_FACTS or size + len(fact) > _PII_BATCH_CHARS):
            out.append(_PII_SEP.join(batch))
            batch, size = [], 0
        batch.append(fact)
        size += len(fact) + len(_PII_SEP)
    if batch:
        out.append(_PII_SEP.join(batch))
    return out


def identifying_values(
    session: Session, subject: str, settings: Settings
) -> tuple[set[str], dict[str, Any]]:
    """The values to search for, without the short ones (:func:`collect_values`).

    Used where only values at least ``erasure_min_value_chars`` long are searched (a
    restore re-applying an erasure, :mod:`auditor.erasure.backup`).
    """
    values, _short, stats = collect_values(session, subject, settings)
    return values, stats


def collect_values(
    session: Session, subject: str, settings: Settings
) -> tuple[set[str], set[str], dict[str, Any]]:
    """The distinct values the subject's data held, to search for after the delete.

    Facts (as stored and normalised; long lines of multi-line facts on their own), PII
    spans in them, and the names of dashboard accounts bound to the subject. Values shorter
    than ``erasure_min_value_chars`` (a short name, ``alice``) are not dropped: they are
    searched as whole tokens and a match is reported as something that *may* be the
    subject's (it may be unrelated text); values under 3 characters cannot be searched and
    are counted. Values another subject's memories also hold (they legitimately remain) are
    left out. Kept in memory only.

    Returns:
        (values, short values, statistics without values).
    """
    facts = sorted(set(session.scalars(select(Memory.fact).where(Memory.subject == subject))))
    accounts = session.execute(
        select(Principal.username, Principal.display_name, Principal.email).where(
            Principal.subject == subject
        )
    ).all()
    values: set[str] = set()
    for fact in facts:
        values.update((fact, normalise_fact(fact)))
        lines = [ln.strip() for ln in fact.splitlines()]
        if len(lines) > 1:
            values.update(ln for ln in lines if len(ln) >= _LINE_MIN_CHARS)
    pii, pii_status = _pii_spans(facts, settings)
    values.update(pii)
    for account in accounts:
        values.update(str(v) for v in account if v)
    values = {v.strip() for v in values if v.strip() and v.strip() != subject}
    minimum = settings.erasure_min_value_chars
    tiny = {v for v in values if len(v) < _SHORT_MIN_CHARS}
    short = {v for v in values if _SHORT_MIN_CHARS <= len(v) < minimum}
    values -= tiny | short
    shared = _shared_values(session, subject, values)
    shared_short = _shared_values(session, subject, short)
    return (
        values - shared,
        short - shared_short,
        {
            "searched": len(values - shared),
            "short_searched": len(short - shared_short),
            "too_short_to_search": len(tiny),
            "shared_with_other_subjects": len(shared) + len(shared_short),
            "pii_detector": pii_status,
        },
    )


def _shared_values(session: Session, subject: str, values: set[str]) -> set[str]:
    """Values that other subjects' memories hold too (not the erased subject's alone).

    One streaming pass over the other subjects' facts with an automaton of the values
    (decrypted by the column type when encryption is on), so the cost grows with the
    store, not with the store times the values.
    """
    if not values:
        return set()
    matcher = Matcher(values)
    shared: set[str] = set()
    rows = session.execute(
        select(Memory.fact)
        .where(Memory.subject != subject)
        .execution_options(yield_per=_BATCH_ROWS)
    )
    for (fact,) in rows:
        if fact:
            shared.update(matcher.found_needles(str(fact)))
            if len(shared) == len(matcher.needles):
                break
    return shared & values
