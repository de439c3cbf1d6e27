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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click
from rich.table import Table

from auditor import __version__, limits
from auditor.cli.context import (
    TABLE_DEFAULT_LIMIT,
    Ctx,
    emit_rows,
    err_console,
    listing_format,
    out_console,
    pass_ctx,
)
from auditor.cli.dashboard import dashboard as dashboard_command
from auditor.cli.erasure import register_erasure_commands
from auditor.cli.keys import register_keys_commands
from auditor.cli.sources import register_sources_commands
from auditor.cli.terminal import cell, clean, echo, safe_text
from auditor.cli.users import users as users_group
from auditor.errors import DanglingLinkError, InputError, MemauditError, NotFoundError
from auditor.exitcodes import ExitCode, exit_code_for
from auditor.lifecycle.audit_key import audit_key
from auditor.sources.files import FORMATS
from auditor.vocab import MEMORY_KINDS, MEMORY_STATUSES, SEVERITY_RANK, SOURCE_TYPES

if TYPE_CHECKING:
    from auditor.rulepack.pack import RulePack
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


# -- memories --------------------------------------------------------------------------


@cli.group()
def memories() -> None:
    """List, show and manage memories (lifecycle actions are audited)."""


def _status_option(value: str) -> str | None:
    return None if value == "all" else value


_MEMORY_COLUMNS = ["memory_id", "subject", "category", "trust_tier", "status", "fact"]


@memories.command("list")
@click.option("--subject", default=None, help="Only this subject.")
@click.option(
    "--status",
    default="active",
    show_default=True,
    type=click.Choice([*MEMORY_STATUSES, "all"]),
    help="Only this status, or all.",
)
@click.option("--namespace", default=None, help="Only this namespace.")
@click.option("--category", default=None, help="Only this category.")
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=None,
    help=f"At most N (table default {TABLE_DEFAULT_LIMIT}; JSON/CSV default: all).",
)
@listing_format
@pass_ctx
def memories_list(
    c: Ctx,
    subject: str | None,
    status: str,
    namespace: str | None,
    category: str | None,
    limit: int | None,
    fmt: str,
) -> None:
    """List memories."""
    from auditor.access.readers import MemoryFilter, count_memories, iter_memories, memory_to_dict
    from auditor.erasure.subjects import check_subject_form

    if subject is not None:
        subject = check_subject_form(subject, what="--subject")
    db = c.db()
    flt = MemoryFilter(
        subject=subject, status=_status_option(status), namespace=namespace, category=category
    )
    if fmt == "table" and limit is None:
        limit = TABLE_DEFAULT_LIMIT
    total = count_memories(db, flt) if fmt == "table" else None
    from auditor.sources.writeback import display_status

    rows = (
        {**d, "status": display_status(d["status"], d.get("extra"))} if fmt == "table" else d
        for d in (memory_to_dict(m) for m in iter_memories(db, flt, limit=limit))
    )
    emit_rows(rows, fmt, _MEMORY_COLUMNS, total=total)


@memories.command("show")
@click.argument("memory_id")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@pass_ctx
def memories_show(c: Ctx, memory_id: str, fmt: str) -> None:
    """Show one memory, its provenance and its supersede chain."""
    from auditor.access.readers import memory_detail

    detail = memory_detail(c.db(), memory_id)
    if fmt == "json":
        click.echo(json.dumps(detail, ensure_ascii=False, indent=2))
        return
    from auditor.sources.writeback import write_back_label

    m = detail["memory"]
    out_console.print(
        f"[bold]{safe_text(m['memory_id'])}[/]  {safe_text(m['status'])}  "
        f"({safe_text(m['trust_tier'])} tier)"
    )
    label = write_back_label(m.get("extra"))
    if label:
        out_console.print(f"  write-back        {label}", markup=False)
    for key in (
        "subject",
        "namespace",
        "kind",
        "category",
        "confidence",
        "created_at",
        "updated_at",
        "expires_at",
        "deleted_at",
        "access_count",
        "last_accessed_at",
        "embedding_ref",
        "content_hash",
        "version",
    ):
        out_console.print(f"  {key:<17} {clean(m[key])}", markup=False)
    out_console.print("  fact:", markup=False)
    for line in clean(m["fact"]).splitlines() or [""]:
        out_console.print(f"    {line}", markup=False)
    prov = detail["provenance"]
    out_console.print("[bold]provenance[/]")
    src = prov["source"]
    out_console.print(
        f"  source.type {clean(src['type'])}  session {clean(src['session_id'])}  "
        f"turn {src['turn']}  uri {clean(src['uri'])}",
        markup=False,
    )
    out_console.print(
        f"  origin {clean(prov['origin'])}  external id {clean(prov['external_id'])}",
        markup=False,
    )
    if prov["import_run"]:
        run = prov["import_run"]
        out_console.print(
            f"  imported by run {run['id']} ({run['format']}) from {run['location']}"
            + (f", sha256 {run['sha256']}" if run["sha256"] else ""),
            markup=False,
        )
    chain = detail["chain"]
    out_console.print("[bold]supersede chain[/] (newest first)")
    for n in reversed(chain["newer"]):
        out_console.print(
            f"  {n['memory_id']}  {n['status']}  ({n['trust_tier']})  supersedes {n['supersedes']}",
            markup=False,
        )
    out_console.print(f"> {m['memory_id']}  {m['status']}  ({m['trust_tier']})", markup=False)
    for o in chain["older"]:
        out_console.print(f"  {o['memory_id']}  {o['status']}  ({o['trust_tier']})", markup=False)
    if chain["dangling_link"]:
        out_console.print(
            f"  ! dangling link to {chain['dangling_link']} (no such memory)", markup=False
        )
    if chain["cycle"]:
        out_console.print("  ! the chain has a cycle", markup=False)
    if detail["findings"]:
        out_console.print("[bold]findings[/]")
        for f in detail["findings"]:
            out_console.print(
                f"  {f['finding_id']} {f['rule_id']} {f['severity']} {f['status']}", markup=False
            )


def _record_options(fn: Any) -> Any:
    options = [
        click.option(
            "--id", "memory_id", default=None, help="Memory id (default: a new mem_<ULID>)."
        ),
        click.option("--subject", default=None, help="Subject, e.g. user:42."),
        click.option("--fact", default=None, help="The fact text."),
        click.option("--category", default="note", show_default=True),
        click.option(
            "--kind", type=click.Choice(MEMORY_KINDS), default="semantic", show_default=True
        ),
        click.option("--namespace", default="default", show_default=True),
        click.option("--confidence", type=click.FloatRange(0, 1), default=None),
        click.option(
            "--source-type",
            type=click.Choice(SOURCE_TYPES),
            default="explicit_statement",
            show_default=True,
            help="Provenance; decides the trust tier.",
        ),
        click.option("--session-id", default=None),
        click.option("--uri", default=None),
        click.option("--expires-at", default=None, help="ISO 8601 time it stops holding."),
        click.option(
            "--record",
            "record_file",
            type=click.File("r", encoding="utf-8"),
            default=None,
            help="Read the record as JSON from FILE (- for stdin).",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def _build_record(
    memory_id: str | None,
    subject: str | None,
    fact: str | None,
    category: str,
    kind: str,
    namespace: str,
    confidence: float | None,
    source_type: str,
    session_id: str | None,
    uri: str | None,
    expires_at: str | None,
    record_file: Any,
    default_subject: str | None = None,
) -> dict[str, Any]:
    from ulid import ULID

    if record_file is not None:
        try:
            raw = json.load(record_file)
        except json.JSONDecodeError as exc:
            raise InputError(f"--record: invalid JSON: {exc.msg} (line {exc.lineno})") from None
        if not isinstance(raw, dict):
            raise InputError("--record: expected a JSON object")
        raw.setdefault("memory_id", f"mem_{ULID()}")
        if default_subject is not None:
            raw.setdefault("subject", default_subject)
        return raw
    subject = subject or default_subject
    if not subject or fact is None:
        raise InputError("give --subject and --fact (or --record FILE)")
    record: dict[str, Any] = {
        "memory_id": memory_id or f"mem_{ULID()}",
        "subject": subject,
        "fact": fact,
        "category": category,
        "kind": kind,
        "namespace": namespace,
        "confidence": confidence,
        "source": {"type": source_type, "session_id": session_id, "uri": uri},
    }
    if expires_at:
        record["expires_at"] = expires_at
    return record


def _print_memory(m: Any, verb: str) -> None:
    echo(f"{verb} {m.memory_id}: status {m.status}, {m.trust_tier} tier, version {m.version}")


@memories.command("add")
@_record_options
@click.option("--by", "actor", required=True, help="Who adds it (audit log).")
@pass_ctx
def memories_add(c: Ctx, /, actor: str, **fields: Any) -> None:
    """Add a new active memory through the lifecycle (invariants enforced)."""
    from auditor.lifecycle.machine import Lifecycle

    record = _build_record(**fields)
    _print_memory(Lifecycle(c.db()).add(record, actor=actor), "added")


@memories.command("supersede")
@click.argument("old_id")
@_record_options
@click.option(
    "--with",
    "with_id",
    default=None,
    help="Link an existing active memory as the successor instead of a new record.",
)
@click.option(
    "--approved-by",
    default=None,
    help="Reviewer approving a lower trust tier superseding a higher one.",
)
@click.option(
    "--expected-version",
    type=int,
    default=None,
    help="Fail if OLD_ID changed since this version was read.",
)
@click.option("--by", "actor", required=True, help="Who does it (audit log).")
@pass_ctx
def memories_supersede(
    c: Ctx,
    /,
    old_id: str,
    with_id: str | None,
    approved_by: str | None,
    expected_version: int | None,
    actor: str,
    **fields: Any,
) -> None:
    """Replace OLD_ID with a new memory (or an existing one, --with)."""
    from auditor.lifecycle.machine import Lifecycle

    lc = Lifecycle(c.db())
    if with_id is not None:
        new: Any = with_id
    else:
        try:
            subject = lc.get(old_id).subject
        except NotFoundError:
            raise DanglingLinkError(f"cannot supersede {old_id!r}: no such memory") from None
        new = _build_record(**fields, default_subject=subject)
    head = lc.supersede(
        old_id, new, actor=actor, approved_by=approved_by, expected_version=expected_version
    )
    echo(f"{old_id} superseded by {head.memory_id} ({head.trust_tier} tier)")


def _transition_command(name: str, verb: str, doc: str) -> None:
    @memories.command(name, help=doc)
    @click.argument("memory_id")
    @click.option("--by", "actor", required=True, help="Who does it (audit log).")
    @click.option(
        "--reason", default=None, help="Why (recorded in the audit log; no personal data)."
    )
    @click.option(
        "--expected-version",
        type=int,
        default=None,
        help="Fail if the memory changed since this version was read.",
    )
    @pass_ctx
    def command(
        c: Ctx, memory_id: str, actor: str, reason: str | None, expected_version: int | None
    ) -> None:
        from auditor.lifecycle.machine import Lifecycle

        lc = Lifecycle(c.db())
        m = getattr(lc, name.replace("delete", "soft_delete"))(
            memory_id, actor=actor, reason=reason, expected_version=expected_version
        )
        _print_memory(m, verb)

    del command


_transition_command("delete", "soft-deleted", "Soft-delete a memory (kept until purge or erasure).")
_transition_command("quarantine", "quarantined", "Quarantine a memory (held from retrieval).")
_transition_command("expire", "expired", "Expire a memory.")
_transition_command("restore", "restored", "Undo a soft delete, quarantine or expiry.")


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


@cli.group("audit-log")
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


# -- erasure and backups (auditor/cli/erasure.py) -----------------------------------------

register_erasure_commands(cli)


# -- live sources (auditor/cli/sources.py) -----------------------------------------------

register_sources_commands(cli)


# -- encryption at rest (auditor/cli/keys.py) ---------------------------------------------

register_keys_commands(cli)


# -- rules, scan, findings, review, eval, guard ------------------------------------------

rules_option = click.option(
    "--rules",
    "rules_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Rule pack folder (default: MEMAUDIT_RULES_DIR or the shipped rules/).",
)


def _loading_line(command: str) -> Callable[[str], None]:
    """An engine's ``on_load``: a line on standard error for each detector that takes a
    while to build (``scan: loading detectors: pii (Presidio, spaCy) ...``)."""
    from auditor.detectors import LOADS

    def say(name: str) -> None:
        if name in LOADS:
            err_console.print(
                f"{command}: loading detectors: {name} ({LOADS[name]}) ...",
                markup=False,
                highlight=False,
            )

    return say


def _pack(c: Ctx, rules_dir: Path | None) -> RulePack:
    from auditor.rulepack.pack import load_pack

    return load_pack(rules_dir or c.settings.rules_dir)


@cli.group("rules")
def rules_group() -> None:
    """The rule pack: list, lint and self-test the rules."""


@rules_group.command("list")
@rules_option
@listing_format
@pass_ctx
def rules_list(c: Ctx, rules_dir: Path | None, fmt: str) -> None:
    """List the rules of the pack."""
    from auditor.rulepack.pack import rule_summary

    pack = _pack(c, rules_dir)
    rows = (dict(rule_summary(r)) for r in pack.rules)
    emit_rows(rows, fmt, ["id", "status", "category", "severity", "detector", "action", "title"])


@rules_group.command("lint")
@rules_option
@pass_ctx
def rules_lint(c: Ctx, rules_dir: Path | None) -> None:
    """Validate every rule (schema, ids, file names, detector params); exit 2 on a problem."""
    from auditor.rulepack.pack import RuleError

    pack = _pack(c, rules_dir)
    from auditor.rulepack.engine import Engine

    for rule in pack.rules:
        try:
            Engine([rule]).load()  # builds the detector: that checks the params
        except (ValueError, TypeError, KeyError) as exc:
            raise RuleError(f"{rule.where}: params: {exc}") from None
    click.echo(f"{len(pack.rules)} rules OK in {pack.root} (pack sha256 {pack.sha256[:16]})")


@rules_group.command("test")
@rules_option
@click.argument("rule_ids", nargs=-1)
@pass_ctx
def rules_test(c: Ctx, rules_dir: Path | None, rule_ids: tuple[str, ...]) -> None:
    """Run the rules' own flag / pass / known_miss cases (exit 1 if one fails)."""
    from auditor.rulepack.engine import run_rule_tests

    pack = _pack(c, rules_dir)
    results = run_rule_tests(pack, c.settings, list(rule_ids) or None)
    failed = [r for r in results if not r.ok]
    misses = [r for r in results if r.kind == "known_miss"]
    for r in failed:
        verb = "did not fire" if r.kind == "flag" else "fired"
        extra = f" ({r.note})" if r.note else ""
        click.echo(f"FAIL {r.rule_id} {r.kind}[{r.index}] {verb}{extra}  [{r.where}]")
    for r in misses:
        if r.caught:
            click.echo(f"note {r.rule_id} known_miss[{r.index}] is now caught: promote it")
    passed = sum(1 for r in results if r.ok and r.kind != "known_miss")
    click.echo(f"{passed} passed, {len(failed)} failed ({len(misses)} known misses recorded)")
    if failed:
        sys.exit(ExitCode.CHECK_FAILED)


@cli.command()
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
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    from auditor.judge.llm import judge_from_settings
    from auditor.scan.scanner import Scanner

    db = c.db()
    pack = _pack(c, rules_dir)
    scanner = Scanner(db, pack, judge=judge_from_settings(c.settings))
    # detectors are built when the first memory that needs them arrives (none for an
    # empty scan); Presidio, spaCy and the pattern tables take seconds: say so at the time
    scanner.engine.on_load = _loading_line("scan")
    show = sys.stderr.isatty() if progress is None else progress
    from auditor.scan.workers import stop_on_signals

    stop, restore = stop_on_signals()
    if show:
        with Progress(
            TextColumn("[bold]scanning[/]"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total} memories"),
            TimeRemainingColumn(),
            console=err_console,
            transient=True,
        ) as bar:
            task = bar.add_task("scan", total=None)
            summary = scanner.run(
                full=full,
                progress=lambda n: bar.advance(task, n),
                total=lambda n: bar.update(task, total=n),
                should_stop=stop.is_set,
                workers=workers,
            )
    else:
        summary = scanner.run(full=full, should_stop=stop.is_set, workers=workers)
    restore()
    data = summary.as_dict()
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
    else:
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
    if summary.status == "interrupted":
        sys.exit(ExitCode.INTERNAL)
    if fail_on is not None:
        floor = SEVERITY_RANK[fail_on]
        if any(SEVERITY_RANK.get(s, 0) >= floor and n for s, n in summary.open_by_severity.items()):
            sys.exit(ExitCode.CHECK_FAILED)


_FINDING_COLUMNS = ["finding_id", "rule_id", "category", "severity", "status", "memory_ids"]


@cli.command()
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
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=None,
    help=f"At most N (table default {TABLE_DEFAULT_LIMIT}; JSON/CSV default: all).",
)
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


@cli.command()
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


@cli.command("eval")
@click.argument(
    "corpora",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@rules_option
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
@click.option(
    "--show",
    type=click.IntRange(min=0),
    default=10,
    show_default=True,
    help="How many misses and false alarms to list per label.",
)
@click.option(
    "--split",
    type=click.Choice(["train", "dev", "test", "all"]),
    default="test",
    show_default=True,
    help="Which split of each corpus to score (the pack is fitted on train and dev only).",
)
@click.option(
    "--loco",
    is_flag=True,
    help="Instead: the leave-one-corpus-out table of the learned injection classifier "
    "(fit on all corpora under CORPORA but one, score the one left out; slow: one fit "
    "per corpus).",
)
@click.option("--quick", is_flag=True, help="With --loco: the larger corpora only.")
@pass_ctx
def eval_(
    c: Ctx,
    corpora: tuple[Path, ...],
    rules_dir: Path | None,
    as_json: bool,
    show: int,
    split: str,
    loco: bool,
    quick: bool,
) -> None:
    """Precision / recall / F1 of the rule pack on labelled corpora (shared/eval format).

    CORPORA are corpus folders (memories.jsonl + labels.json) or folders of them
    (shared/eval, shared/train). By default only each corpus's test split is scored.
    """
    from auditor.rulepack.engine import Engine
    from auditor.tools.evaluate import evaluate_corpus
    from auditor.tools.splits import corpus_folders

    if loco:
        _eval_loco(corpora, as_json, quick)
        return

    pack = _pack(c, rules_dir)
    engine = Engine(pack.active())
    folders = corpus_folders(corpora)
    if not folders:
        raise InputError(
            f"{', '.join(map(str, corpora))}: not a labelled corpus "
            "(missing memories.jsonl or labels.json)"
        )
    reports = [evaluate_corpus(path, engine, c.settings, split=split) for path in folders]
    if as_json:
        click.echo(json.dumps([r.as_dict() for r in reports], ensure_ascii=False, indent=2))
        return
    table = Table(show_edge=False)
    for col in (
        "corpus",
        "split",
        "label",
        "pos",
        "neg",
        "precision",
        "recall",
        "F1",
        "false alarms",
        "memories/s",
    ):
        table.add_column(col, justify="left" if col in ("corpus", "label") else "right")
    for rep in reports:
        rate = rep.memories / rep.seconds if rep.seconds else 0.0
        for sc in rep.scores:
            table.add_row(
                rep.corpus,
                rep.split if rep.split_recorded else f"{rep.split}*",
                sc.label,
                str(sc.positives),
                str(sc.negatives),
                f"{sc.precision:.3f}",
                f"{sc.recall:.3f}",
                f"{sc.f1:.3f}",
                f"{sc.false_alarm_rate:.1%}",
                f"{rate:,.0f}",
            )
    out_console.print(table)
    if any(not rep.split_recorded for rep in reports):
        click.echo("* split computed by the same hash: the corpus is not in the recorded splits")
    for rep in reports:
        if rep.candidate_recall is not None:
            click.echo(
                f"{rep.corpus} contradiction candidate recall: {rep.candidate_recall:.3f} "
                "(labelled pairs that reached the verdict step)"
            )
        for sc in rep.scores:
            if show and sc.misses:
                click.echo(
                    f"{rep.corpus} {sc.label} misses ({len(sc.misses)}): "
                    + ", ".join(sc.misses[:show])
                )
            if show and sc.false_alarms:
                click.echo(
                    f"{rep.corpus} {sc.label} false alarms ({len(sc.false_alarms)}): "
                    + ", ".join(sc.false_alarms[:show])
                )
        if rep.errors:
            err_console.print(f"{rep.corpus}: {rep.errors} detector errors")


def _eval_loco(roots: tuple[Path, ...], as_json: bool, quick: bool) -> None:
    """Print the leave-one-corpus-out rows as each fit finishes (it takes minutes)."""
    from auditor.tools.train_injection import iter_loco

    rows = []
    for row in iter_loco(roots, quick=quick):
        rows.append(row)
        if not as_json:
            t, a = row["test"], row["all"]
            click.echo(
                f"{row['corpus']:38} test P={t['precision']:.2f} R={t['recall']:.2f} "
                f"F1={t['f1']:.2f} FPR={t['fpr']:.3f} | all P={a['precision']:.2f} "
                f"R={a['recall']:.2f} F1={a['f1']:.2f} FPR={a['fpr']:.3f} ({row['seconds']} s)"
            )
    if as_json:
        click.echo(json.dumps(rows, indent=2))


@cli.command()
@_record_options
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
    record = _build_record(**fields)
    pack = _pack(c, rules_dir)
    write_guard = WriteGuard(pack, c.settings)
    # only the detectors of the rules that apply to the candidate are built
    write_guard.engine.on_load = _loading_line("guard")
    verdict = write_guard.check(record, consents=frozenset(consents))
    click.echo(json.dumps(verdict.as_dict(), ensure_ascii=False, indent=2))
    if verdict.decision != "allow":
        sys.exit(ExitCode.CHECK_FAILED)


@cli.command()
@click.option(
    "--memories",
    type=click.IntRange(min=1000),
    default=100_000,
    show_default=True,
    help="Size of each corpus's store.",
)
@rules_option
@click.option(
    "--bench-database-url",
    default=None,
    help="Scratch store for the benchmark (default: a temporary SQLite file). "
    "It is written to: never point it at a real store.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.option(
    "--corpus",
    type=click.Choice(["synthetic", "realistic", "both"]),
    default="both",
    show_default=True,
    help="Synthetic templates, realistic texts from the train splits of the labelled "
    "corpora (a checkout with ../shared beside it), or both side by side.",
)
@click.option(
    "--corpora",
    "corpora_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder with eval/ and train/ (default: MEMAUDIT_CORPORA_DIR, else ../shared "
    "next to the checkout).",
)
@pass_ctx
def bench(
    c: Ctx,
    memories: int,
    rules_dir: Path | None,
    bench_database_url: str | None,
    as_json: bool,
    corpus: str,
    corpora_dir: Path | None,
) -> None:
    """Throughput benchmark: full and incremental scans beside Presidio alone, one run."""
    from auditor.tools.bench import as_dict, render, run_bench

    result = run_bench(
        _pack(c, rules_dir),
        c.settings,
        memories,
        bench_database_url,
        say=lambda line: err_console.print(line, highlight=False),
        corpus=corpus,  # type: ignore[arg-type]
        corpora_dir=corpora_dir,
    )
    click.echo(json.dumps(as_dict(result), indent=2) if as_json else render(result))


def _parse_caps(values: tuple[str, ...]) -> dict[str, Any] | None:
    from auditor.tools.budget import SectionCap

    caps: dict[str, Any] = {}
    for value in values:
        try:
            section, items, chars = value.split(":")
            caps[section] = SectionCap(
                max_items=int(items) if items else None, max_chars=int(chars) if chars else None
            )
        except ValueError:
            raise InputError(
                f"--cap {value!r}: expected SECTION:ITEMS:CHARS, e.g. correction:12:900 "
                "(leave a number empty for no cap; SECTION * means every other section)"
            ) from None
    return caps or None


@cli.command()
@click.option("--subject", default=None, help="One subject's memories (default: the store).")
@click.option("--namespace", default=None, help="Only this namespace.")
@click.option(
    "--status", default="active", show_default=True, type=click.Choice([*MEMORY_STATUSES, "all"])
)
@click.option(
    "--step",
    type=click.FloatRange(0.01, 1.0),
    default=0.1,
    show_default=True,
    help="Budget grid step (share of the corpus's characters).",
)
@click.option(
    "--cap",
    "caps",
    multiple=True,
    metavar="SECTION:ITEMS:CHARS",
    help="Per-section caps to check which one binds, e.g. correction:12:900.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@pass_ctx
def budget(
    c: Ctx,
    subject: str | None,
    namespace: str | None,
    status: str,
    step: float,
    caps: tuple[str, ...],
    as_json: bool,
) -> None:
    """Recall@budget of recency, frequency and de-duplication (SEEDS.md section 5)."""
    import dataclasses

    from auditor.access.readers import MemoryFilter, iter_memories
    from auditor.detectors.base import MemoryView
    from auditor.tools.budget import items_from_views, render, sweep

    flt = MemoryFilter(subject=subject, status=_status_option(status), namespace=namespace)
    views = [MemoryView.from_model(m) for m in iter_memories(c.db(), flt)]
    if not views:
        raise InputError("no memories match: nothing to sweep")
    result = sweep(items_from_views(views), step=step, caps=_parse_caps(caps))
    if as_json:
        click.echo(
            json.dumps(dataclasses.asdict(result), default=str, ensure_ascii=False, indent=2)
        )
    else:
        click.echo(render(result))


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


# -- entry point -----------------------------------------------------------------------


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
