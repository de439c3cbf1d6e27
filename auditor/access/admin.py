"""Account management for admins, and a password change for anyone signed in.

Thin access-checked wrappers over :mod:`auditor.access.accounts`: each re-reads the actor's
account through :func:`auditor.access.guard.require_role` first (admins only, except
:func:`change_my_password`, which any role may call for itself), and every refusal is
recorded by :func:`auditor.access.guard.guard`. The account events themselves
(``account.added``, ``account.role_changed``, ...) are written by ``accounts``.
"""

from __future__ import annotations

from auditor.access import accounts, signin
from auditor.access.accounts import Account, Actor
from auditor.access.guard import ADMIN_ROLES, guard, require_role
from auditor.store.db import Database

__all__ = [
    "add_account",
    "change_my_password",
    "delete_account",
    "disable_account",
    "enable_account",
    "list_accounts",
    "set_account_password",
    "set_account_role",
]


def _admin(db: Database, actor: Actor, attempted: str) -> None:
    with guard(db, actor, attempted), db.session() as session:
        require_role(session, actor, ADMIN_ROLES, attempted)


def list_accounts(db: Database, actor: Actor, role: str | None = None) -> list[Account]:
    """Every account (admin only). See :func:`auditor.access.accounts.list_users`.

    Raises:
        AccessDenied: the actor is not an admin.
    """
    _admin(db, actor, "list_accounts")
    return accounts.list_users(db, role)


def add_account(
    db: Database,
    actor: Actor,
    username: str,
    *,
    role: str,
    subject: str | None = None,
    password: str | None = None,
    display_name: str | None = None,
    email: str | None = None,
) -> Account:
    """Create an account (admin only). See :func:`auditor.access.accounts.add_user`.

    Raises:
        AccessDenied: the actor is not an admin.
        InputError: see :func:`auditor.access.accounts.add_user`.
    """
    _admin(db, actor, "add_account")
    return accounts.add_user(
        db,
        username,
        role=role,
        subject=subject,
        password=password,
        display_name=display_name,
        email=email,
        by=actor.username,
    )


def set_account_password(db: Database, actor: Actor, username: str, password: str) -> None:
    """Set an account's password (admin only). See :func:`auditor.access.accounts.set_password`.

    Raises:
        AccessDenied: the actor is not an admin.
    """
    _admin(db, actor, "set_account_password")
    accounts.set_password(db, username, password, by=actor.username)


def set_account_role(
    db: Database, actor: Actor, username: str, role: str, *, subject: str | None = None
) -> Account:
    """Change an account's role or subject (admin only).

    See :func:`auditor.access.accounts.set_role`.

    Raises:
        AccessDenied: the actor is not an admin.
    """
    _admin(db, actor, "set_account_role")
    return accounts.set_role(db, username, role, subject=subject, by=actor.username)


def disable_account(db: Database, actor: Actor, username: str) -> Account:
    """Disable an account (admin only). See :func:`auditor.access.accounts.disable_user`.

    Raises:
        AccessDenied: the actor is not an admin.
    """
    _admin(db, actor, "disable_account")
    return accounts.disable_user(db, username, by=actor.username)


def enable_account(db: Database, actor: Actor, username: str) -> Account:
    """Enable an account (admin only). See :func:`auditor.access.accounts.enable_user`.

    Raises:
        AccessDenied: the actor is not an admin.
    """
    _admin(db, actor, "enable_account")
    return accounts.enable_user(db, username, by=actor.username)


def delete_account(db: Database, actor: Actor, username: str) -> None:
    """Delete an account (admin only). See :func:`auditor.access.accounts.delete_user`.

    Raises:
        AccessDenied: the actor is not an admin.
    """
    _admin(db, actor, "delete_account")
    accounts.delete_user(db, username, by=actor.username)


def change_my_password(
    db: Database, actor: Actor, current_password: str, new_password: str
) -> None:
    """Change the actor's own local password (any role), given the current one.

    Raises:
        AccessDenied: the session no longer matches the account.
        AuthError: the current password is wrong, or the account is locked (recorded as
            ``account.password_change_failed``; failures count towards the lockout, see
            :func:`auditor.access.signin.check_current_password`).
        InputError: the new password breaks the policy.
    """
    with guard(db, actor, "change_my_password"), db.session() as session:
        require_role(session, actor, (actor.role,), "change_my_password")
    signin.check_current_password(db, actor.username, current_password)
    accounts.set_password(db, actor.username, new_password, by=actor.username)
