"""``memaudit users``: dashboard accounts from the command line.

Whoever runs these commands can already write the database, so they are not checked
against a dashboard role; they are attributed (``--by``, default ``cli:<login name>``) and
recorded as ``account.*`` audit events. A password is never an argument (it would land in
the shell history and the process list): it comes from ``--password-file FILE`` (``-`` for
standard input; one line), the environment variable ``MEMAUDIT_NEW_PASSWORD``, or a
hidden prompt asked twice.
"""

from __future__ import annotations

import getpass
import os
from typing import IO, TYPE_CHECKING, Any

import click

from auditor.errors import InputError
from auditor.vocab import ROLES

if TYPE_CHECKING:
    from auditor.cli.context import Ctx

__all__ = ["PASSWORD_ENV", "users"]

#: The environment variable a new password may come from (scripts, containers).
PASSWORD_ENV = "MEMAUDIT_NEW_PASSWORD"
_COLUMNS = ["username", "role", "subject", "email", "disabled", "password_set", "last_sign_in_at"]


def _default_by() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):  # no login name in a bare container
        return "cli"


by_option = click.option(
    "--by",
    "by",
    default=None,
    metavar="WHO",
    help="Who makes the change, for the audit log (default: cli:<login name>).",
)
password_file_option = click.option(
    "--password-file",
    type=click.File("r", encoding="utf-8"),
    default=None,
    metavar="FILE",
    help=f"Read the password from the first line of FILE (- for stdin); else ${PASSWORD_ENV}, "
    "else a prompt.",
)


def _read_password(password_file: IO[str] | None) -> str:
    """The new password: from the file, the environment, or a hidden prompt asked twice."""
    if password_file is not None:
        line = password_file.readline().rstrip("\r\n")
        if not line:
            raise InputError("the password file's first line is empty")
        return line
    from_env = os.environ.get(PASSWORD_ENV)
    if from_env:
        return from_env
    value: str = click.prompt("New password", hide_input=True, confirmation_prompt=True, err=True)
    return value


def _say(text: str) -> None:
    from auditor.cli.context import err_console

    err_console.print(text, markup=False, highlight=False)


@click.group("users")
def users() -> None:
    """Dashboard accounts: add, list, passwd, set-role, disable, enable, delete."""


@users.command("add")
@click.argument("username")
@click.option("--role", type=click.Choice(ROLES), required=True, help="user, officer or admin.")
@click.option("--subject", default=None, help="The one subject a user sees, e.g. user:42.")
@click.option("--email", default=None, help="E-mail an OIDC sign-in is matched by.")
@click.option("--display-name", default=None, help="A name to show in the dashboard.")
@click.option(
    "--no-password", is_flag=True, help="No local password: the account signs in via OIDC."
)
@password_file_option
@by_option
@click.pass_obj
def users_add(
    c: Ctx,
    username: str,
    role: str,
    subject: str | None,
    email: str | None,
    display_name: str | None,
    no_password: bool,
    password_file: IO[str] | None,
    by: str | None,
) -> None:
    """Add an account (a user needs --subject)."""
    from auditor.access import accounts

    if no_password and password_file is not None:
        raise InputError("give --no-password or --password-file, not both")
    password = None if no_password else _read_password(password_file)
    account = accounts.add_user(
        c.db(),
        username,
        role=role,
        subject=subject,
        email=email,
        display_name=display_name,
        password=password,
        by=by or _default_by(),
    )
    _say(f"added {account.role} {account.username}")


@users.command("list")
@click.option("--role", type=click.Choice(ROLES), default=None, help="Only this role.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "csv"]),
    default="table",
    show_default=True,
    help="table for people; json (an array) or csv for scripts.",
)
@click.pass_obj
def users_list(c: Ctx, role: str | None, fmt: str) -> None:
    """List the accounts (never a password hash)."""
    from auditor.access import accounts
    from auditor.cli.context import emit_rows

    rows: list[dict[str, Any]] = [a.as_dict() for a in accounts.list_users(c.db(), role)]
    emit_rows(rows, fmt, _COLUMNS)


@users.command("passwd")
@click.argument("username")
@password_file_option
@by_option
@click.pass_obj
def users_passwd(c: Ctx, username: str, password_file: IO[str] | None, by: str | None) -> None:
    """Set an account's password (and lift a sign-in lockout)."""
    from auditor.access import accounts

    password = _read_password(password_file)
    accounts.set_password(c.db(), username, password, by=by or _default_by())
    _say(f"password set for {accounts.normalise_username(username)}")


@users.command("set-role")
@click.argument("username")
@click.argument("role", type=click.Choice(ROLES))
@click.option("--subject", default=None, help="The subject, when the role is user.")
@by_option
@click.pass_obj
def users_set_role(c: Ctx, username: str, role: str, subject: str | None, by: str | None) -> None:
    """Change an account's role (and, for a user, its subject)."""
    from auditor.access import accounts

    account = accounts.set_role(c.db(), username, role, subject=subject, by=by or _default_by())
    _say(f"{account.username} is now {account.role}")


@users.command("disable")
@click.argument("username")
@by_option
@click.pass_obj
def users_disable(c: Ctx, username: str, by: str | None) -> None:
    """Disable an account: no sign-in, and its open sessions are refused."""
    from auditor.access import accounts

    account = accounts.disable_user(c.db(), username, by=by or _default_by())
    _say(f"disabled {account.username}")


@users.command("enable")
@click.argument("username")
@by_option
@click.pass_obj
def users_enable(c: Ctx, username: str, by: str | None) -> None:
    """Enable an account again (also lifts a sign-in lockout)."""
    from auditor.access import accounts

    account = accounts.enable_user(c.db(), username, by=by or _default_by())
    _say(f"enabled {account.username}")


@users.command("delete")
@click.argument("username")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@by_option
@click.pass_obj
def users_delete(c: Ctx, username: str, yes: bool, by: str | None) -> None:
    """Delete an account (its audit events stay)."""
    from auditor.access import accounts

    name = accounts.normalise_username(username)
    if not yes:
        click.confirm(f"delete account {name}?", abort=True, err=True)
    accounts.delete_user(c.db(), name, by=by or _default_by())
    _say(f"deleted {name}")
