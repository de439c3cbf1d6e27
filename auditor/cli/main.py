"""The ``memaudit`` command.

Exit codes follow :mod:`auditor.exitcodes` (0 ok, 1 a check failed, 2 usage or input
errors, 3 internal errors). Listings go to standard output; progress, logs and errors go
to standard error.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click
from rich.table import Table

from auditor import __version__
from auditor.cli.audit_log import audit_log_group
from auditor.cli.context import (
    Ctx,
    err_console,
    out_console,
    pass_ctx,
)
from auditor.cli.dashboard import dashboard as dashboard_command
from auditor.cli.erasure import register_erasure_commands
from auditor.cli.keys import register_keys_commands
from auditor.cli.memories import memories as memories_group
from auditor.cli.rules import rules_group
from auditor.cli.scanning import findings, guard, review, scan
from auditor.cli.sources import register_sources_commands
from auditor.cli.terminal import cell, safe_text
from auditor.cli.tools import bench, budget, eval_
from auditor.cli.users import users as users_group
from auditor.errors import MemauditError
from auditor.exitcodes import ExitCode, exit_code_for
from auditor.lifecycle.audit_key import audit_key
from auditor.sources.files import FORMATS

if TYPE_CHECKING:
    from auditor.sources.importer import ImportReport

__all__ = ["cli", "main"]

DEMO_DIR = Path(__file__).resolve().parents[1] / "demo"
#: The bundled demo store: a canonical JSONL, a Memoryfield folder and a hand-over note.
DEMO_SOURCES = (
    ("jsonl", DEMO_DIR / "demo_memories.jsonl"),
    ("memoryfield", DEMO_DIR / "memoryfield"),
    ("state", DEMO_DIR / "state.json"),
)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="memaudit")
@click.option(
    "--database-url",
    envvar="MEMAUDIT_DATABASE_URL",
    metavar="URL",
    help="Store URL (default sqlite:///memaudit.db; env MEMAUDIT_DATABASE_URL).",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False),
    metavar="FILE",
    help="TOML settings file (env MEMAUDIT_CONFIG).",
)
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default=None,
    help="Lowest log level (default info).",
)
@click.option(
    "--log-format",
    type=click.Choice(["auto", "console", "json"]),
    default=None,
    help="Log format: auto = console on a terminal, JSON otherwise.",
)
@click.pass_context
def cli(
    ctx: click.Context,
    database_url: str | None,
    config_file: str | None,
    log_level: str | None,
    log_format: str | None,
) -> None:
    """memaudit: audit and govern AI agents' long-term memory."""
    from auditor.config import load_settings
    from auditor.logging import configure_logging

    settings = load_settings(
        config_file, database_url=database_url, log_level=log_level, log_format=log_format
    )
    configure_logging(settings.log_level, settings.log_format, digest_key=audit_key(settings))
    explicit = log_level is not None or "MEMAUDIT_LOG_LEVEL" in os.environ
    ctx.obj = Ctx(settings, explicit_log_level=explicit)
    ctx.call_on_close(ctx.obj.close)


# -- init / summary --------------------------------------------------------------------


@cli.command()
@click.option(
    "--demo",
    is_flag=True,
    help="Also load the bundled demo memory store if the store holds no memories.",
)
@pass_ctx
def init(c: Ctx, demo: bool) -> None:
    """Create or migrate the database."""
    from auditor.access.readers import MemoryFilter, count_memories
    from auditor.sources.files import open_source
    from auditor.sources.importer import Importer

    db = c.db(require_schema=False)
    before, after = db.upgrade()
    if before == after:
        err_console.print(f"database {db.display_url} is up to date (schema {after})")
    else:
        err_console.print(
            f"database {db.display_url} migrated from {before or 'empty'} to schema {after}"
        )
    from auditor.erasure.keys import ensure_audit_key, ensure_master_key

    err_console.print(ensure_audit_key(db).message)
    err_console.print(ensure_master_key(db).message)
    if demo:
        if count_memories(db, MemoryFilter(status=None)) > 0:
            err_console.print("store already holds memories: demo not loaded")
            return
        clean = True
        for fmt, path in DEMO_SOURCES:
            report = Importer(db, actor="demo").run(open_source(fmt, path, c.settings))
            _print_import(report, as_json=False)
            clean = clean and report.ok
        if not clean:
            raise MemauditError("the bundled demo store did not import cleanly")


@cli.command()
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.option("--top", default=15, show_default=True, help="How many subjects to list.")
@pass_ctx
def summary(c: Ctx, fmt: str, top: int) -> None:
    """Summarise the store by status, trust tier, category, kind and subject."""
    from auditor.access.readers import store_summary

    data = store_summary(c.db(), top_subjects=top)
    if fmt == "json":
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    out_console.print(
        f"[bold]{data['memories']}[/] memories about [bold]{data['subjects']}[/] subjects, "
        f"{data['audit_events']} audit events"
    )
    for title, key in (
        ("status", "by_status"),
        ("trust tier", "by_trust_tier"),
        ("category", "by_category"),
        ("kind", "by_kind"),
        ("namespace", "by_namespace"),
        ("subject (top)", "top_subjects"),
    ):
        table = Table(title=f"by {title}", title_justify="left", show_edge=False)
        table.add_column(title)
        table.add_column("memories", justify="right")
        for name, n in data[key].items():
            table.add_row(cell(name), str(n))
        out_console.print(table)


# -- import ----------------------------------------------------------------------------


@cli.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(sorted(FORMATS)),
    default=None,
    help="Source format (default: guessed from the name).",
)
@click.option(
    "--subject",
    default=None,
    help="Subject for formats that do not name one (kv, state, memoryfield), e.g. user:42.",
)
@click.option("--namespace", default=None, help="Namespace to record (default per format).")
@click.option(
    "--by", "actor", default="import", show_default=True, help="Actor recorded in the audit log."
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--progress/--no-progress",
    default=None,
    help="Progress bar (default: on when standard error is a terminal).",
)
@pass_ctx
def import_(
    c: Ctx,
    path: Path,
    fmt: str | None,
    subject: str | None,
    namespace: str | None,
    actor: str,
    as_json: bool,
    progress: bool | None,
) -> None:
    """Import a memory store (jsonl | memoryfield | kv | state).

    Bad records are reported with their line or entry and skipped; the good ones are kept
    and nothing already stored is lost. Exits 2 when records were skipped.
    """
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    from auditor.sources.files import detect_format, open_source
    from auditor.sources.importer import Importer

    db = c.db()
    source = open_source(
        fmt or detect_format(path), path, c.settings, subject=subject, namespace=namespace
    )
    show = sys.stderr.isatty() if progress is None else progress
    importer = Importer(db, actor=actor)
    if show:
        with Progress(
            TextColumn("[bold]importing[/]"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=err_console,
            transient=True,
        ) as bar:
            task = bar.add_task("import", total=source.total)
            report = importer.run(source, progress=lambda n: bar.advance(task, n))
    else:
        report = importer.run(source)
    _print_import(report, as_json=as_json)
    if not report.ok:
        sys.exit(ExitCode.USAGE)


def _print_import(report: ImportReport, *, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(report.as_dict(), ensure_ascii=False, indent=2))
        return
    for message in report.errors:
        err_console.print(f"[red]skipped[/] {safe_text(message)}", markup=True, highlight=False)
    if report.skipped > len(report.errors):
        err_console.print(f"... and {report.skipped - len(report.errors)} more skipped")
    rate = report.read / report.duration_s if report.duration_s > 0 else 0.0
    click.echo(
        f"imported {report.location} ({report.source_format}): {report.read} read, "
        f"{report.inserted} new, {report.updated} updated, {report.unchanged} unchanged, "
        f"{report.skipped} skipped; {report.derived_superseded} marked superseded by their "
        f"chain; {report.duration_s:.1f}s ({rate:,.0f} records/s); import run {report.run_id}"
        + (f"; sha256 {report.sha256}" if report.sha256 else "")
    )


# -- accounts (auditor/cli/users.py) ---------------------------------------------------

cli.add_command(users_group)
cli.add_command(dashboard_command)


# -- export / audit log ----------------------------------------------------------------


@cli.command()
@click.argument("subject")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write to FILE instead of standard output.",
)
@pass_ctx
def export(c: Ctx, subject: str, output: Path | None) -> None:
    """Everything about SUBJECT as JSON (the right of access).

    SUBJECT must have the subject form (``user:<id>``) and be known to the store; a typo
    is refused with the nearest subjects offered. A file written with -o is mode 0600.
    """
    from auditor.access.readers import export_subject
    from auditor.erasure.files import write_private
    from auditor.erasure.subjects import resolve_subject

    db = c.db()
    subject = resolve_subject(db, subject, what="SUBJECT", allow_erased=False).subject
    data = export_subject(db, subject)
    text = json.dumps(data, ensure_ascii=False, indent=2)
    if output is None:
        click.echo(text)
    else:
        write_private(output, text + "\n")
        err_console.print(f"wrote {data['counts']['memories']} memories to {output}")


# -- erasure and backups (auditor/cli/erasure.py) -----------------------------------------

register_erasure_commands(cli)


# -- live sources (auditor/cli/sources.py) -----------------------------------------------

register_sources_commands(cli)


# -- encryption at rest (auditor/cli/keys.py) ---------------------------------------------

register_keys_commands(cli)


@cli.command()
@click.option(
    "--health-port",
    type=click.IntRange(0, 65535),
    default=None,
    help="Serve /healthz and /metrics on this port (host: MEMAUDIT_HEALTH_HOST).",
)
@click.option(
    "--once",
    "once",
    default=None,
    metavar="JOB",
    help="Run one job now and exit: incremental_scan, full_scan, expiry_sweep, "
    "retention_purge, audit_verify.",
)
@click.option("--list", "list_jobs", is_flag=True, help="Show the jobs, schedules, next runs.")
@pass_ctx
def daemon(c: Ctx, health_port: int | None, once: str | None, list_jobs: bool) -> None:
    """Run the scheduled audits (one leader schedules; other replicas stand by)."""
    from auditor.daemon import runner as daemon_mod
    from auditor.logging import configure_logging

    if not c.explicit_log_level:
        configure_logging("info", c.settings.log_format, digest_key=audit_key(c.settings))
    if list_jobs:
        runs = daemon_mod.next_runs(c.settings)
        for name, spec in c.settings.schedule.items():
            click.echo(f"{name:<17} {spec:<14} next: {runs[name] or 'never (off)'}")
        return
    db = c.db()
    if once is not None:
        daemon_mod.install_signal_handlers(stop := threading.Event())
        result = daemon_mod.run_once(once, db, c.settings, stop)
        click.echo(json.dumps({"job": once, **result}, ensure_ascii=False, default=str))
        if once == "audit_verify" and not result.get("ok", True):
            sys.exit(ExitCode.CHECK_FAILED)
        return
    runner = daemon_mod.Daemon(db, c.settings)
    daemon_mod.install_signal_handlers(runner.ctx.stop)
    if health_port is not None:
        port = runner.serve_health(health_port)
        err_console.print(f"health on http://{c.settings.health_host}:{port}/healthz")
    sys.exit(runner.run())


# -- the command groups of their own modules ---------------------------------------------

cli.add_command(memories_group)
cli.add_command(audit_log_group)
cli.add_command(rules_group)
for _command in (scan, findings, review, guard, eval_, bench, budget):
    cli.add_command(_command)


# -- entry point -----------------------------------------------------------------------


def entry() -> NoReturn:
    """The ``memaudit`` command as a process: :func:`main`, then a quick exit with its code.

    Everything is written and closed by then (the store's connections are closed when the
    command's context ends); the interpreter's teardown of a scan's detectors is skipped
    (:func:`auditor.processes.quick_exit`). In-process callers (tests) use :func:`main`.
    """
    from auditor.processes import quick_exit

    try:
        main()
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            quick_exit(exc.code or 0)
        print(exc.code, file=sys.stderr)
        quick_exit(1)


def main(argv: list[str] | None = None) -> NoReturn:
    """Run the command and exit with the contract's code."""
    try:
        cli.main(args=argv, prog_name="memaudit", standalone_mode=False)
    except click.exceptions.Abort:
        err_console.print("aborted")
        sys.exit(ExitCode.USAGE)
    except click.ClickException as exc:
        exc.show()
        sys.exit(ExitCode.USAGE)
    except MemauditError as exc:
        err_console.print(f"error: {exc}", markup=False, highlight=False)
        sys.exit(exit_code_for(exc))
    except SystemExit:
        raise
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(ExitCode.INTERNAL)
    except Exception as exc:  # noqa: BLE001 - the last line of defence, mapped to exit 3
        import structlog

        from auditor.logging import scrub

        structlog.get_logger(__name__).debug(
            "internal_error", error_type=type(exc).__name__, exc_info=True
        )
        err_console.print(
            f"internal error: {type(exc).__name__}: {scrub(str(exc), limit=500)} "
            "(--log-level debug shows the traceback)",
            markup=False,
            highlight=False,
        )
        sys.exit(ExitCode.INTERNAL)
    sys.exit(ExitCode.OK)
