"""accounts: sign-in columns on principals (e-mail, OIDC identity, lockout, times).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01

Dashboard accounts live in ``principals`` (created by 0001). This revision adds what
sign-in needs: ``email`` (unique; how a pre-registered account is found on its first OIDC
sign-in), ``oidc_issuer`` + ``oidc_subject`` (unique together; the OIDC identity the
account is bound to), ``password_changed_at``, ``last_sign_in_at``, and the brute-force
lockout (``failed_sign_ins``, ``locked_until``). Existing rows keep working: every new
column is nullable or has a server default.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

import auditor.store.types

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_TS = auditor.store.types.UTCDateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("principals", schema=None) as batch_op:
        batch_op.add_column(sa.Column("email", sa.String(length=320), nullable=True))
        batch_op.add_column(sa.Column("oidc_issuer", sa.String(length=512), nullable=True))
        batch_op.add_column(sa.Column("oidc_subject", sa.String(length=256), nullable=True))
        batch_op.add_column(sa.Column("password_changed_at", _TS, nullable=True))
        batch_op.add_column(sa.Column("last_sign_in_at", _TS, nullable=True))
        batch_op.add_column(
            sa.Column("failed_sign_ins", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.add_column(sa.Column("locked_until", _TS, nullable=True))
        batch_op.create_unique_constraint(batch_op.f("uq_principals_email"), ["email"])
        batch_op.create_unique_constraint(
            batch_op.f("uq_principals_oidc_issuer_oidc_subject"), ["oidc_issuer", "oidc_subject"]
        )


def downgrade() -> None:
    with op.batch_alter_table("principals", schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f("uq_principals_oidc_issuer_oidc_subject"), type_="unique"
        )
        batch_op.drop_constraint(batch_op.f("uq_principals_email"), type_="unique")
        batch_op.drop_column("locked_until")
        batch_op.drop_column("failed_sign_ins")
        batch_op.drop_column("last_sign_in_at")
        batch_op.drop_column("password_changed_at")
        batch_op.drop_column("oidc_subject")
        batch_op.drop_column("oidc_issuer")
        batch_op.drop_column("email")
