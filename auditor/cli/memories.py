"""``memaudit memories``: list, show, add, supersede and the lifecycle actions of memories.

Registered by :mod:`auditor.cli.main`; :func:`record_options` and :func:`build_record` also
serve ``memaudit guard`` (:mod:`auditor.cli.scanning`).
"""

from __future__ import annotations

import json
from typing import Any

import click

from auditor.cli.context import (
    TABLE_DEFAULT_LIMIT,
    Ctx,
    emit_rows,
    limit_option,
    listing_format,
    out_console,
    pass_ctx,
)
from auditor.cli.terminal import clean, echo, safe_text
from auditor.errors import DanglingLinkError, InputError, NotFoundError
from auditor.vocab import MEMORY_KINDS, MEMORY_STATUSES, SOURCE_TYPES

__all__ = ["build_record", "memories", "print_memory", "record_options", "status_option"]


@click.group()
def memories() -> None:
    """List, show and manage memories (lifecycle actions are audited)."""


def status_option(value: str) -> str | None:
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
@limit_option
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
        subject=subject, status=status_option(status), namespace=namespace, category=category
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


def record_options(fn: Any) -> Any:
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


def build_record(
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


def print_memory(m: Any, verb: str) -> None:
    echo(f"{verb} {m.memory_id}: status {m.status}, {m.trust_tier} tier, version {m.version}")


@memories.command("add")
@record_options
@click.option("--by", "actor", required=True, help="Who adds it (audit log).")
@pass_ctx
def memories_add(c: Ctx, /, actor: str, **fields: Any) -> None:
    """Add a new active memory through the lifecycle (invariants enforced)."""
    from auditor.lifecycle.machine import Lifecycle

    record = build_record(**fields)
    print_memory(Lifecycle(c.db()).add(record, actor=actor), "added")


@memories.command("supersede")
@click.argument("old_id")
@record_options
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
        new = build_record(**fields, default_subject=subject)
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
        print_memory(m, verb)

    del command


_transition_command("delete", "soft-deleted", "Soft-delete a memory (kept until purge or erasure).")
_transition_command("quarantine", "quarantined", "Quarantine a memory (held from retrieval).")
_transition_command("expire", "expired", "Expire a memory.")
_transition_command("restore", "restored", "Undo a soft delete, quarantine or expiry.")
