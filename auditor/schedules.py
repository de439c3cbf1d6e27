"""Schedules of daemon jobs as text: a crontab line, ``every <n><s|m|h>``, or ``off``."""

from __future__ import annotations

import re

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

__all__ = ["parse_schedule"]

_EVERY = re.compile(r"^every\s+(\d+)\s*([smh])$")
_UNIT = {"s": "seconds", "m": "minutes", "h": "hours"}


def parse_schedule(spec: str, job: str = "job") -> BaseTrigger | None:
    """The APScheduler trigger for ``spec`` (None for ``off``), in UTC.

    Raises:
        ValueError: naming the job and what is wrong with its schedule.
    """
    text = spec.strip().lower()
    if text == "off":
        return None
    every = _EVERY.match(text)
    if every:
        amount = int(every.group(1))
        if amount <= 0:
            raise ValueError(f"schedule of {job}: the interval must be positive")
        return IntervalTrigger(**{_UNIT[every.group(2)]: amount}, timezone="UTC")
    try:
        return CronTrigger.from_crontab(spec.strip(), timezone="UTC")
    except ValueError as exc:
        raise ValueError(
            f"schedule of {job}: {spec!r} is neither a crontab line ('30 2 * * *'), "
            f"'every <n>s|m|h' nor 'off' ({exc})"
        ) from None
