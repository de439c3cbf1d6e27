"""``memaudit audit-log``: verify the hash chain, list the newest events.

Registered by :mod:`auditor.cli.main`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import click

from auditor.cli.context import (
    Ctx,
    emit_rows,
    listing_format,
    pass_ctx,
)
from auditor.exitcodes import ExitCode
from auditor.lifecycle.audit_key import audit_key

__all__ = ["audit_log_group"]


@click.group("audit-log")
def audit_log_group() -> None:
    """The tamper-evident audit log."""


@audit_log_group.command("verify")
@pass_ctx
def audit_log_verify(c: Ctx) -> None:
    """Check the hash chain; name the first bad event (exit 1 if broken)."""
    from auditor.lifecycle import audit_log

    db = c.db()
    with db.session() as session:
        result = audit_log.verify(session, key=audit_key(c.settings))
    if result.ok:
        click.echo(f"audit log OK: {result.checked} events verified")
        return
    ident = f" ({result.first_bad_event_id})" if result.first_bad_event_id else ""
    click.echo(
        f"audit log BROKEN at event {result.first_bad_seq}{ident}: {result.reason}; "
        f"{result.checked} events before it verified"
    )
    sys.exit(ExitCode.CHECK_FAILED)


@audit_log_group.command("list")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@listing_format
@pass_ctx
def audit_log_list(c: Ctx, limit: int, fmt: str) -> None:
    """The newest audit events."""
    from sqlalchemy import select

    from auditor.store.models import AuditEvent

    with c.db().session() as session:
        events = list(
            session.scalars(select(AuditEvent).order_by(AuditEvent.seq.desc()).limit(limit))
        )

    def rows() -> Iterator[dict[str, Any]]:
        for e in events:
            yield {
                "seq": e.seq,
                "ts": e.ts.isoformat(),
                "actor": e.actor,
                "action": e.action,
                "target_type": e.target_type,
                "target_ids": e.target_ids,
                "details": e.details,
                "hash": e.hash,
            }

    emit_rows(rows(), fmt, ["seq", "ts", "actor", "action", "target_ids"])
