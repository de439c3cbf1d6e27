"""The ``memaudit`` command: one module per group of commands.

Owns: ``main`` (the group, the store and scan commands), ``context`` (what every command
module shares: the per-invocation context and output), ``terminal`` (record data made
inert for a terminal) and the command groups ``dashboard``, ``erasure``, ``keys``,
``sources`` and ``users``.

May import anything in ``auditor``; nothing imports it but ``auditor.__main__``.
"""
