"""The memory lifecycle: the state machine, trust-tier policy and the audit log.

Owns: ``machine`` (add, supersede, soft-delete, quarantine, expire, restore, and the
invariants of supersede chains), ``audit_log`` (the append-only, hash-chained events and
their verification), ``audit_key`` (the chain's HMAC key) and ``hooks`` (transition hooks:
the source outbox follows quarantines and restores without this package importing it).

May import: ``auditor.store``, ``auditor.records``, ``auditor.vocab`` and the other
top-level modules (config, errors, hashing, limits, logging). Never ``scan``, ``sources``,
``erasure``, ``access``, ``daemon`` or ``cli``.
"""
