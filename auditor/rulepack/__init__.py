"""The rule pack: YAML rules (policy as data) and the in-memory rule engine.

Owns: ``pack`` (loading, validating, linting and self-testing ``rules/*.yaml``) and
``engine`` (rules x detectors over memory views, with the prefilter; no database).

May import: ``auditor.detectors``, ``auditor.records``, ``auditor.vocab`` and the
top-level modules. Never the store, ``scan``, ``sources``, ``erasure``, ``access``,
``daemon`` or ``cli``.
"""
