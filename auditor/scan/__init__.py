"""The scan engine: select -> detect -> dedupe findings -> act -> record.

Owns: ``scanner`` (a scan run over the store: selection, shards, batches), ``recorder``
(a batch's findings, evidence, actions and auto-resolution), ``runs`` (run and shard
states, the run summary, closing a run), ``workers`` (its shards in worker
processes on one machine), ``shards`` (shards as procrastinate jobs across replicas),
``stale`` (runs left behind by a dead process), ``findings`` (fingerprints, listing,
status changes), ``evidence`` (redacted snippets), ``review`` (reviewer actions, shared by
the CLI and the dashboard) and ``guard`` (the rule pack on one candidate before it is
stored). This is the only package that joins rules, detectors and the store.

May import: ``auditor.rulepack``, ``auditor.detectors``, ``auditor.judge``,
``auditor.lifecycle``, ``auditor.store`` and the top-level modules. Never ``sources``,
``erasure``, ``access``, ``daemon``, ``cli`` or the dashboard.
"""
