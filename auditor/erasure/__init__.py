"""The right to erasure: requests, execution, verification, receipts, backups.

Owns: ``requests`` (the front door: request, approve, execute, the queue's entry
points), ``states`` (execution as durable, resumable states) and ``queue``, ``execute``
(the delete itself), ``values`` and ``subjects`` (what identifies a subject, and which
subject is meant; the search for a subject's data anywhere is
:mod:`auditor.store.residue`), ``storage``
(reclaiming storage, the ledger, verification), ``receipts`` and ``verify``,
``audit_redaction`` (the subject's own audit events only), ``keys`` (the subject's data
key destroyed first), ``backup`` and ``scratch`` (backups and restores that keep erased
subjects erased), ``files`` (owner-only files), ``common`` (what every part shares).

May import: ``auditor.sources`` (the outbox carries erasures into live sources),
``auditor.scan``, ``auditor.lifecycle``, ``auditor.judge``, ``auditor.store`` and the
top-level modules. Never ``access``, ``daemon`` or ``cli``.
"""
