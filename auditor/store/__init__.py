"""The governed store: models, engine and session factory, migrations."""

from __future__ import annotations

from auditor.store.db import Database, redact_url
from auditor.store.models import Base, Memory, MemoryStatus

__all__ = ["Base", "Database", "Memory", "MemoryStatus", "redact_url"]
