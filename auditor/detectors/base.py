"""The small interface every detector implements, and the values it exchanges.

A detector looks at memories and says what it found; it never touches the database, never
decides severity or action (rules do that) and never sees more than it needs:

* ``scope = "memory"``: :meth:`Detector.analyze` gets one :class:`MemoryView` at a time
  (injection, sensitive data, secrets, expiry, size, provenance).
* ``scope = "subject"``: :meth:`Detector.analyze_group` gets every memory of one subject
  (contradictions, duplicates, supersede chains, hand-over notes): blocking by subject is
  how memaudit avoids comparing all pairs of a store.

Every :class:`Detection` explains itself: detector, entity, score, spans and a reason.
Reasons and details never carry the sensitive value itself; spans point at it instead.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from auditor.config import Settings
from auditor.hashing import content_hash

if TYPE_CHECKING:
    from auditor.detectors.prefilter import Needles
    from auditor.records import MemoryRecord
    from auditor.store.models import Memory

__all__ = [
    "DetectContext",
    "Detection",
    "Detector",
    "MemoryView",
    "Span",
]


@dataclass(frozen=True, slots=True)
class MemoryView:
    """What a detector sees of a memory: plain values, no database session."""

    memory_id: str
    subject: str
    fact: str
    trust_tier: str
    namespace: str = "default"
    kind: str = "semantic"
    category: str = "note"
    source_type: str | None = None
    source_uri: str | None = None
    status: str = "active"
    supersedes: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    expires_at: datetime | None = None
    confidence: float | None = None
    content_hash: str = ""
    origin: str | None = None
    access_count: int = 0
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_model(cls, m: Memory) -> MemoryView:
        """A view of a stored memory."""
        return cls(
            memory_id=m.memory_id,
            subject=m.subject,
            fact=m.fact,
            trust_tier=m.trust_tier,
            namespace=m.namespace,
            kind=m.kind,
            category=m.category,
            source_type=m.source_type,
            source_uri=m.source_uri,
            status=m.status,
            supersedes=m.supersedes,
            created_at=m.created_at,
            updated_at=m.updated_at,
            expires_at=m.expires_at,
            confidence=m.confidence,
            content_hash=m.content_hash,
            origin=m.origin,
            access_count=m.access_count,
            extra=dict(m.extra or {}),
        )

    @classmethod
    def from_record(cls, rec: MemoryRecord, settings: Settings) -> MemoryView:
        """A view of a validated record that is not stored (write guard, eval, rule tests)."""
        src = rec.source
        return cls(
            memory_id=rec.memory_id,
            subject=rec.subject,
            fact=rec.fact,
            trust_tier=settings.tier_for(src.type if src else None),
            namespace=rec.namespace,
            kind=rec.kind,
            category=rec.category,
            source_type=src.type if src else None,
            source_uri=src.uri if src else None,
            status=rec.status or "active",
            supersedes=rec.supersedes,
            created_at=rec.created_at,
            updated_at=rec.updated_at or rec.created_at,
            expires_at=rec.expires_at,
            confidence=rec.confidence,
            content_hash=content_hash(rec.fact),
            origin=None,
            access_count=rec.access_count,
            extra=rec.extra_fields,
        )


@dataclass(frozen=True, slots=True)
class Span:
    """Where in a memory's fact something was found (character offsets, end exclusive)."""

    start: int
    end: int
    label: str
    memory_id: str | None = None  # for pair detections: which memory the span is in


@dataclass(frozen=True, slots=True)
class Detection:
    """One thing a detector found, explaining itself.

    Attributes:
        memory_ids: the memory, or the memories (a pair, a chain) at fault; ordered. A
            finding links, flags, acts on and fingerprints these.
        detector: the detector's name.
        entity: what was found, e.g. ``instruction_override``, ``EMAIL_ADDRESS``,
            ``slot_conflict``, ``dangling_link``; rules select on it.
        score: confidence 0..1.
        reason: a sentence for a reviewer; never the sensitive value itself.
        spans: where it is in the fact(s).
        details: pattern ids, context words, validation, a suggested resolution, ...
        context_ids: memories the finding is about without being at fault (the newer
            memory that supersedes a still-active one, a fork's target): named in the
            evidence for a reviewer and counted by an incremental scan's focus, but never
            flagged, acted on or part of the fingerprint.
    """

    memory_ids: tuple[str, ...]
    detector: str
    entity: str
    score: float
    reason: str
    spans: tuple[Span, ...] = ()
    details: Mapping[str, Any] = field(default_factory=dict)
    context_ids: tuple[str, ...] = ()


@dataclass
class DetectContext:
    """What detectors may know beyond the memories themselves.

    Attributes:
        now: the time of the scan (expiry is judged against it).
        settings: memaudit settings.
        consents: subject -> categories it explicitly opted in to (and not revoked).
        lookup: resolves a memory id outside the group (chain detectors), or None.
        judge: the optional LLM judge (contradictions, injection second opinion), or None.
        focus: in an incremental scan, the memories that changed: subject detectors need
            only report (and may only compute) pairs and groups involving one of them.
            None means everything is in focus (full scans, eval, rule tests).
    """

    now: datetime
    settings: Settings
    consents: Mapping[str, frozenset[str]] = field(default_factory=dict)
    lookup: Callable[[str], MemoryView | None] | None = None
    judge: Any = None
    focus: frozenset[str] | None = None


class Detector(abc.ABC):
    """Base class of detectors; concrete ones are mostly data plus a small ``analyze``.

    Args:
        params: the rule's ``params`` (validated by the subclass; raise ``ValueError`` with
            the parameter's name for a bad one).
    """

    name: ClassVar[str]
    scope: ClassVar[Literal["memory", "subject"]] = "memory"

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        self.params: dict[str, Any] = dict(params or {})

    def analyze(self, memory: MemoryView, ctx: DetectContext) -> list[Detection]:
        """Detections in one memory (``scope = "memory"``)."""
        raise TypeError(f"detector {self.name} works on subjects, not single memories")

    def prepare(self, memories: Sequence[MemoryView]) -> None:
        """A hint: these memories (one batch of a scan) are about to be analysed.

        A detector whose per-memory work is cheaper in bulk may do it here for all of them
        and keep the results for :meth:`analyze`; it must not change what :meth:`analyze`
        returns, which still works for a memory never prepared. The default does nothing.
        """
        return  # noqa: PLR1711 - a hook: most detectors have nothing to do in bulk

    def prefilter_needles(self) -> Mapping[str, Needles] | None:
        """Per part of this detector, what a text must contain for the part to find anything.

        None (the default): the detector runs on every memory. Otherwise the parts together
        cover everything :meth:`analyze` can find: when no part's needle occurs in a text,
        :meth:`analyze` returns nothing, and the engine does not call it
        (:mod:`auditor.detectors.prefilter`). Called once, when the engine is built.
        """
        return None

    def analyze_parts(
        self, memory: MemoryView, ctx: DetectContext, parts: frozenset[str]
    ) -> list[Detection]:
        """:meth:`analyze`, told which parts the prefilter let through (at least one).

        The result must equal :meth:`analyze`'s; a detector with costly parts overrides this
        to skip the others. The default ignores ``parts``.
        """
        return self.analyze(memory, ctx)

    def analyze_group(self, memories: Sequence[MemoryView], ctx: DetectContext) -> list[Detection]:
        """Detections among the memories of one subject (``scope = "subject"``)."""
        raise TypeError(f"detector {self.name} works on single memories, not subjects")
