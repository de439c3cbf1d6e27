"""Everything that reads or writes another memory store.

Owns: ``files`` (one-shot importers: jsonl, Memoryfield, kv, state), ``live`` (connectors
to stores audited where they live: mem0, LangGraph, SQL tables, Memoryfields),
``importer`` (writing what a source yields into the store) and ``import_stale``,
``registry`` (configured live sources and their secrets), ``sync`` (mirroring live sources
on schedule), ``outbox`` (quarantine, restore and erasure carried back into a source),
``writeback`` (where a memory stands between memaudit's decision and its source) and
``reconcile`` (after a sync, does the source hold what memaudit decided?).

May import: ``auditor.lifecycle``, ``auditor.store``, ``auditor.records``, the residue
search of ``auditor.store.residue`` (a connector purges a subject's values) and the
top-level modules. Never ``scan``, ``access``, ``daemon`` or ``cli``.
"""
