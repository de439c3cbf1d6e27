"""The judge's batch mode in the daemon: defer, submit after a scan, collect, rescan."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import select

from auditor.daemon.runner import JobContext, Metrics, run_job
from auditor.detectors.base import MemoryView
from auditor.judge.batches import PREFIX, collect, submit_deferred
from auditor.judge.llm import BatchHandle, BatchOutcome, Judge, JudgeRequest, JudgeResult, RawAnswer
from auditor.sources.files import open_source
from auditor.sources.importer import Importer
from auditor.store.db import Database
from auditor.store.models import Memory, ScanRun, SourceWatermark
from auditor.testing import make_record, write_jsonl


class BatchJudge(Judge):
    """A judge in batch mode whose batches end at once with canned verdicts."""

    def __init__(self, verdict: str = "contradiction") -> None:
        super().__init__("batch-model")
        self.deferring = True
        self.verdict = verdict
        self.calls = 0
        self.submitted: list[list[tuple[str, str]]] = []

    def _call(self, request: JudgeRequest) -> RawAnswer:
        self.calls += 1  # batch mode must not call the model during a scan
        raise AssertionError("called in batch mode")

    def submit_batch(
        self, pairs: Sequence[tuple[MemoryView, MemoryView, str | None]]
    ) -> BatchHandle | None:
        self.submitted.append([(a.memory_id, b.memory_id) for a, b, _ in pairs])
        requests = {
            f"pair-{n}": {
                "cache_key": self.pair_request(a, b, h).cache_key,
                "a": a.memory_id,
                "b": b.memory_id,
                "kind": "pair",
            }
            for n, (a, b, h) in enumerate(pairs)
        }
        return BatchHandle(f"batch_{len(self.submitted)}", "in_progress", requests, [])

    def collect_batch(self, handle: BatchHandle) -> BatchOutcome:
        outcome = BatchOutcome(handle.batch_id, "ended")
        for cid, meta in handle.requests.items():
            result = JudgeResult(self.verdict, 0.9, "b", "", "ok", self.model, meta["cache_key"])
            self._remember(result)
            outcome.results[cid] = (meta["a"], meta["b"], result)
        return outcome


def _view(db: Database, memory_id: str) -> MemoryView:
    with db.session() as s:
        m = s.get(Memory, memory_id)
        assert m is not None
        return MemoryView.from_model(m)


def _seed(db: Database, tmp_path: Path) -> None:
    rows = [
        make_record(memory_id="a1", subject="user:ann", fact="Ann lives in Lisbon."),
        make_record(memory_id="a2", subject="user:ann", fact="Ann lives in Oslo now."),
        make_record(memory_id="b1", subject="user:bob", fact="Bob likes tea."),
    ]
    Importer(db).run(open_source("jsonl", write_jsonl(tmp_path / "m.jsonl", rows), db.settings))


def test_batch_mode_defers_uncached_pairs_and_serves_cached_ones(
    db: Database, tmp_path: Path
) -> None:
    _seed(db, tmp_path)
    judge = BatchJudge()
    a, b = _view(db, "a1"), _view(db, "a2")
    first = judge.judge_pair(a, b)
    assert first.status == "deferred" and first.verdict == "unsure"
    assert judge.judge_pair(a, b).status == "deferred"  # deferred once, not twice
    assert [(x.memory_id, y.memory_id) for x, y, _ in judge.take_deferred()] == [("a1", "a2")]
    assert judge.take_deferred() == []
    judge._remember(JudgeResult("compatible", 0.8, "none", "", "ok", judge.model, first.cache_key))
    assert judge.judge_pair(a, b).verdict == "compatible"
    assert judge.calls == 0


def test_deferred_pairs_are_submitted_collected_and_rescanned(db: Database, tmp_path: Path) -> None:
    _seed(db, tmp_path)
    judge = BatchJudge()
    judge.judge_pair(_view(db, "a1"), _view(db, "a2"))
    batch_id = submit_deferred(db, judge)
    assert batch_id == "batch_1" and judge.submitted == [[("a1", "a2")]]
    with db.session() as s:
        row = s.get(SourceWatermark, PREFIX + batch_id)
        assert row is not None and "Lisbon" not in str(row.position)  # ids and keys only
    assert submit_deferred(db, judge) is None  # nothing left to send

    rescanned: list[list[str]] = []
    counts = collect(db, judge, lambda subjects: rescanned.append(list(subjects)))
    assert counts == {
        "batches_pending": 0,
        "batches_collected": 1,
        "verdicts": 1,
        "subjects_rescanned": 1,
    }
    assert rescanned == [["user:ann"]]
    with db.session() as s:
        assert s.get(SourceWatermark, PREFIX + batch_id) is None
    cached = judge.cached(judge.pair_request(_view(db, "a1"), _view(db, "a2")).cache_key)
    assert cached is not None and cached.verdict == "contradiction"


def test_the_daemon_job_collects_and_runs_a_targeted_scan(db: Database, tmp_path: Path) -> None:
    _seed(db, tmp_path)
    ctx = JobContext(db, db.settings, Metrics())
    judge = BatchJudge()
    ctx.judge, ctx.judge_built = judge, True
    run_job("full_scan", ctx)
    with db.session() as s:
        mark_before = s.get(SourceWatermark, "scan")
        assert mark_before is not None
        position = mark_before.position
    judge.judge_pair(_view(db, "a1"), _view(db, "a2"))
    submit_deferred(db, judge)
    result = run_job("judge_batches", ctx)
    assert result["enabled"] and result["batches_collected"] == 1
    with db.session() as s:
        runs = {r.mode: r.status for r in s.scalars(select(ScanRun))}
        mark = s.get(SourceWatermark, "scan")
        assert mark is not None and mark.position == position  # a targeted run: no move
    assert runs == {"full": "completed", "targeted": "completed"}
    assert judge.calls == 0


def test_the_job_is_off_without_a_judge_in_batch_mode(db: Database) -> None:
    ctx: Any = JobContext(db, db.settings, Metrics())
    ctx.judge, ctx.judge_built = None, True
    assert run_job("judge_batches", ctx) == {"enabled": False}
