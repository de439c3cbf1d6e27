"""The write guard: the rule pack applied to one candidate memory before it is stored.

An agent's memory layer calls :meth:`WriteGuard.check` inline (SEEDS.md section 1, defence
2: write validation) and gets ``allow``, ``quarantine`` (store it, held from retrieval until
reviewed) or ``reject`` (do not store), with the reasons. Only per-memory rules run (no
database, no LLM), so a check takes well under a millisecond on average; ``memaudit bench``
measures it.

Decision: a hit of a rule with severity ``critical`` and an automatic action rejects; any
other hit of a rule whose action is ``quarantine`` quarantines; other hits are reported
with ``allow``. Consented special categories are allowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from auditor.config import Settings
from auditor.detectors.base import DetectContext, MemoryView
from auditor.records import MemoryRecord, parse_record
from auditor.rulepack.engine import Engine
from auditor.rulepack.pack import RulePack
from auditor.store.types import utcnow

__all__ = ["Verdict", "WriteGuard"]

Decision = Literal["allow", "quarantine", "reject"]


@dataclass(frozen=True)
class Verdict:
    """The guard's answer for one candidate."""

    decision: Decision
    reasons: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"decision": self.decision, "reasons": self.reasons, "errors": self.errors}


class WriteGuard:
    """Judges candidate memories with the per-memory rules of a pack.

    Args:
        pack: the rule pack.
        settings: memaudit settings (trust policy, limits).
    """

    def __init__(self, pack: RulePack, settings: Settings) -> None:
        self.settings = settings
        self.engine = Engine(pack.active())
        self.engine.subject_groups = []  # subject rules need the store: not inline

    def check(
        self,
        candidate: MemoryRecord | Mapping[str, Any],
        *,
        consents: frozenset[str] = frozenset(),
        now: datetime | None = None,
    ) -> Verdict:
        """Judge one candidate record.

        Raises:
            RecordError: the candidate is not a valid record.
        """
        record = (
            candidate
            if isinstance(candidate, MemoryRecord)
            else parse_record(dict(candidate), "candidate", self.settings)
        )
        view = MemoryView.from_record(record, self.settings)
        ctx = DetectContext(
            now=now or utcnow(),
            settings=self.settings,
            consents={view.subject: consents} if consents else {},
        )
        hits, errors = self.engine.run_memory(view, ctx)
        decision: Decision = "allow"
        reasons: list[dict[str, Any]] = []
        for h in hits:
            if h.detection.details.get("allowed_by_consent"):
                continue
            rule = h.rule
            reasons.append(
                {
                    "rule_id": rule.id,
                    "title": rule.title,
                    "category": rule.category,
                    "severity": rule.severity,
                    "action": rule.action,
                    "entity": h.detection.entity,
                    "score": round(h.detection.score, 4),
                    "reason": h.detection.reason,
                }
            )
            if rule.severity == "critical" and rule.action != "flag":
                decision = "reject"
            elif rule.action == "quarantine" and decision != "reject":
                decision = "quarantine"
        return Verdict(decision, reasons, [e.error for e in errors])
