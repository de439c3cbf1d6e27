"""``memaudit dashboard``: run the Streamlit dashboard (``dashboard/app.py``).

The command checks the store, optionally creates the demo accounts, then replaces itself
with ``python -m streamlit run dashboard/app.py`` and server settings that are safe by
default: bound to 127.0.0.1, headless, XSRF protection on, no usage statistics, no file
watcher, and no error details (tracebacks) sent to browsers. The store and the settings
reach the dashboard through the environment (``MEMAUDIT_DATABASE_URL``,
``MEMAUDIT_CONFIG``), never through the command line (a URL may hold a password).

The dashboard's files are found beside the ``auditor`` package (a source checkout or an
editable install, as ``make run`` makes).
"""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from auditor.errors import ConfigError, NotFoundError

if TYPE_CHECKING:
    from auditor.cli.context import Ctx
    from auditor.store.db import Database

__all__ = [
    "DEFAULT_HOST",
    "DEFAULT_PORT",
    "DEMO_OFFICER",
    "DEMO_OFFICER_PASSWORD_ENV",
    "DEMO_SUBJECT",
    "DEMO_USER",
    "DEMO_USER_PASSWORD_ENV",
    "app_path",
    "dashboard",
    "ensure_demo_accounts",
    "streamlit_command",
]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8501
#: The demo accounts ``make run`` creates (``--demo-accounts``).
DEMO_OFFICER = "demo-officer"
DEMO_USER = "demo-user"
#: The demo store's subject the demo user is bound to (it has findings of several kinds).
DEMO_SUBJECT = "user:sam.okafor"
DEMO_OFFICER_PASSWORD_ENV = "MEMAUDIT_DEMO_OFFICER_PASSWORD"
DEMO_USER_PASSWORD_ENV = "MEMAUDIT_DEMO_USER_PASSWORD"
_DEMO_BY = "demo"


def app_path() -> Path:
    """The dashboard's entry point: ``dashboard/app.py`` beside the ``auditor`` package (a
    source checkout or an editable install), else the copy a wheel carries inside it
    (``auditor/_dashboard/app.py``: the container image).

    Raises:
        ConfigError: the dashboard files are not there (an install without them).
    """
    package = Path(__file__).resolve().parents[1]
    candidates = (package.parent / "dashboard" / "app.py", package / "_dashboard" / "app.py")
    for path in candidates:
        if path.is_file():
            return path
    raise ConfigError(
        f"the dashboard files are not installed (looked for {candidates[0]} and "
        f"{candidates[1]}); install memaudit from its source or its wheel"
    )


def streamlit_command(host: str, port: int) -> list[str]:
    """The command line that serves the dashboard (no secrets: those go by environment)."""
    return [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app_path()),
        "--server.headless=true",
        f"--server.address={host}",
        f"--server.port={port}",
        "--server.enableXsrfProtection=true",
        "--server.enableCORS=true",
        "--server.fileWatcherType=none",
        "--server.runOnSave=false",
        "--server.showEmailPrompt=false",
        "--browser.gatherUsageStats=false",
        "--client.showErrorDetails=none",
        "--client.toolbarMode=minimal",
        "--global.developmentMode=false",
        "--logger.level=warning",
    ]


def _say(text: str) -> None:
    from auditor.cli.terminal import echo

    echo(text, err=True)


def ensure_demo_accounts(db: Database) -> list[tuple[str, str, str | None]]:
    """Create the demo officer and demo user if missing (idempotent).

    A password comes from ``MEMAUDIT_DEMO_OFFICER_PASSWORD`` / ``MEMAUDIT_DEMO_USER_PASSWORD``
    when set (and is then also set on an existing account); otherwise a random one is made
    for a new account and returned, so it can be shown once. An existing account keeps its
    password.

    Args:
        db: the store.

    Returns:
        ``(username, role, generated password or None)`` per demo account.
    """
    from auditor.access import accounts

    out: list[tuple[str, str, str | None]] = []
    for username, role, subject, env in (
        (DEMO_OFFICER, "officer", None, DEMO_OFFICER_PASSWORD_ENV),
        (DEMO_USER, "user", DEMO_SUBJECT, DEMO_USER_PASSWORD_ENV),
    ):
        given = os.environ.get(env) or None
        try:
            accounts.get_user(db, username)
            exists = True
        except NotFoundError:
            exists = False
        if exists:
            if given is not None:
                accounts.set_password(db, username, given, by=_DEMO_BY)
            out.append((username, role, None))
            continue
        password = given or secrets.token_urlsafe(12)
        accounts.add_user(
            db,
            username,
            role=role,
            subject=subject,
            password=password,
            display_name=f"Demo {role}",
            by=_DEMO_BY,
        )
        out.append((username, role, None if given else password))
    return out


@click.command("dashboard")
@click.option(
    "--host",
    default=DEFAULT_HOST,
    show_default=True,
    help="Address to listen on (0.0.0.0 only behind a TLS proxy, e.g. in a container).",
)
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    help="Port to listen on.",
)
@click.option(
    "--demo-accounts",
    is_flag=True,
    help=f"First create the demo accounts {DEMO_OFFICER} and {DEMO_USER} if missing "
    f"(passwords from ${DEMO_OFFICER_PASSWORD_ENV} / ${DEMO_USER_PASSWORD_ENV}, else "
    "generated and printed once).",
)
@click.option("--dry-run", is_flag=True, help="Print the streamlit command instead of running it.")
@click.pass_obj
def dashboard(c: Ctx, host: str, port: int, demo_accounts: bool, dry_run: bool) -> None:
    """Serve the Streamlit dashboard (officers' review queue, users' own data)."""
    db = c.db()  # refuses a store that is not initialised, before anything starts
    command = streamlit_command(host, port)
    if demo_accounts:
        for username, role, password in ensure_demo_accounts(db):
            if role == "user":
                _say(f"demo {role} account {username} sees the data of subject {DEMO_SUBJECT}")
            if password is not None:
                _say(f"demo {role} account: {username}  password: {password}  (shown once)")
            else:
                _say(f"demo {role} account: {username} (exists; password unchanged unless set)")
    db.dispose()
    env = dict(os.environ)
    env["MEMAUDIT_DATABASE_URL"] = c.settings.database_url
    root = click.get_current_context().find_root().params
    config_file = root.get("config_file")
    if config_file:
        env["MEMAUDIT_CONFIG"] = str(Path(config_file).resolve())
    for name in ("log_level", "log_format"):
        if root.get(name):
            env[f"MEMAUDIT_{name.upper()}"] = str(root[name])
    if dry_run:
        click.echo(" ".join(command))
        return
    _say(f"dashboard: http://{host}:{port}/  (store {db.display_url}; Ctrl-C stops it)")
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(command[0], command, env)
