"""The scan engine: select -> detect -> dedupe findings -> act -> record.

* **Incremental** by default: memories memaudit wrote since the last scan's watermark
  (``changed_at``), memories whose ``expires_at`` passed since then, and, for rules that
  compare memories of a subject (contradictions, duplicates, chains), every memory of each
  subject that has a changed memory. **Full** on demand, and automatically when the rule
  pack changed since the last scan (its hash is part of the watermark). The selection and
  what a batch reads are in :mod:`auditor.scan.selection`.
* Findings are deduplicated by fingerprint across runs: a re-scan of an unchanged store
  creates nothing. A finding whose memory changed or no longer triggers the rule is
  resolved automatically (with an audit event); a finding a reviewer dismissed stays
  dismissed.
* Automatic actions (quarantine, expire, supersede) go through the lifecycle module, in the
  same transaction as the finding that caused them, so they are applied exactly once.
* Every scan is recorded: counts per rule, errors (a detector crashing on one memory is an
  error for that memory and rule; the scan goes on), rule-pack hash, duration.
* **Shards.** A run is split into shards by a hash of the subject
  (:func:`~auditor.scan.selection.shard_of`). A shard is scanned in batches of subjects; each
  batch commits its findings, actions and the shard's cursor and counts in one transaction,
  under the shard's owner token. A shard taken over after a crash resumes after its cursor:
  every memory is scanned exactly once per run. The run is complete when all its shards are;
  whoever finishes the last shard writes the run's totals and moves the watermark.
  :meth:`Scanner.run` runs the shards in this process and, with ``scan_workers`` above 1
  (default: one per core), in worker processes (``auditor.scan.workers``); the daemon on
  PostgreSQL hands them to any replica (``auditor.scan.shards``). A run whose process was
  killed is closed as ``interrupted`` by the next scan (``auditor.scan.stale``).
* **Big subjects in windows.** Memory is bounded by the batch, not by the largest subject:
  a subject of more than ``SUBJECT_WINDOW`` (2,000) memories is scanned in chunks of that
  many, in memory-id order; each chunk commits with the cursor ``subject\x1flast id`` (the
  unit separator: a control character, so never part of a subject or memory id, and legal
  in PostgreSQL text, unlike NUL; a crash resumes inside the subject, exactly once).
  Per-memory rules see every memory once, as before. Subject rules (contradictions,
  duplicates, chains) see the chunk plus the
  ``WINDOW_OVERLAP`` (500) memories before it, and keep what involves the chunk. Known gap:
  two memories of one big subject more than a window apart in id order (at least 500, at
  most 2,500 memories) are never compared, and a duplicate cluster that spans windows is
  reported as the pairs each window sees. Subjects up to 2,000 memories are analysed whole,
  exactly as before.
"""

from __future__ import annotations

import bisect
import copy
import functools
import gc
import os
import socket
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import structlog
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from ulid import ULID

from auditor.detectors.base import DetectContext, MemoryView
from auditor.errors import MemauditError
from auditor.processes import owner_record
from auditor.rulepack.engine import Engine, EngineError, Hit
from auditor.rulepack.pack import RulePack
from auditor.scan import workers as scan_workers
from auditor.scan.evidence import EvidenceMasker
from auditor.scan.recorder import FindingRecorder
from auditor.scan.runs import (
    DISPATCH_INLINE,
    MAX_ERRORS_KEPT,
    SHARD_DONE,
    SHARD_FAILED,
    SHARD_PENDING,
    SHARD_RUNNING,
    WATERMARK,
    ScanSummary,
    close_run,
    merge_counts,
)
from auditor.scan.selection import (
    _VIEW_COLUMNS,
    _batch_focus,
    _changed_filter,
    _read_batch,
    _Selection,
    _Window,
    shard_of,
)
from auditor.scan.stale import reap_stale_runs
from auditor.store.db import Database
from auditor.store.models import (
    Memory,
    ScanRun,
    ScanShard,
    SourceWatermark,
)
from auditor.store.types import utcnow

__all__ = ["Scanner", "ShardLost", "ShardOutcome"]

log = structlog.get_logger(__name__)

SUBJECT_BATCH = 200
#: The fewest subjects a shard is made for: small enough that a store of a few hundred
#: subjects still splits into several shards (so worker processes, which start a few seconds
#: after the parent's own thread, share the work evenly), large enough that a shard's claim
#: and cursor transactions stay cheap beside its scanning.
SHARD_MIN_SUBJECTS = 25
#: A subject with more memories than this is scanned in windows of this many (see above).
SUBJECT_WINDOW = 2000
#: Memories before a window's own chunk that its subject rules compare it with.
WINDOW_OVERLAP = 500
#: Allocations between two young-generation collections while a shard is scanned (Python's
#: default is 700): the detectors make many small short-lived objects, and a collection
#: that often cost 15-25% of the contradiction detector's cold time (benchmarks/scan_bench.py)
_SCAN_GC_GEN0 = 50_000

Progress = Callable[[int], None]


class ShardLost(MemauditError):
    """Another attempt took the shard over (this one was presumed dead): stop, write nothing."""


@dataclass(frozen=True)
class ShardOutcome:
    """How one attempt at a shard ended: ``done``, ``released`` (asked to stop; the next
    attempt resumes after the cursor), ``lost`` (taken over) or ``gone`` (the run is over).
    """

    run_id: int
    shard: int
    status: str
    memories_scanned: int = 0


@dataclass(frozen=True)
class _ShardJob:
    """Who scans which shard of which run, and how: what every unit of a shard needs."""

    run_id: int
    shard: int
    owner: str
    sel: _Selection
    progress: Progress | None


def worker_name() -> str:
    """This process, as named in shard rows: host and pid."""
    return f"{socket.gethostname()}:{os.getpid()}"[:200]


def _count_errors(summary: ScanSummary, errors: Sequence[EngineError]) -> None:
    """Count a batch's detector errors in the summary, keeping the first few in full."""
    for err in errors:
        summary.error_count += 1
        if len(summary.errors) < MAX_ERRORS_KEPT:
            summary.errors.append(
                {
                    "rules": list(err.rule_ids),
                    "memories": list(err.memory_ids)[:20],
                    "error": err.error,
                }
            )


class Scanner:
    """Scans one store with one rule pack.

    Args:
        db: the store.
        pack: the rule pack.
        judge: an optional LLM judge handed to detectors.
        now: the scan time (default: now); expiry is judged against it.
    """

    def __init__(
        self, db: Database, pack: RulePack, judge: Any = None, now: datetime | None = None
    ) -> None:
        self.db = db
        self.settings = db.settings
        self.pack = pack
        self.rules = pack.active()
        self.engine = Engine(self.rules)
        self.rules_by_id = {r.id: r for r in self.rules}
        self.subject_rule_ids = frozenset(r.id for g in self.engine.subject_groups for r in g.rules)
        self.judge = judge
        self.now = now
        #: masks every personal-data and secret span in finding snippets (auditor.scan.evidence)
        self.masker = EvidenceMasker(self.settings)
        self.engine.keep_detections(self.masker.names)  # the masker reuses them
        self.recorder = FindingRecorder(
            db, self.engine, self.masker, self.rules_by_id, self.subject_rule_ids
        )
        self._judge_run: int | None = None

    def using(self, db: Database) -> Scanner:
        """This scanner (its rules and built detectors) writing through ``db``: another
        connection to the same store, as a forked scan worker needs."""
        other = copy.copy(self)
        other.db = db
        other.recorder = FindingRecorder(
            db, self.engine, self.masker, self.rules_by_id, self.subject_rule_ids
        )
        return other

    # -- public ---------------------------------------------------------------------------

    def run(
        self,
        *,
        full: bool = False,
        progress: Progress | None = None,
        total: Callable[[int], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        shards: int | None = None,
        workers: int | None = None,
    ) -> ScanSummary:
        """Run one scan: its shards here, or in worker processes (see :meth:`execute`).

        A run left ``running`` by a scan whose process is gone is closed as
        ``interrupted`` first (:mod:`auditor.scan.stale`).

        Args:
            full: scan every memory, not only what changed.
            progress: called with the number of memories done after each batch.
            total: called once with the number of memories to scan (for a progress bar).
            should_stop: asked between batches: when it says yes, the scan stops as
                ``interrupted``; what it wrote is kept (batches commit whole) and the
                watermark does not move, so the next scan redoes the rest.
            shards: how many shards (default: the ``scan_shards`` setting).
            workers: worker processes (default: the ``scan_workers`` setting).
        """
        reap_stale_runs(self.db, self.settings)  # killed scans' runs: closed, not "running"
        run_id = self.start(full=full, shards=shards, dispatch=DISPATCH_INLINE)
        try:
            if total is not None:
                total(self.planned(run_id))
            finished = self.execute(
                run_id, should_stop=should_stop, progress=progress, workers=workers
            )
            if not finished:
                self._end_run(run_id, "interrupted")
        except KeyboardInterrupt:
            self._end_run(run_id, "interrupted")
            raise
        except BaseException:
            self._end_run(run_id, "failed")
            raise
        return self.summary(run_id)

    def start(
        self,
        *,
        full: bool = False,
        shards: int | None = None,
        dispatch: str = DISPATCH_INLINE,
        targeted: bool = False,
    ) -> int:
        """Record a new run and its shards (all pending); returns the run id.

        Runs with few (changed) subjects get fewer shards: a shard is worth at least
        ``SHARD_MIN_SUBJECTS`` subjects.
        """
        now = self.now or utcnow()
        selection = self._selection(full or targeted, now)
        mode = "targeted" if targeted else "full" if selection.full else "incremental"
        wanted = 1 if targeted else shards or self.settings.scan_shards
        with self.db.session() as session:
            q = select(func.count(func.distinct(Memory.subject)))
            if not selection.full:
                q = q.where(_changed_filter(selection))
            subjects = int(session.scalar(q) or 0)
        count = max(1, min(wanted, -(-subjects // SHARD_MIN_SUBJECTS)))
        with self.db.write() as session:
            run = ScanRun(
                mode=mode,
                rule_pack_hash=self.pack.sha256,
                started_at=now,
                since=selection.since,
                shard_count=count,
                dispatch=dispatch,
                counts={
                    "shards": {"total": count, "done": 0, "failed": []},
                    "owner": owner_record(),  # who to ask whether the run is still alive
                },
            )
            session.add(run)
            session.flush()
            run_id = run.id
            session.add_all(
                ScanShard(run_id=run_id, shard=i, status=SHARD_PENDING, counts={})
                for i in range(count)
            )
        self._start_judge(run_id)
        log.info(
            "scan_started",
            run_id=run_id,
            mode=mode,
            rules=len(self.rules),
            shards=count,
            dispatch=dispatch,
        )
        return run_id

    def planned(self, run_id: int) -> int:
        """How many memories a run will scan (for a progress bar)."""
        with self.db.session() as session:
            found, where = self._run_filter(session, run_id)
            if not found:
                return 0
            q = select(func.count()).select_from(Memory)
            return int(session.scalar(q if where is None else q.where(where)) or 0)

    def shard_sizes(self, run_id: int) -> dict[int, int]:
        """Shard -> how many memories of the run it holds (shards without any are absent)."""
        with self.db.session() as session:
            found, where = self._run_filter(session, run_id)
            run = session.get(ScanRun, run_id)
            if not found or run is None:
                return {}
            q = select(Memory.subject, func.count()).group_by(Memory.subject)
            sizes: dict[int, int] = defaultdict(int)
            for subject, n in session.execute(q if where is None else q.where(where)):
                sizes[shard_of(subject, run.shard_count)] += int(n)
            return dict(sizes)

    def sample_facts(self, run_id: int, n: int) -> list[str]:
        """Up to ``n`` facts of the memories a run scans, in content-hash order (a spread)."""
        with self.db.session() as session:
            found, where = self._run_filter(session, run_id)
            if not found:
                return []
            q = select(Memory).order_by(Memory.content_hash).limit(n)
            return [m.fact for m in session.scalars(q if where is None else q.where(where))]

    def _run_filter(self, session: Session, run_id: int) -> tuple[bool, Any]:
        """(the run exists, the clause narrowing memories to what it scans or None: all)."""
        run = session.get(ScanRun, run_id)
        if run is None:
            return False, None
        sel = _Selection(run.mode != "incremental", run.since, run.started_at)
        return True, None if sel.full else _changed_filter(sel)

    def execute(
        self,
        run_id: int,
        *,
        should_stop: Callable[[], bool] | None = None,
        progress: Progress | None = None,
        workers: int | None = None,
    ) -> bool:
        """Scan every shard of a run that is not done; True when the run is over.

        With ``workers`` (default: the ``scan_workers`` setting; 0 = one per core) above 1
        and more than one open shard, the shards go to worker processes
        (:mod:`auditor.scan.workers`); otherwise they are scanned here, one after another.
        "One per core" (0, given or by default) is not taken for a run too small to repay a
        worker's start-up (:func:`auditor.scan.workers.worth_workers`); a count above 0 is.
        """
        with self.db.session() as session:
            pending = list(
                session.scalars(
                    select(ScanShard.shard)
                    .where(ScanShard.run_id == run_id, ScanShard.status != SHARD_DONE)
                    .order_by(ScanShard.shard)
                )
            )
        wanted = self.settings.scan_workers if workers is None else workers
        if wanted > 0:
            count = wanted
        elif not scan_workers.worth_workers(self, run_id):
            count = 1  # "one per core" is not worth a worker's start-up on a small run
        else:
            count = scan_workers.one_per_core()
        count = max(1, min(count, len(pending)))
        if count > 1 and scan_workers.can_use_workers(self):
            return scan_workers.run_in_workers(
                self, run_id, pending, count, should_stop=should_stop, progress=progress
            )
        for shard in pending:
            outcome = self.scan_shard(run_id, shard, should_stop=should_stop, progress=progress)
            if outcome.status == "released":
                return False
        return True

    def run_subjects(self, subjects: Sequence[str]) -> ScanSummary:
        """Scan every memory of these subjects now (a ``targeted`` run, here).

        Used when new knowledge concerns a few subjects (judge verdicts collected from a
        batch). The incremental watermark does not move.
        """
        run_id = self.start(targeted=True, dispatch=DISPATCH_INLINE)
        try:
            self.scan_shard(run_id, 0, only=subjects)
        except BaseException:
            self._end_run(run_id, "failed")
            raise
        return self.summary(run_id)

    def summary(self, run_id: int) -> ScanSummary:
        """The run's summary as recorded in the store."""
        with self.db.session() as session:
            run = session.get(ScanRun, run_id)
            if run is None:
                raise MemauditError(f"no scan run {run_id}")
            return ScanSummary.from_run(run)

    # -- one shard ------------------------------------------------------------------------

    def scan_shard(
        self,
        run_id: int,
        shard: int,
        *,
        owner: str | None = None,
        should_stop: Callable[[], bool] | None = None,
        progress: Progress | None = None,
        only: Sequence[str] | None = None,
    ) -> ShardOutcome:
        """Take a shard of a run (from whoever held it) and scan it from its cursor on.

        Args:
            run_id: the run.
            shard: the shard number.
            owner: this attempt's token (default: a fresh one).
            should_stop: asked between batches; yes releases the shard (pending again).
            progress: called with the number of memories done after each batch.
            only: scan these subjects instead of the shard's (a targeted run).

        Returns:
            How the attempt ended (see :class:`ShardOutcome`).
        """
        owner = owner or f"{worker_name()}:{ULID()}"
        claimed = self._claim(run_id, shard, owner)
        if claimed is None:
            return ShardOutcome(run_id, shard, "gone")
        sel, count, cursor = claimed
        thresholds = gc.get_threshold()
        # the detectors' long-lived state (data, caches) is not re-walked by the GC, and a
        # scan's many small short-lived objects (tokens, frames) trigger fewer collections
        gc.freeze()
        gc.set_threshold(max(thresholds[0], _SCAN_GC_GEN0), *thresholds[1:])
        done = 0
        try:
            candidates = set(only) if only is not None else self._subjects(sel)
            # a cursor "subject\x1fmemory id": that big subject was left half done
            partial, _, after = (cursor or "").partition("\x1f")
            subjects = sorted(
                s
                for s in candidates
                if (only is not None or shard_of(s, count) == shard)
                and (cursor is None or s > cursor or (after and s == partial))
            )
            for start in range(0, len(subjects), SUBJECT_BATCH):
                for unit in self._units(subjects[start : start + SUBJECT_BATCH]):
                    if should_stop is not None and should_stop():
                        self._release(run_id, shard, owner)
                        return ShardOutcome(run_id, shard, "released", done)
                    job = _ShardJob(run_id, shard, owner, sel, progress)
                    if isinstance(unit, str):  # one big subject, window after window
                        resume = after if after and unit == partial else None
                        n, stopped = self._scan_big(job, unit, resume, should_stop)
                        done += n
                        if stopped:
                            self._release(run_id, shard, owner)
                            return ShardOutcome(run_id, shard, "released", done)
                        continue
                    n = self._scan_unit(job, unit, unit[-1])
                    done += n
        except ShardLost:
            log.warning("shard_lost", run_id=run_id, shard=shard)
            return ShardOutcome(run_id, shard, "lost", done)
        finally:
            gc.set_threshold(*thresholds)
            gc.unfreeze()
        self._complete(run_id, shard, owner)
        return ShardOutcome(run_id, shard, "done", done)

    def _units(self, batch: Sequence[str]) -> Iterator[list[str] | str]:
        """A batch of subjects as runs of small subjects and, alone, each big subject."""
        with self.db.session() as session:
            big = {
                subject
                for subject, n in session.execute(
                    select(Memory.subject, func.count())
                    .where(Memory.subject.in_(batch))
                    .group_by(Memory.subject)
                )
                if n > SUBJECT_WINDOW
            }
        run: list[str] = []
        for subject in batch:
            if subject in big:
                if run:
                    yield run
                    run = []
                yield subject
            else:
                run.append(subject)
        if run:
            yield run

    def _scan_unit(
        self, job: _ShardJob, subjects: Sequence[str], cursor: str, window: _Window | None = None
    ) -> int:
        """Scan subjects (or one window of a big one); commit with the shard's cursor."""
        batch = ScanSummary(job.run_id, "full" if job.sel.full else "incremental", self.pack.sha256)
        n = self._scan_subjects(
            job.run_id,
            subjects,
            job.sel,
            batch,
            commit=functools.partial(
                self._advance,
                run_id=job.run_id,
                shard=job.shard,
                owner=job.owner,
                last_subject=cursor,
                batch=batch,
            ),
            window=window,
        )
        if job.progress is not None:
            job.progress(n)
        return n

    def _scan_big(
        self,
        job: _ShardJob,
        subject: str,
        after: str | None,
        should_stop: Callable[[], bool] | None,
    ) -> tuple[int, bool]:
        """Scan a subject of more than ``SUBJECT_WINDOW`` memories in windows (see the
        module docstring); each window commits with the cursor ``subject\x1flast id``.
        Returns the memories scanned and whether a stop was asked between windows."""
        with self.db.session() as session:
            ids = list(
                session.scalars(
                    select(Memory.memory_id)
                    .where(Memory.subject == subject)
                    .order_by(Memory.memory_id)
                )
            )
        begin = bisect.bisect_right(ids, after) if after is not None else 0
        done = 0
        for k in range(begin, len(ids), SUBJECT_WINDOW):
            if k > begin and should_stop is not None and should_stop():
                return done, True
            chunk = ids[k : k + SUBJECT_WINDOW]
            last = k + SUBJECT_WINDOW >= len(ids)
            window = _Window(ids[max(0, k - WINDOW_OVERLAP) : k + SUBJECT_WINDOW], chunk, k == 0)
            cursor = subject if last else f"{subject}\x1f{chunk[-1]}"
            done += self._scan_unit(job, [subject], cursor, window)
        return done, False

    def fail_shard(self, run_id: int, shard: int, error: str) -> None:
        """Give a shard up for this run (its retries are spent); the run ends as failed."""
        with self.db.write() as session:
            row = session.get(ScanShard, (run_id, shard), with_for_update=True)
            if row is None or row.status == SHARD_DONE:
                return
            row.status = SHARD_FAILED
            row.owner = None
            row.finished_at = utcnow()
            row.counts = {**(row.counts or {}), "failure": error[:300]}
            self._maybe_finish(session, run_id)

    def _start_judge(self, run_id: int) -> None:
        if self.judge is not None and hasattr(self.judge, "start_scan"):
            if self._judge_run != run_id:
                self.judge.start_scan()  # a fresh per-scan call and token budget
                self._judge_run = run_id

    def _claim(
        self, run_id: int, shard: int, owner: str
    ) -> tuple[_Selection, int, str | None] | None:
        with self.db.write() as session:
            run = session.get(ScanRun, run_id)
            row = session.get(ScanShard, (run_id, shard), with_for_update=True)
            if run is None or row is None or run.status != "running" or row.status == SHARD_DONE:
                return None
            now = utcnow()
            row.owner = owner
            row.status = SHARD_RUNNING
            row.worker = worker_name()
            row.attempts += 1
            row.started_at = row.started_at or now
            row.heartbeat_at = now
            sel = _Selection(run.mode != "incremental", run.since, run.started_at)
            if run.rule_pack_hash != self.pack.sha256:
                # an operator changed the rules while the run was going: this shard uses the
                # pack this process has; the run is marked so the next scan is a full one
                row.counts = {**(row.counts or {}), "rule_pack_hash": self.pack.sha256}
            claimed = (sel, run.shard_count, row.cursor)
        self._start_judge(run_id)
        return claimed

    def _owned(self, session: Session, run_id: int, shard: int, owner: str) -> ScanShard:
        row = session.get(ScanShard, (run_id, shard), with_for_update=True, populate_existing=True)
        if row is None or row.owner != owner:
            raise ShardLost(f"shard {shard} of scan run {run_id} was taken over")
        return row

    def _advance(
        self,
        session: Session,
        run_id: int,
        shard: int,
        owner: str,
        last_subject: str,
        batch: ScanSummary,
    ) -> None:
        """In the batch's own transaction: move the shard's cursor and add its counts."""
        row = self._owned(session, run_id, shard, owner)
        row.cursor = last_subject
        row.memories_scanned += batch.memories_scanned
        row.counts = merge_counts(row.counts or {}, batch.counts())
        row.heartbeat_at = utcnow()

    def _release(self, run_id: int, shard: int, owner: str) -> None:
        with self.db.write() as session:
            try:
                row = self._owned(session, run_id, shard, owner)
            except ShardLost:
                return
            row.status = SHARD_PENDING
            row.owner = None
        log.info("shard_released", run_id=run_id, shard=shard)

    def _complete(self, run_id: int, shard: int, owner: str) -> None:
        with self.db.write() as session:
            try:
                row = self._owned(session, run_id, shard, owner)
            except ShardLost:
                return
            row.status = SHARD_DONE
            row.owner = None
            row.finished_at = utcnow()
            self._maybe_finish(session, run_id)
        log.info("shard_finished", run_id=run_id, shard=shard)

    # -- end of a run ---------------------------------------------------------------------

    def _end_run(self, run_id: int, status: str) -> None:
        """End a run that will not complete (interrupted, failed, abandoned)."""
        with self.db.write() as session:
            run = session.get(ScanRun, run_id, with_for_update=True)
            if run is None or run.status != "running":
                return
            self._close(session, run, status)

    def _maybe_finish(self, session: Session, run_id: int) -> None:
        """When every shard of the run is done (or given up), close the run."""
        run = session.get(ScanRun, run_id, with_for_update=True, populate_existing=True)
        if run is None or run.status != "running":
            return
        states = list(session.scalars(select(ScanShard.status).where(ScanShard.run_id == run_id)))
        if any(s in (SHARD_PENDING, SHARD_RUNNING) for s in states):
            return
        self._close(session, run, "completed" if SHARD_FAILED not in states else "failed")

    def _close(self, session: Session, run: ScanRun, status: str) -> None:
        close_run(session, self.settings, run, status)

    # -- selection ------------------------------------------------------------------------

    def _selection(self, full: bool, now: datetime) -> _Selection:
        with self.db.session() as session:
            mark = session.get(SourceWatermark, WATERMARK)
        if full or mark is None or mark.details.get("rule_pack_hash") != self.pack.sha256:
            return _Selection(True, None, now)
        since = datetime.fromisoformat(str(mark.position))
        return _Selection(False, since, now)

    def _subjects(self, sel: _Selection) -> list[str]:
        with self.db.session() as session:
            q = select(Memory.subject).distinct().order_by(Memory.subject)
            if not sel.full:
                q = q.where(_changed_filter(sel))
            return list(session.scalars(q))

    # -- one batch of subjects -------------------------------------------------------------

    def _scan_subjects(
        self,
        run_id: int,
        subjects: Sequence[str],
        sel: _Selection,
        summary: ScanSummary,
        commit: Callable[[Session], None] | None = None,
        window: _Window | None = None,
    ) -> int:
        """Scan a batch of subjects; ``commit`` runs inside the batch's write transaction.

        With ``window`` (one big subject): only the window's memories are loaded, only its
        chunk is evaluated per memory, and subject rules keep what involves the chunk.
        """
        with self.db.session() as session:
            rows, changed_ids, consents = _read_batch(session, subjects, sel, window)
        focus, changed_ids = _batch_focus(changed_ids, window)
        views = {row[0]: MemoryView(**dict(zip(_VIEW_COLUMNS, row, strict=True))) for row in rows}
        by_subject: dict[str, list[MemoryView]] = defaultdict(list)
        for v in views.values():
            by_subject[v.subject].append(v)
        ctx = DetectContext(
            now=sel.now,
            settings=self.settings,
            consents=consents,
            lookup=self._lookup,
            judge=self.judge,
            focus=focus,
        )
        hits: list[Hit] = []
        errors: list[EngineError] = []
        evaluated: set[str] = set()
        self.engine.kept.clear()  # the masker reuses what the detectors find in this batch
        self.engine.prepare(
            [v for v in views.values() if changed_ids is None or v.memory_id in changed_ids]
        )
        for group in by_subject.values():
            for v in group:
                if changed_ids is None or v.memory_id in changed_ids:
                    h, e = self.engine.run_memory(v, ctx)
                    hits += h
                    errors += e
                    evaluated.add(v.memory_id)
            h, e = self.engine.run_subject(group, ctx)
            hits += h
            errors += e
        summary.memories_scanned += len(evaluated)
        summary.subjects_scanned += len(by_subject) if window is None or window.first else 0
        _count_errors(summary, errors)
        self.recorder.record(run_id, hits, views, evaluated, ctx.focus, sel.now, summary, commit)
        self.engine.kept.clear()  # this batch's (also cleared before each batch)
        return len(evaluated)

    def _lookup(self, memory_id: str) -> MemoryView | None:
        with self.db.session() as session:
            m = session.get(Memory, memory_id)
            return MemoryView.from_model(m) if m is not None else None
