"""``memaudit scan``, ``findings``, ``review`` and ``guard``: scans and what they found.

Registered by :mod:`auditor.cli.main`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from auditor import limits
from auditor.cli.context import (
    TABLE_DEFAULT_LIMIT,
    Ctx,
    emit_rows,
    err_console,
    limit_option,
    listing_format,
    load_rule_pack,
    loading_line,
    pass_ctx,
    rules_option,
)
from auditor.cli.memories import build_record, record_options
from auditor.cli.terminal import echo, safe_text
from auditor.errors import InputError
from auditor.exitcodes import ExitCode
from auditor.vocab import SEVERITY_RANK

if TYPE_CHECKING:
    from auditor.scan.runs import ScanSummary
    from auditor.scan.scanner import Scanner

__all__ = ["findings", "guard", "review", "scan"]


@click.command()
@click.option("--full", is_flag=True, help="Scan every memory, not only what changed.")
@rules_option
@click.option(
    "--fail-on",
    type=click.Choice(["low", "medium", "high", "critical"]),
    default=None,
    help="Exit 1 when an open finding of this severity or higher exists after the scan.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--progress/--no-progress", default=None, help="Progress bar (default: on a TTY).")
@click.option(
    "--workers",
    type=click.IntRange(min=0, max=256),
    default=None,
    help="Worker processes (default MEMAUDIT_SCAN_WORKERS; 0 = one per core, 1 = this one).",
)
@pass_ctx
def scan(
    c: Ctx,
    full: bool,
    rules_dir: Path | None,
    fail_on: str | None,
    as_json: bool,
    progress: bool | None,
    workers: int | None,
) -> None:
    """Scan the store now (incremental by default) and print a summary.

    Ctrl-C or SIGTERM stops the scan after the batches in progress (each commits whole):
    the run ends ``interrupted`` (exit 3) and the next scan covers the rest.
    """
    from auditor.judge.llm import judge_from_settings
    from auditor.scan.scanner import Scanner

    db = c.db()
    pack = load_rule_pack(c, rules_dir)
    scanner = Scanner(db, pack, judge=judge_from_settings(c.settings))
    # detectors are built when the first memory that needs them arrives (none for an
    # empty scan); Presidio, spaCy and the pattern tables take seconds: say so at the time
    scanner.engine.on_load = loading_line("scan")
    show = sys.stderr.isatty() if progress is None else progress
    from auditor.scan.workers import stop_on_signals

    stop, restore = stop_on_signals()
    if show:
        summary = _run_with_bar(scanner, full, stop.is_set, workers)
    else:
        summary = scanner.run(full=full, should_stop=stop.is_set, workers=workers)
    restore()
    data = summary.as_dict()
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
    else:
        _print_scan_summary(summary)
    if summary.status == "interrupted":
        sys.exit(ExitCode.INTERNAL)
    if fail_on is not None:
        floor = SEVERITY_RANK[fail_on]
        if any(SEVERITY_RANK.get(s, 0) >= floor and n for s, n in summary.open_by_severity.items()):
            sys.exit(ExitCode.CHECK_FAILED)


def _run_with_bar(
    scanner: Scanner, full: bool, should_stop: Callable[[], bool], workers: int | None
) -> ScanSummary:
    """The scan, with a progress bar on stderr."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn("[bold]scanning[/]"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} memories"),
        TimeRemainingColumn(),
        console=err_console,
        transient=True,
        # redrawn when a batch reports, not by a refresh thread: with no other thread
        # running, the scan may fork its workers (auditor.scan.workers.fork_is_safe)
        auto_refresh=False,
    ) as bar:
        task = bar.add_task("scan", total=None)

        def advance(n: int) -> None:
            bar.advance(task, n)
            bar.refresh()

        def planned(n: int) -> None:
            bar.update(task, total=n)
            bar.refresh()

        return scanner.run(
            full=full,
            progress=advance,
            total=planned,
            should_stop=should_stop,
            workers=workers,
        )


def _print_scan_summary(summary: ScanSummary) -> None:
    """The scan's detector errors (the first ten, on stderr) and its one-line summary."""
    for err in summary.errors[:10]:
        err_console.print(
            f"[yellow]detector error[/] rules {safe_text(', '.join(err['rules']))}: "
            f"{safe_text(err['error'])}",
            highlight=False,
        )
    opened = ", ".join(f"{n} {s}" for s, n in summary.open_by_severity.items()) or "none"
    acts = ", ".join(f"{n} {a}" for a, n in summary.actions.items()) or "none"
    click.echo(
        f"scan {summary.run_id} ({summary.mode}, {summary.status}, "
        f"{summary.shards_done}/{summary.shards_total} shards): "
        f"{summary.memories_scanned} memories of "
        f"{summary.subjects_scanned} subjects, {summary.findings_new} new findings, "
        f"{summary.findings_seen} still present, {summary.findings_resolved} resolved, "
        f"{summary.findings_allowed} allowed by consent; actions: {acts}; "
        f"{summary.error_count} detector errors; {summary.duration_s:.1f}s. "
        f"Open findings: {opened}"
    )


_FINDING_COLUMNS = ["finding_id", "rule_id", "category", "severity", "status", "memory_ids"]


@click.command()
@click.option(
    "--status",
    default="open",
    show_default=True,
    type=click.Choice(["open", "acknowledged", "resolved", "dismissed", "suppressed", "all"]),
)
@click.option("--category", default=None, help="injection, sensitive, secret, ...")
@click.option("--rule", "rule_id", default=None, help="Only this rule id.")
@click.option("--subject", default=None, help="Only findings about this subject's memories.")
@click.option("--severity", default=None, type=click.Choice(["low", "medium", "high", "critical"]))
@limit_option
@listing_format
@pass_ctx
def findings(
    c: Ctx,
    status: str,
    category: str | None,
    rule_id: str | None,
    subject: str | None,
    severity: str | None,
    limit: int | None,
    fmt: str,
) -> None:
    """List findings (newest first); evidence is always redacted.

    A table stops at --limit (default 50) and says "showing N of M" when rows are left out.
    """
    from auditor.erasure.subjects import check_subject_form
    from auditor.scan.findings import FindingFilter, count_findings, iter_findings

    if subject is not None:
        subject = check_subject_form(subject, what="--subject")
    flt = FindingFilter(
        status=None if status == "all" else status,
        category=category,
        rule_id=rule_id,
        subject=subject,
        severity=severity,
    )
    if fmt == "table" and limit is None:
        limit = TABLE_DEFAULT_LIMIT
    db = c.db()
    total = count_findings(db, flt) if fmt == "table" else None
    emit_rows(iter_findings(db, flt, limit=limit), fmt, _FINDING_COLUMNS, total=total)


@click.command()
@click.argument("finding_id")
@click.option("--acknowledge", "action", flag_value="acknowledge", help="Seen; being worked on.")
@click.option("--resolve", "action", flag_value="resolve", help="Fixed.")
@click.option("--dismiss", "action", flag_value="dismiss", help="Not a problem (false positive).")
@click.option("--suppress", "action", flag_value="suppress", help="Allowed; keep quiet about it.")
@click.option("--reopen", "action", flag_value="reopen", help="Open a closed finding again.")
@click.option(
    "--escalate",
    "action",
    flag_value="escalate",
    help="Severity one step up, assigned to the admins' queue.",
)
@click.option(
    "--supersede-by",
    "superseding",
    default=None,
    metavar="MEMORY_ID",
    help="Another memory of the same subject replaces the finding's memory; resolve it.",
)
@click.option(
    "--approve-tier-override",
    is_flag=True,
    help="With --supersede-by: approve a lower trust tier replacing a higher one.",
)
@click.option(
    "--quarantine",
    "action",
    flag_value="quarantine",
    help="Quarantine the memories, resolve the finding.",
)
@click.option(
    "--delete", "action", flag_value="delete", help="Soft-delete the memories, resolve the finding."
)
@click.option(
    "--restore",
    "action",
    flag_value="restore",
    help="Undo an automatic quarantine/expiry, resolve the finding.",
)
@click.option("--assign", "assignee", default=None, help="Assign the finding to a reviewer.")
@click.option(
    "--note",
    default=None,
    help="Why (recorded; keep personal data out). Required with --dismiss and --suppress.",
)
@click.option("--by", "actor", required=True, help="The reviewer (audit log).")
@pass_ctx
def review(
    c: Ctx,
    finding_id: str,
    action: str | None,
    superseding: str | None,
    approve_tier_override: bool,
    assignee: str | None,
    note: str | None,
    actor: str,
) -> None:
    """Record a reviewer's decision on a finding.

    The actions and their checks are the dashboard's (auditor.scan.review). Every action
    is idempotent: asking for the state a memory or finding is already in exits 0 and says
    so ("already quarantined").
    """
    from auditor.scan import review as review_actions
    from auditor.scan.findings import review as do_review

    if superseding is not None:
        if action is not None:
            raise InputError("--supersede-by is an action of its own: give no other action")
        action = "supersede"
    if action is None and assignee is None:
        raise InputError(
            "give one action: --acknowledge, --resolve, --dismiss, --suppress, --reopen, "
            "--quarantine, --delete, --restore, --escalate, --supersede-by ID or --assign WHO"
        )
    if not actor.strip():
        raise InputError("a reviewer is required (--by WHO)")
    db = c.db()
    limits.check_note(note, db.settings, what="the note", where="memaudit review --note")
    if action is None:  # --assign alone: who works on it
        result = do_review(db, finding_id, "assign", actor=actor, note=note, assignee=assignee)
        echo(f"finding {finding_id}: {result['status']}, assigned to {result['assignee']}")
        return
    if assignee is not None:
        raise InputError("--assign is an action of its own: give it without another action")
    if approve_tier_override and action != "supersede":
        raise InputError("--approve-tier-override goes with --supersede-by only")
    review_actions.check_action_args(action, note, superseding_memory_id=superseding)
    with db.write() as session:
        result = review_actions.apply_one(
            session,
            db.settings,
            finding_id,
            action,
            actor=actor,
            reason=note,
            superseding_memory_id=superseding,
            approve_tier_override=approve_tier_override,
        )
    echo(f"finding {finding_id}: {review_actions.describe(action, result)}")


@click.command()
@record_options
@rules_option
@click.option(
    "--consent",
    "consents",
    multiple=True,
    help="A special category the subject opted in to (repeatable).",
)
@pass_ctx
def guard(c: Ctx, /, rules_dir: Path | None, consents: tuple[str, ...], **fields: Any) -> None:
    """Judge one candidate memory before it is stored: allow, quarantine or reject.

    Prints the verdict as JSON; exits 0 for allow, 1 for quarantine or reject.
    """
    from auditor.scan.guard import WriteGuard

    fields.setdefault("subject", None)
    if fields.get("subject") is None and fields.get("record_file") is None:
        fields["subject"] = "user:candidate"
    record = build_record(**fields)
    pack = load_rule_pack(c, rules_dir)
    write_guard = WriteGuard(pack, c.settings)
    # only the detectors of the rules that apply to the candidate are built
    write_guard.engine.on_load = loading_line("guard")
    verdict = write_guard.check(record, consents=frozenset(consents))
    click.echo(json.dumps(verdict.as_dict(), ensure_ascii=False, indent=2))
    if verdict.decision != "allow":
        sys.exit(ExitCode.CHECK_FAILED)
