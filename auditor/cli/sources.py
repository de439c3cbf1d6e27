"""The ``memaudit sources`` commands (registered by :mod:`auditor.cli.main`).

``sources list|add|remove|enable|disable|test|sync|actions``. Output never carries a
resolved secret (options are shown with their ``${...}`` references) nor personal data
(sync reports hold counts; outbox rows hold no subject or external id). Exit codes follow
:mod:`auditor.exitcodes`: ``sync`` exits 2 when items were skipped and 3 when a source
could not be synced.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from auditor.cli.context import Ctx
from auditor.cli.terminal import echo
from auditor.errors import InputError
from auditor.exitcodes import ExitCode

__all__ = ["register_sources_commands"]


def _json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True, default=str))


def parse_option(text: str) -> tuple[str, Any]:
    """``key=value`` (a string) or ``key:=JSON`` (a typed value) from ``--option``.

    Raises:
        InputError: not of either form, or invalid JSON.
    """
    key, sep, value = text.partition("=")
    if not sep or not key.strip(":").strip():
        raise InputError(f"--option {text.split('=')[0]!r}: expected key=value or key:=JSON")
    if key.endswith(":"):
        try:
            return key[:-1].strip(), json.loads(value)
        except ValueError:
            raise InputError(f"--option {key[:-1]!r}: the value is not valid JSON") from None
    return key.strip(), value


def _print_report(data: dict[str, Any]) -> None:
    imported = data.get("imported") or {}
    line = (
        f"{data['source']} ({data['kind']}): {data['status']}, {data['mode']} pull of "
        f"{data['pulled']} items: {imported.get('inserted', 0)} new, "
        f"{imported.get('updated', 0)} changed, {imported.get('unchanged', 0)} unchanged, "
        f"{imported.get('skipped', 0)} skipped; "
    )
    if data["deletions_checked"]:
        line += f"{data['gone']} gone from the source"
    else:
        line += "deletions not checked (incremental pull)"
    echo(line)
    if data.get("error"):
        echo(f"  error: {data['error']}")
    for message in data.get("errors") or []:
        echo(f"  {message}")
    actions = data.get("actions") or {}
    if any(actions.get(k) for k in ("done", "failed", "retrying", "cancelled")):
        echo(
            f"  write-back: {actions.get('done', 0)} done, {actions.get('retrying', 0)} to "
            f"retry, {actions.get('failed', 0)} failed, {actions.get('cancelled', 0)} cancelled"
        )


@click.group("sources")
def sources_group() -> None:
    """Live sources (mem0, LangGraph stores, SQL tables, Memoryfields, JSONL files):
    audited where they live, synced on schedule (docs/sources.md)."""


@sources_group.command("list")
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.pass_obj
def sources_list(c: Ctx, fmt: str) -> None:
    """Configured sources, their schedules and their last sync."""
    from auditor.sources.registry import list_sources

    infos = [info.as_dict() for info in list_sources(c.db())]
    if fmt == "json":
        _json(infos)
        return
    if not infos:
        echo("no sources (memaudit sources add NAME --kind KIND ...)", err=True)
        return
    for info in infos:
        last = info["last_sync"] or {}
        state = "enabled" if info["enabled"] else "disabled"
        back = ", write-back" if info["write_back"] else ""
        echo(
            f"{info['name']}\t{info['kind']}\t{info['schedule']}\t{state}{back}\t"
            f"last: {last.get('last_sync_status', 'never')} "
            f"{last.get('last_attempt_at') or ''}".rstrip()
        )


@sources_group.command("add")
@click.argument("name")
@click.option(
    "--kind",
    required=True,
    help="mem0 | langgraph-sqlite | langgraph-postgres | sql-table | memoryfield | jsonl",
)
@click.option(
    "--option",
    "options",
    multiple=True,
    metavar="KEY=VALUE",
    help="A connection option (repeatable); KEY:=JSON for a typed value. Secrets only "
    "as ${ENV_VAR} or ${secret:NAME}.",
)
@click.option(
    "--mapping",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    help="A mapping YAML (sql-table: table and columns), stored as option 'mapping'.",
)
@click.option(
    "--schedule",
    default="every 15m",
    show_default=True,
    help="Sync schedule: crontab, 'every 15m', or 'off'.",
)
@click.option("--write-back", is_flag=True, help="Carry quarantine and erasure into it.")
@click.option("--disabled", is_flag=True, help="Add it without scheduled syncs.")
@click.option("--replace", is_flag=True, help="Change an existing source of that name.")
@click.option("--by", "actor", default="memaudit", show_default=True, help="Audit actor.")
@click.pass_obj
def sources_add(
    c: Ctx,
    name: str,
    kind: str,
    options: tuple[str, ...],
    mapping: Path | None,
    schedule: str,
    write_back: bool,
    disabled: bool,
    replace: bool,
    actor: str,
) -> None:
    """Add a source (checked: a secret in clear is refused)."""
    from auditor.sources.live.base import SourceConfig
    from auditor.sources.registry import add_source, load_mapping

    values: dict[str, Any] = dict(parse_option(o) for o in options)
    if mapping is not None:
        values["mapping"] = load_mapping(mapping)
    config = add_source(
        c.db(),
        SourceConfig(
            name=name, kind=kind, options=values, schedule=schedule, write_back=write_back
        ),
        enabled=not disabled,
        replace=replace,
        actor=actor,
    )
    echo(f"source {config.name} ({config.kind}) added; sync: {config.schedule}")


@sources_group.command("remove")
@click.argument("name")
@click.option("--force", is_flag=True, help="Also cancel erasures waiting for it.")
@click.option("--by", "actor", default="memaudit", show_default=True, help="Audit actor.")
@click.pass_obj
def sources_remove(c: Ctx, name: str, force: bool, actor: str) -> None:
    """Remove a source (its memories stay; its cursor goes)."""
    from auditor.sources.registry import remove_source

    remove_source(c.db(), name, actor=actor, force=force)
    echo(f"source {name} removed")


@sources_group.command("enable")
@click.argument("name")
@click.pass_obj
def sources_enable(c: Ctx, name: str) -> None:
    """Resume scheduled syncs of a source."""
    from auditor.sources.registry import set_enabled

    set_enabled(c.db(), name, True)
    echo(f"source {name} enabled")


@sources_group.command("disable")
@click.argument("name")
@click.pass_obj
def sources_disable(c: Ctx, name: str) -> None:
    """Stop scheduled syncs of a source (manual syncs still work)."""
    from auditor.sources.registry import set_enabled

    set_enabled(c.db(), name, False)
    echo(f"source {name} disabled")


@sources_group.command("test")
@click.argument("name")
@click.pass_obj
def sources_test(c: Ctx, name: str) -> None:
    """Open a source read-only and print counts (never data)."""
    from auditor.sources.registry import connect

    with connect(c.db(), name) as connector:
        counts = connector.test()
    _json({"source": name, "ok": True, **counts})


@sources_group.command("sync")
@click.argument("names", nargs=-1)
@click.option("--full", is_flag=True, help="Pull everything (detects deletions).")
@click.option("--json", "as_json", is_flag=True, help="Print the reports as JSON.")
@click.pass_obj
def sources_sync(c: Ctx, names: tuple[str, ...], full: bool, as_json: bool) -> None:
    """Sync sources now (default: every enabled source), then carry write-back actions."""
    from auditor.sources.outbox import run_outbox
    from auditor.sources.registry import list_sources
    from auditor.sources.sync import sync_source

    db = c.db()
    chosen = list(names) or [i.config.name for i in list_sources(db) if i.enabled]
    if not chosen:
        raise InputError("no sources to sync (memaudit sources add ...)")
    reports = [sync_source(db, n, full=full, actions=False).as_dict() for n in chosen]
    outbox = run_outbox(db)
    if as_json:
        _json({"sources": reports, "actions": outbox})
    else:
        for data in reports:
            _print_report(data)
        if any(outbox.get(k) for k in ("done", "failed", "retrying", "cancelled")):
            echo(
                f"write-back: {outbox['done']} done, {outbox['retrying']} to retry, "
                f"{outbox['failed']} failed, {outbox['cancelled']} cancelled"
            )
    statuses = {r["status"] for r in reports}
    if statuses & {"failed", "busy"}:
        sys.exit(ExitCode.INTERNAL)
    if "completed_with_errors" in statuses:
        sys.exit(ExitCode.USAGE)


@sources_group.command("actions")
@click.option("--status", default=None, help="pending | done | failed | cancelled")
@click.option("--source", default=None, help="Only this source's actions.")
@click.option("--limit", default=100, show_default=True, type=int)
@click.option("--retry", "retry_id", type=int, default=None, help="Retry a failed action.")
@click.option("--cancel", "cancel_id", type=int, default=None, help="Give an action up.")
@click.option("--by", "actor", default="memaudit", show_default=True, help="Audit actor.")
@click.pass_obj
def sources_actions(
    c: Ctx,
    status: str | None,
    source: str | None,
    limit: int,
    retry_id: int | None,
    cancel_id: int | None,
    actor: str,
) -> None:
    """The write-back outbox (as JSON; no subjects, no external ids)."""
    from auditor.sources.outbox import cancel_action, list_actions, retry_action

    db = c.db()
    if retry_id is not None:
        retry_action(db, retry_id, actor=actor)
        echo(f"source action {retry_id}: pending again")
        return
    if cancel_id is not None:
        cancel_action(db, cancel_id, actor=actor)
        echo(f"source action {cancel_id}: cancelled")
        return
    _json([a.as_dict() for a in list_actions(db, status=status, source=source, limit=limit)])


def register_sources_commands(cli: click.Group) -> None:
    """Add the ``sources`` group to the ``memaudit`` group.

    Args:
        cli: the root command group.
    """
    cli.add_command(sources_group)
