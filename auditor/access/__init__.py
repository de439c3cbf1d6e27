"""The access-checked services that the dashboard calls, and the accounts behind them.

Owns: ``guard`` (the one access policy: every service re-reads the signed-in actor's
account before anything else, and every refusal is recorded), ``officer`` (overview,
memory search, audit log, rule statistics), ``officer_findings`` (review queue, finding
detail), ``officer_actions`` (actions on findings), ``review`` (previews, a memory's open
findings), ``admin`` (account management), ``user`` (a user's own memories, corrections,
deletes and export), ``erasure`` (the erasure pages), ``readers`` (read services shared
with the CLI), ``accounts`` (roles, the actor, passwords, account management), ``signin``
(sign-in with a password or OIDC), ``sessions``, ``lockout`` and ``signin_limits``.

May import: ``auditor.erasure``, ``auditor.sources``, ``auditor.scan``,
``auditor.rulepack``, ``auditor.lifecycle``, ``auditor.store`` and the top-level modules.
Never ``cli`` or the dashboard; the daemon may read ``lockout`` for its metrics.
"""
