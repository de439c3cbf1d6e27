"""Column types shared by the models: timezone-aware UTC datetimes and portable JSON."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, overload

from sqlalchemy import JSON, DateTime
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

__all__ = ["JSONType", "UTCDateTime", "iso_utc", "utcnow"]


def utcnow() -> datetime:
    """The current time, timezone-aware, in UTC."""
    return datetime.now(UTC)


@overload
def iso_utc(value: datetime) -> str: ...
@overload
def iso_utc(value: None) -> None: ...
def iso_utc(value: datetime | None) -> str | None:
    """A UTC datetime as ISO 8601 with ``Z`` (``2026-12-03T07:40:00Z``); None stays None.

    The one text form of a timestamp in listings, exports, receipts and reports.
    """
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


class UTCDateTime(TypeDecorator[datetime]):
    """A datetime that is always timezone-aware UTC in Python.

    PostgreSQL stores ``timestamptz``; SQLite stores the UTC wall time. A naive value
    written by Python code is refused (it would be ambiguous); inputs from files are
    normalised to UTC by the importers before they get here.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValueError("naive datetime given to a UTC column; attach a timezone first")
        value = value.astimezone(UTC)
        if dialect.name == "sqlite":
            return value.replace(tzinfo=None)
        return value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


JSONType: Any = JSON().with_variant(JSONB(), "postgresql")
