"""The daemon: scheduled jobs, one scheduler among many replicas, health and metrics.

Owns: ``runner`` (APScheduler jobs, the leader lock, the health and metrics endpoint,
graceful stop).

May import: ``auditor.scan``, ``auditor.sources``, ``auditor.erasure``, ``auditor.judge``,
``auditor.lifecycle``, ``auditor.store`` and the top-level modules. Never ``access``,
``cli`` or the dashboard.
"""
