"""The ``memaudit`` command: one module per group of commands.

Owns: ``main`` (the root group, ``init``, ``summary``, ``import``, ``export``, ``daemon``
and the entry point with the exit-code contract), ``context`` (what every command module
shares: the per-invocation context, output, the ``--rules`` option), ``terminal`` (record
data made inert for a terminal) and the command modules ``memories``, ``audit_log``,
``rules``, ``scanning`` (scan, findings, review, guard), ``tools`` (eval, bench, budget),
``dashboard``, ``erasure``, ``keys``, ``sources`` and ``users``.

May import anything in ``auditor``; nothing imports it but ``auditor.__main__``.
"""
