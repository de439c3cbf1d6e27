"""Facts past their time: an ``expires_at`` that has passed, or a category's TTL policy.

Entities:

* ``expired``: ``expires_at`` is before the scan time (``ctx.now``). Details say how long ago
  (seconds and days) and when.
* ``ttl_exceeded``: the memory's category has a time-to-live in ``params.ttl_days`` and the
  memory is older than that, counted from ``updated_at`` (the last time the fact was stated
  or confirmed; ``created_at`` when there is none). A memory with its own ``expires_at`` is
  judged by that date only, unless ``params.ttl_overrides_expires_at`` is true.

Params:
    ttl_days: category -> days, e.g. ``{schedule: 30, travel: 14, session: 90}`` (default: none,
        so only ``expires_at`` is checked).
    age_from: ``updated_at`` (default) or ``created_at``.
    ttl_overrides_expires_at: also apply the TTL to memories that carry ``expires_at``
        (default false).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from auditor.detectors.base import DetectContext, Detection, Detector, MemoryView

__all__ = ["ExpiryDetector"]

_DAY = 86_400.0
_AGE_FIELDS = ("updated_at", "created_at")


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _days(seconds: float) -> float:
    return round(seconds / _DAY, 2)


def _ago(seconds: float) -> str:
    """A human duration: ``3 days``, ``5 hours``, ``12 minutes``."""
    if seconds >= 2 * _DAY:
        return f"{int(seconds // _DAY)} days"
    if seconds >= 7200:
        return f"{int(seconds // 3600)} hours"
    return f"{max(1, int(seconds // 60))} minutes"


class ExpiryDetector(Detector):
    """Memories past ``expires_at`` or past their category's TTL (see the module docstring).

    Raises:
        ValueError: a bad parameter (the message names it).
    """

    name = "expiry"
    scope = "memory"

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        raw = self.params.get("ttl_days") or {}
        if not isinstance(raw, Mapping):
            raise ValueError("ttl_days must map categories to a number of days")
        ttl: dict[str, float] = {}
        for category, days in raw.items():
            if isinstance(days, bool) or not isinstance(days, int | float) or days <= 0:
                raise ValueError(f"ttl_days.{category} must be a positive number of days")
            ttl[str(category)] = float(days)
        self._ttl = ttl
        age_from = self.params.get("age_from", "updated_at")
        if age_from not in _AGE_FIELDS:
            raise ValueError(f"age_from must be one of {', '.join(_AGE_FIELDS)}")
        self._age_from: str = age_from
        self._ttl_overrides = bool(self.params.get("ttl_overrides_expires_at", False))

    def analyze(self, memory: MemoryView, ctx: DetectContext) -> list[Detection]:
        """An ``expired`` and/or a ``ttl_exceeded`` detection for one memory."""
        now = _aware(ctx.now)
        out: list[Detection] = []
        if memory.expires_at is not None:
            expires = _aware(memory.expires_at)
            if expires <= now:
                late = (now - expires).total_seconds()
                out.append(
                    Detection(
                        memory_ids=(memory.memory_id,),
                        detector=self.name,
                        entity="expired",
                        score=1.0,
                        reason=f"expires_at passed {_ago(late)} ago; the fact is no longer valid",
                        details={
                            "expires_at": expires.isoformat(),
                            "now": now.isoformat(),
                            "expired_seconds_ago": int(late),
                            "expired_days_ago": _days(late),
                        },
                    )
                )
        ttl = self._ttl.get(memory.category)
        if ttl is None or (memory.expires_at is not None and not self._ttl_overrides):
            return out
        stamp = memory.updated_at if self._age_from == "updated_at" else memory.created_at
        field_used = self._age_from
        if stamp is None:
            stamp, field_used = memory.created_at, "created_at"
        if stamp is None:
            return out
        age = (now - _aware(stamp)).total_seconds()
        if age > ttl * _DAY:
            out.append(
                Detection(
                    memory_ids=(memory.memory_id,),
                    detector=self.name,
                    entity="ttl_exceeded",
                    score=0.8,
                    reason=(
                        f"category '{memory.category}' keeps facts for {ttl:g} days; this one "
                        f"is {int(age // _DAY)} days old (from {field_used})"
                    ),
                    details={
                        "category": memory.category,
                        "ttl_days": ttl,
                        "age_days": _days(age),
                        "over_by_days": _days(age - ttl * _DAY),
                        "age_from": field_used,
                        "stamp": _aware(stamp).isoformat(),
                    },
                )
            )
        return out
