"""``memaudit eval``, ``bench`` and ``budget``: measuring detection, speed and briefings.

Registered by :mod:`auditor.cli.main`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.table import Table

from auditor.cli.context import (
    Ctx,
    err_console,
    load_rule_pack,
    out_console,
    pass_ctx,
    rules_option,
)
from auditor.cli.memories import status_option
from auditor.errors import InputError
from auditor.vocab import MEMORY_STATUSES

if TYPE_CHECKING:
    from auditor.tools.evaluate import EvalReport

__all__ = ["bench", "budget", "eval_"]


@click.command("eval")
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

    pack = load_rule_pack(c, rules_dir)
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
    _print_eval_table(reports)
    _print_eval_details(reports, show)


def _print_eval_table(reports: list[EvalReport]) -> None:
    """One row per corpus and label; a split marked * was computed, not recorded."""
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


def _print_eval_details(reports: list[EvalReport], show: int) -> None:
    """Per corpus: candidate recall, up to ``show`` misses and false alarms, detector errors."""
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


@click.command()
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
@click.option(
    "--workers",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Also time a full scan with this many worker processes on a fresh copy of the "
    "store (0 = one per CPU core, 1 = skip that step).",
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
    workers: int,
) -> None:
    """Throughput benchmark: full and incremental scans beside Presidio alone, one run."""
    from auditor.scan.workers import worker_count
    from auditor.tools.bench import as_dict, render, run_bench

    result = run_bench(
        load_rule_pack(c, rules_dir),
        c.settings,
        memories,
        bench_database_url,
        say=lambda line: err_console.print(line, highlight=False),
        corpus=corpus,  # type: ignore[arg-type]
        corpora_dir=corpora_dir,
        workers=workers or worker_count(c.settings.model_copy(update={"scan_workers": 0})),
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


@click.command()
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

    flt = MemoryFilter(subject=subject, status=status_option(status), namespace=namespace)
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
