"""The erasure and backup commands of ``memaudit`` (registered by :mod:`auditor.cli.main`).

``erase``, ``verify-erasure``, ``erasure list|request|approve|reject|receipt``, ``backup``
and ``restore``. Output never carries personal data: subjects appear as digests, and a
failed verification names the table and column (or file) where something was found,
never the value. Exit codes follow :mod:`auditor.exitcodes`: 1 when a verification fails.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from auditor.cli.context import Ctx
from auditor.cli.terminal import echo
from auditor.erasure.files import write_private
from auditor.errors import InputError
from auditor.exitcodes import ExitCode

__all__ = ["register_erasure_commands"]


def _json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True, default=str))


def _confirm(yes: bool, question: str) -> None:
    if yes:
        return
    if not sys.stdin.isatty():
        raise InputError(f"{question} Pass --yes to confirm (no terminal to ask on)")
    if not click.confirm(question, default=False, err=True):
        raise click.exceptions.Abort()


def _print_verification(data: dict[str, Any]) -> None:
    label = f"subject#{data['subject_digest'][:16]}"
    searched = data["searched"]
    if data["ok"]:
        echo(
            f"erasure of {label} verified: nothing found in {searched['tables']} tables "
            f"({searched['columns']} columns), {searched['files']} files; receipt of request "
            f"{(data.get('receipt') or {}).get('request_id')} verified"
        )
        return
    echo(f"erasure of {label} NOT verified:")
    for hit in data["hits"]:
        echo(f"  found in {hit['place']}: {hit['kind']} ({hit['count']})")
    for place in data["unsearchable"]:
        echo(f"  could not search {place}")
    for reason in data.get("incomplete", []):
        echo(f"  incomplete: {reason}")


def _receipt_exit(receipt: Any) -> None:
    """Exit 1 unless the receipt is verified; a subject that held nothing exits 0."""
    verdict = receipt.verdict
    if receipt.ok:
        echo(f"erasure verified (request {receipt.request_id})", err=True)
        return
    if receipt.nothing_held:
        echo(
            f"nothing was held for this subject (erased before); request {receipt.request_id} "
            "searched for its id only",
            err=True,
        )
        return
    echo(f"erasure {verdict}: see the receipt's stores (found, may_hold)", err=True)
    sys.exit(ExitCode.CHECK_FAILED)


_log_option = click.option(
    "--log",
    "logs",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="A log file to search too (repeatable).",
)


def _progress(line: str) -> None:
    """A long erasure reports each step on stderr (no personal data: counts and states)."""
    echo(line, err=True)


@click.command("erase")
@click.argument("subject")
@click.option("--by", "actor", required=True, help="The officer responsible (audit log).")
@click.option("--reason", default=None, help="Why (kept; no personal data please).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@_log_option
@click.pass_obj
def erase(
    c: Ctx, subject: str, actor: str, reason: str | None, yes: bool, logs: tuple[Path, ...]
) -> None:
    """Erase every copy of SUBJECT's data now; print the receipt (exit 1: not verified)."""
    from auditor.erasure.requests import erase_subject
    from auditor.erasure.subjects import resolve_subject

    db = c.db()
    resolve_subject(db, subject, what="SUBJECT")  # before asking: a typo is refused
    _confirm(yes, "Erase every memory, consent and finding of this subject for good?")
    receipt = erase_subject(
        db, subject, actor=actor, reason=reason, log_paths=logs, progress=_progress
    )
    _json(receipt.as_dict())
    _receipt_exit(receipt)


@click.command("verify-erasure")
@click.argument("subject")
@_log_option
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def verify_erasure_cmd(c: Ctx, subject: str, logs: tuple[Path, ...], as_json: bool) -> None:
    """Prove nothing of SUBJECT remains: every table, index, log (exit 1 if found or if
    the proof is incomplete)."""
    from auditor.erasure.verify import verify_subject

    result = verify_subject(c.db(), subject, log_paths=logs)
    if as_json:
        _json(result)
    else:
        _print_verification(result)
    if not result["ok"]:
        sys.exit(ExitCode.CHECK_FAILED)


@click.group("erasure")
def erasure_group() -> None:
    """Erasure requests: list, request, approve, reject, receipts."""


@erasure_group.command("list")
@click.option(
    "--status",
    default="all",
    show_default=True,
    type=click.Choice(
        ["pending", "approved", "deleting", "deleted", "verifying", "rejected", "executed"]
        + ["all"]
    ),
)
@click.option(
    "--show-subject",
    is_flag=True,
    help="Show the subject of waiting requests (for the officer deciding them).",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.pass_obj
def erasure_list(c: Ctx, status: str, show_subject: bool, fmt: str) -> None:
    """List erasure requests, newest first."""
    from auditor.erasure.requests import list_requests

    rows = list_requests(c.db(), None if status == "all" else status, include_subject=show_subject)
    if fmt == "json":
        _json(rows)
        return
    for r in rows:
        who = f" {r['subject']}" if show_subject and r.get("subject") else ""
        verified = "" if r["verified"] is None else f" verified={r['verified']}"
        echo(
            f"{r['request_id']:>5}  {r['status']:<9} subject#{r['subject_digest'][:16]}{who}"
            f"  by {r['requested_by']}  {r['requested_at']}{verified}"
        )
    if not rows:
        echo("no erasure requests", err=True)


@erasure_group.command("request")
@click.argument("subject")
@click.option("--by", "actor", required=True, help="Who asks (an officer or the user).")
@click.option(
    "--user-initiated",
    is_flag=True,
    help="The subject asked themselves (waits for approval when configured).",
)
@click.option("--reason", default=None, help="Why (kept; no personal data please).")
@click.pass_obj
def erasure_request(
    c: Ctx, subject: str, actor: str, user_initiated: bool, reason: str | None
) -> None:
    """Record an erasure request (executed now unless it must wait for approval)."""
    from auditor.erasure.requests import Receipt, get_receipt, list_requests, request_erasure

    db = c.db()
    request_id = request_erasure(
        db, subject, requested_by=actor, reason=reason, user_initiated=user_initiated
    )
    status = next(r["status"] for r in list_requests(db) if r["request_id"] == request_id)
    if status == "executed":
        receipt = Receipt(get_receipt(db, request_id))
        _json(receipt.as_dict())
        _receipt_exit(receipt)
        return
    echo(f"erasure request {request_id}: {status} (an officer approves it)")


@erasure_group.command("approve")
@click.argument("request_id", type=int)
@click.option("--by", "actor", required=True, help="The approving officer.")
@click.option("--now", "execute", is_flag=True, help="Execute now, not by the daemon.")
@_log_option
@click.pass_obj
def erasure_approve(
    c: Ctx, request_id: int, actor: str, execute: bool, logs: tuple[Path, ...]
) -> None:
    """Approve a pending request (the daemon's erasure_queue job executes it)."""
    from auditor.erasure.requests import approve_erasure

    receipt = approve_erasure(
        c.db(), request_id, actor=actor, execute=execute, log_paths=logs, progress=_progress
    )
    if receipt is None:
        echo(f"erasure request {request_id}: approved")
        return
    _json(receipt.as_dict())
    _receipt_exit(receipt)


@erasure_group.command("resume")
@click.argument("request_id", type=int, required=False)
@click.option("--by", "actor", default="memaudit-cli", show_default=True, help="Who resumes.")
@click.option(
    "--force",
    is_flag=True,
    help="Resume although its lease has not expired (the process that held it is gone).",
)
@click.pass_obj
def erasure_resume(c: Ctx, request_id: int | None, actor: str, force: bool) -> None:
    """Resume an interrupted erasure (deleting, deleted, verifying); none: the queue."""
    from auditor.erasure.queue import resume as resume_erasure
    from auditor.erasure.queue import run_queue

    db = c.db()
    if request_id is None:
        _json(run_queue(db, actor=actor, progress=_progress))
        return
    receipt = resume_erasure(db, request_id, executed_by=actor, force=force, progress=_progress)
    _json(receipt.as_dict())
    _receipt_exit(receipt)


@erasure_group.command("reject")
@click.argument("request_id", type=int)
@click.option("--by", "actor", required=True, help="The officer.")
@click.option("--reason", default=None, help="Why (kept; no personal data please).")
@click.pass_obj
def erasure_reject(c: Ctx, request_id: int, actor: str, reason: str | None) -> None:
    """Reject a waiting request (its subject id is cleared from the store)."""
    from auditor.erasure.requests import reject_erasure

    reject_erasure(c.db(), request_id, actor=actor, reason=reason)
    echo(f"erasure request {request_id}: rejected")


@erasure_group.command("receipt")
@click.argument("request_id", type=int)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the receipt to FILE (a download).",
)
@click.pass_obj
def erasure_receipt(c: Ctx, request_id: int, output: Path | None) -> None:
    """Print (or save) the receipt of a request, and check its hash."""
    from auditor.erasure.requests import get_receipt, verify_receipt

    receipt = get_receipt(c.db(), request_id)
    if not verify_receipt(receipt):
        raise InputError(
            f"erasure request {request_id}: the stored receipt does not match its hash"
        )
    if output is None:
        _json(receipt)
        return
    write_private(output, json.dumps(receipt, ensure_ascii=False, indent=2, sort_keys=True) + "\n")
    echo(f"wrote the receipt of erasure request {request_id} to {output}", err=True)


@click.command("backup")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "sqlite", "jsonl"]),
    default="auto",
    show_default=True,
    help="auto: a SQLite file for SQLite, JSONL for PostgreSQL (.gz: compressed).",
)
@click.option("--force", is_flag=True, help="Replace an existing file.")
@click.option("--by", "actor", default="memaudit", show_default=True, help="Audit actor.")
@click.pass_obj
def backup_cmd(c: Ctx, path: Path, fmt: str, force: bool, actor: str) -> None:
    """Write a consistent backup of the store to PATH (it holds personal data: 0600)."""
    from auditor.erasure.backup import backup

    info = backup(c.db(), path, fmt=fmt, overwrite=force, actor=actor)
    _json(info.as_dict())


@click.command("restore")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--by", "actor", required=True, help="Who restores (audit log).")
@click.option(
    "--ledger",
    "ledgers",
    multiple=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="An erasure ledger file to re-apply too (repeatable).",
)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_obj
def restore_cmd(c: Ctx, path: Path, actor: str, ledgers: tuple[Path, ...], yes: bool) -> None:
    """Replace the store by a backup, then re-apply every erasure made since."""
    from auditor.erasure.backup import restore

    _confirm(yes, "Replace the whole store by this backup?")
    report = restore(c.db(require_schema=False), path, actor=actor, ledgers=ledgers)
    _json(report.as_dict())
    if not report.ok:
        sys.exit(ExitCode.CHECK_FAILED)


def register_erasure_commands(cli: click.Group) -> None:
    """Add the erasure and backup commands to the ``memaudit`` group.

    Args:
        cli: the root command group.
    """
    cli.add_command(erase)
    cli.add_command(verify_erasure_cmd)
    cli.add_command(erasure_group)
    cli.add_command(backup_cmd)
    cli.add_command(restore_cmd)
