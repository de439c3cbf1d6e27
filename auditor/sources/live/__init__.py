"""Connectors: external memory stores (mem0, LangGraph stores, SQL tables, Memoryfields)
that memaudit audits where they live, and into which it carries quarantine and erasure.

``KINDS`` maps a source kind to ``"module:class"`` (imported on use, so a heavy optional
dependency such as mem0 loads only when a mem0 source is configured).
"""

from __future__ import annotations

import importlib

from auditor.config import Settings
from auditor.errors import InputError
from auditor.sources.live.base import Connector, NotSupported, SourceConfig

__all__ = ["KINDS", "Connector", "NotSupported", "SourceConfig", "open_connector"]

KINDS: dict[str, str] = {
    "jsonl": "auditor.sources.live.files:JsonlConnector",
    "memoryfield": "auditor.sources.live.memoryfield:MemoryfieldConnector",
    "sql-table": "auditor.sources.live.sql_table:SqlTableConnector",
    "langgraph-sqlite": "auditor.sources.live.langgraph:LangGraphSqliteConnector",
    "langgraph-postgres": "auditor.sources.live.langgraph:LangGraphPostgresConnector",
    "mem0": "auditor.sources.live.mem0:Mem0Connector",
}


def open_connector(config: SourceConfig, settings: Settings) -> Connector:
    """The connector for a configured source.

    Raises:
        InputError: unknown kind.
    """
    target = KINDS.get(config.kind)
    if target is None:
        raise InputError(
            f"source {config.name!r}: unknown kind {config.kind!r}; kinds: {', '.join(KINDS)}"
        )
    module_name, _, class_name = target.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    connector: Connector = cls(config, settings)
    return connector
