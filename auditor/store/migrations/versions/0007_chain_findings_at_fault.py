"""Chain findings link only the memories at fault (data migration, no schema change).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-06

Until 0.x of 2026-12-06 the ``chains`` detector linked every memory a chain finding was
about: a still-active memory *and* the newer one that supersedes it (``active_superseded``),
a fork's target *and* its heads (``fork``), the trusted memory *and* the lower-tier one that
replaced it (``tier_inversion``). A reviewer's quarantine or delete acted on all of them,
the newer and the trusted memory included, and each was flagged. Since then a finding links
the memories at fault and names the others in its evidence (``context_ids``).

This migration rewrites the findings already stored so that a re-scan meets them again under
the same fingerprint, instead of resolving them and opening new ones (a dismissed finding
would have come back): links (renumbered), fingerprint, and the evidence's snippets and
content hashes of the memories now named as context. Findings that do not have the old
layout (already rewritten, or another detector's) are left alone, as is a finding whose new
fingerprint another finding already holds. Only findings of category lifecycle or trust
with two or more links are read (the chain rules' categories), so the migration is quick on
a store with millions of findings. Downgrading leaves the rows as they are.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_JSON = sa.JSON().with_variant(postgresql.JSONB(astext_type=sa.Text()), "postgresql")
_findings = sa.table(
    "findings",
    sa.column("finding_id", sa.String),
    sa.column("fingerprint", sa.String),
    sa.column("rule_id", sa.String),
    sa.column("category", sa.String),
    sa.column("evidence", _JSON),
)
_links = sa.table(
    "finding_memories",
    sa.column("finding_id", sa.String),
    sa.column("memory_id", sa.String),
    sa.column("position", sa.Integer),
)


def _fingerprint(rule_id: str, memory_ids: Sequence[str], hashes: Sequence[str]) -> str:
    # the formula of auditor.scan.findings.fingerprint at this revision, frozen here
    payload = "\x1f".join([rule_id, *memory_ids, "\x1e", *hashes])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _split(entity: str, linked: list[str], details: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(at fault, context) of a finding in the old layout, or ([], []) when it is not one."""
    if entity == "active_superseded" and len(linked) >= 2:
        if details.get("superseded_by", linked[1:]) == linked[1:]:
            return linked[:1], linked[1:]
    elif entity == "fork" and len(linked) >= 3:
        if details.get("target", linked[0]) == linked[0]:
            return linked[1:], linked[:1]
    elif entity == "tier_inversion" and len(linked) == 2 and "supersedes" not in details:
        return linked[1:], linked[:1]
    return [], []


def upgrade() -> None:
    conn = op.get_bind()
    several = (
        sa.select(_links.c.finding_id).group_by(_links.c.finding_id).having(sa.func.count() >= 2)  # noqa: PLR2004 - a chain finding of the old layout
    )
    rows = conn.execute(
        sa.select(_findings.c.finding_id, _findings.c.rule_id, _findings.c.evidence).where(
            _findings.c.category.in_(("lifecycle", "trust")),
            _findings.c.finding_id.in_(several),
        )
    ).all()
    for finding_id, rule_id, evidence in rows:
        if not isinstance(evidence, dict) or evidence.get("detector") != "chains":
            continue
        entities = evidence.get("entities") or []
        if len(entities) != 1:
            continue
        linked = list(
            conn.scalars(
                sa.select(_links.c.memory_id)
                .where(_links.c.finding_id == finding_id)
                .order_by(_links.c.position)
            )
        )
        at_fault, context = _split(entities[0], linked, evidence.get("details") or {})
        if not at_fault:
            continue
        hashes = evidence.get("content_hashes") or {}
        new_fp = _fingerprint(rule_id, at_fault, [hashes.get(m, "") for m in at_fault])
        if conn.scalar(sa.select(_findings.c.finding_id).where(_findings.c.fingerprint == new_fp)):
            continue
        rewritten = {
            **evidence,
            "snippets": {
                k: v for k, v in (evidence.get("snippets") or {}).items() if k not in context
            },
            "content_hashes": {k: v for k, v in hashes.items() if k not in context},
            "context_ids": context,
        }
        conn.execute(
            sa.update(_findings)
            .where(_findings.c.finding_id == finding_id)
            .values(fingerprint=new_fp, evidence=rewritten)
        )
        conn.execute(
            sa.delete(_links).where(
                _links.c.finding_id == finding_id, _links.c.memory_id.in_(context)
            )
        )
        for position, memory_id in enumerate(at_fault):
            conn.execute(
                sa.update(_links)
                .where(_links.c.finding_id == finding_id, _links.c.memory_id == memory_id)
                .values(position=position)
            )


def downgrade() -> None:
    """Nothing to undo: the old layout is not restored (a re-scan by an older memaudit would
    resolve these findings and open new ones in its own layout)."""
