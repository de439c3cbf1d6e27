"""The ``memoryfield`` connector: a Memoryfield (SEEDS.md section 3) audited where it lives,
with quarantine and erasure carried back into it.

Options:

``path`` (required)
    the Memoryfield folder or ``.zip``.
``subject``, ``namespace``
    as ``memaudit import --subject/--namespace``: the subject of pages whose front matter
    names none; the namespace recorded (default ``memoryfield:<folder name or zip stem>``).
``backup`` (default false)
    after a quarantine or restore, keep the previous version beside the Memoryfield as
    ``<name>.memaudit-backup-<UTC time>``. An erasure never keeps one, and deletes the
    backups earlier rewrites kept: they hold the subject's pages.
``drop_uneditable_index`` (default false)
    an erasure deletes an index file it cannot edit (a ``vec0`` table of sqlite-vec, a
    contentless FTS table, a corrupt file) instead of reporting it as not verified; the
    agent then rebuilds its index from the pages.

**Pull.** The import adapter (:class:`~auditor.sources.files.memoryfield.MemoryfieldSource`) reads
the pages, with its parsing, limits and guards. The external id is the page's relative path;
a quarantined page keeps its id and comes with ``status: quarantined`` (``source_status``
``quarantined``, ``retained_in`` ``memoryfield.quarantine``). ``next_cursor`` is the
Memoryfield's sha256: an incremental pull of an unchanged Memoryfield yields nothing.

**Quarantine** moves the page, byte for byte, to ``.quarantine/<path>.quarantined`` inside
the Memoryfield, and moves its rows out of the SQLite vector index into
``.quarantine/<path>.index-rows.json``. A Memoryfield reader loads ``*.md`` pages and searches
the index: a name that no longer ends in ``.md`` and rows no longer in the index take the page
out of both. A front-matter ``status`` would not (it is not part of the format: SEEDS.md names
title, created, modified, uuid, summary), nor would a hidden folder alone (a recursive walk,
the import adapter's included, still finds ``.quarantine/x.md``). **Restore** moves both back.

**Erasure** deletes the subject's pages (live and quarantined, with their stashed rows), the
index rows of those pages and the rows that point at them (vectors), and index rows of no page
that hold the subject's id or text; compacts the index (FTS merge or rebuild, ``ANALYZE`` if
``sqlite_stat4`` exists, ``VACUUM``); deletes kept backups; then searches every byte of the
result (each file of a folder; the archive and every entry of a zip) for the subject id, the
given values and the erased pages' text. Pages of other subjects that mention the subject
are reported, not changed.

Every rewrite is staged, fsynced and swapped in one step (see
:mod:`auditor.sources.live._memoryfield_tree`), refused if the Memoryfield changed meanwhile,
and records the new sha256: :attr:`MemoryfieldConnector.last_sha256`, a note of the
:class:`ErasureResult`, the ``memoryfield_rewritten`` log event; :meth:`current_sha256`
computes it at any time.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import structlog

from auditor.config import Settings
from auditor.errors import ConcurrencyError, InputError, NotFoundError
from auditor.sources.files._common import show_name
from auditor.sources.files.base import SourceItem
from auditor.sources.files.memoryfield import MemoryfieldSource, unsafe_name
from auditor.sources.live._memoryfield_index import (
    SQLITE_MAGIC,
    IndexDb,
    IndexEditError,
    PageLinker,
    PageRef,
    Row,
    decode_rows,
    encode_rows,
)
from auditor.sources.live._memoryfield_tree import FolderTree, Plan, Tree, open_tree
from auditor.sources.live.base import (
    Connector,
    ErasureResult,
    SourceConfig,
    memory_id_for,
)
from auditor.store.residue import Matcher, search_file

__all__ = ["QUARANTINE_DIR", "MemoryfieldConnector"]

log = structlog.get_logger(__name__)

QUARANTINE_DIR = ".quarantine"
_QUARANTINED = ".quarantined"
_ROWS = ".index-rows.json"
_ROWS_FORMAT = "memaudit-memoryfield-quarantine-rows/1"
_SIDECARS = ("-wal", "-shm", "-journal")
_LINE_MIN_CHARS = 16
_OPTIONS = frozenset({"path", "subject", "namespace", "backup", "drop_uneditable_index"})


def _quarantine_name(external_id: str) -> str:
    return f"{QUARANTINE_DIR}/{external_id}{_QUARANTINED}"


def _rows_name(external_id: str) -> str:
    return f"{QUARANTINE_DIR}/{external_id}{_ROWS}"


def _quarantined_page(name: str) -> str | None:
    """The page a quarantine entry holds (``.quarantine/a.md.quarantined`` -> ``a.md``)."""
    prefix = QUARANTINE_DIR + "/"
    if not (name.startswith(prefix) and name.endswith(_QUARANTINED)):
        return None
    page = name[len(prefix) : -len(_QUARANTINED)]
    return page if page.lower().endswith(".md") else None


def _is_live_page(name: str) -> bool:
    return name.lower().endswith(".md")


class _FieldReader(MemoryfieldSource):
    """The import adapter, reading quarantined pages too."""

    def _is_page_name(self, name: str) -> bool:
        return super()._is_page_name(name) or _quarantined_page(name) is not None


@dataclass(frozen=True)
class _Page:
    """A page the adapter read (``raw`` None: it could not be parsed)."""

    entry: str  # where it is now
    external_id: str
    quarantined: bool
    raw: dict[str, Any] | None

    @property
    def subject(self) -> str | None:
        return None if self.raw is None else str(self.raw["subject"])

    def ref(self) -> PageRef:
        if self.raw is None:
            return PageRef(self.external_id, None, "")
        ident = str(self.raw["memory_id"]).removeprefix("mf_")
        uuid = ident if ident.count("-") == 4 else None
        return PageRef(self.external_id, uuid, str(self.raw["fact"]))

    def texts(self) -> list[str]:
        """The page's text as the index or a search may hold it: body, lines, title..."""
        if self.raw is None:
            return []
        body = str(self.raw["fact"])
        out = [body, *(ln.strip() for ln in body.splitlines())]
        out += [str(self.raw[k]) for k in ("title", "summary") if self.raw.get(k)]
        return [t for t in out if len(t.strip()) >= _LINE_MIN_CHARS or t is body]


@dataclass(frozen=True)
class _Snapshot:
    sha256: str
    names: frozenset[str]  # every entry that is not a folder
    pages: list[_Page]
    indexes: list[str]
    unreadable: int  # entries the adapter refused without naming a page


def _option_text(options: dict[str, Any], key: str, source: str) -> str | None:
    value = options.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"source {source!r}: option {key!r} must be a non-empty string")
    return value


def _option_bool(options: dict[str, Any], key: str, source: str) -> bool:
    value = options.get(key, False)
    if not isinstance(value, bool):
        raise InputError(f"source {source!r}: option {key!r} must be true or false")
    return value


class MemoryfieldConnector(Connector):
    """A Memoryfield folder or zip (see the module docstring for options and behaviour).

    Attributes:
        last_sha256: the Memoryfield's sha256 after the last pull or rewrite (None before).

    Raises:
        InputError: unknown or invalid options.
    """

    kind = "memoryfield"
    supports = frozenset({"quarantine", "restore", "erase"})

    def __init__(self, config: SourceConfig, settings: Settings) -> None:
        super().__init__(config, settings)
        options = dict(config.options)
        unknown = sorted(set(options) - _OPTIONS)
        if unknown:
            raise InputError(
                f"source {config.name!r}: unknown option(s) {', '.join(unknown)}; "
                f"options: {', '.join(sorted(_OPTIONS))}"
            )
        path = _option_text(options, "path", config.name)
        if path is None:
            raise InputError(f"source {config.name!r}: option 'path' (folder or .zip) is required")
        self.path = Path(path).expanduser()
        self.subject = _option_text(options, "subject", config.name)
        self.namespace = _option_text(options, "namespace", config.name)
        self.backup = _option_bool(options, "backup", config.name)
        self.drop_uneditable_index = _option_bool(options, "drop_uneditable_index", config.name)
        self.last_sha256: str | None = None
        self._cursor: str | None = None

    # -- reading ---------------------------------------------------------------------------

    def _where(self) -> str:
        return f"source {self.config.name!r}"

    def _tree(self) -> Tree:
        """The Memoryfield on disk; a folder a crashed rewrite left aside is put back first."""
        real = self.path.resolve()
        if not real.exists() and real.parent.is_dir():
            tree = FolderTree(real, self.settings)
            with tree.locked():
                if tree.recover():
                    log.warning("memoryfield_recovered", source=self.config.name)
        try:
            return open_tree(real, self.settings)
        except InputError as exc:
            raise InputError(f"{self._where()}: {exc}") from None

    def _reader(self) -> _FieldReader:
        return _FieldReader(
            self.path, self.settings, subject=self.subject, namespace=self.namespace
        )

    def current_sha256(self) -> str:
        """The Memoryfield's sha256 now (the archive's; for a folder, over its files).

        Raises:
            InputError: it cannot be read.
        """
        self._tree()
        return self._reader().content_sha256()

    @staticmethod
    def _external_id(entry: str, names: Iterable[str]) -> tuple[str, bool]:
        """(external id, quarantined?) of a page entry.

        A quarantined page keeps its page's id, unless a live page has taken that name since.
        """
        page = _quarantined_page(entry)
        if page is None:
            return entry, False
        return (entry if page in names else page), True

    def _convert(self, item: SourceItem, names: frozenset[str]) -> SourceItem:
        if item.external_id is None:
            return item
        external_id, quarantined = self._external_id(item.external_id, names)
        if item.raw is None:
            return replace(item, external_id=external_id)
        name = self.config.name
        raw = dict(item.raw)
        raw.update(
            memory_id=memory_id_for(name, external_id),
            source={"type": "import", "uri": f"memoryfield://{name}/{external_id}"},
            import_memory_id=item.raw["memory_id"],
            source_name=name,
            source_kind=self.kind,
            external_id=external_id,
            source_status="quarantined" if quarantined else "live",
        )
        if quarantined:
            raw.update(status="quarantined", retained_in="memoryfield.quarantine")
        return SourceItem(item.location, raw=raw, consumed=item.consumed, external_id=external_id)

    def pull(self, cursor: str | None) -> Iterator[SourceItem]:
        """Every page (live and quarantined); nothing when ``cursor`` is the current sha256."""
        tree = self._tree()
        reader = self._reader()
        if cursor is not None:
            sha = reader.content_sha256()
            if sha == cursor:
                self._cursor = self.last_sha256 = sha
                return
        names = frozenset(e.rel for e in tree.entries() if e.kind != "dir")
        for item in reader.items():
            yield self._convert(item, names)
        self._cursor = self.last_sha256 = reader.sha256

    def next_cursor(self) -> str | None:
        return self._cursor

    def _snapshot(self, tree: Tree) -> _Snapshot:
        reader = self._reader()
        items = list(reader.items())
        sha = reader.sha256 or reader.content_sha256()
        entries = tree.entries()
        names = frozenset(e.rel for e in entries if e.kind != "dir")
        pages: list[_Page] = []
        unreadable = 0
        for item in items:
            if item.external_id is None:
                unreadable += 1
                continue
            external_id, quarantined = self._external_id(item.external_id, names)
            pages.append(_Page(item.external_id, external_id, quarantined, item.raw))
        candidates = [
            e.rel
            for e in entries
            if e.kind == "file"
            and not _is_live_page(e.rel)
            and _quarantined_page(e.rel) is None
            and not e.rel.endswith((_ROWS, *_SIDECARS))
        ]
        heads = tree.read_heads(candidates, len(SQLITE_MAGIC))
        indexes = [rel for rel in candidates if heads.get(rel) == SQLITE_MAGIC]
        return _Snapshot(sha, names, pages, indexes, unreadable)

    def test(self) -> dict[str, Any]:
        """Counts: pages, quarantined pages, unreadable entries, subjects, index files."""
        tree = self._tree()
        snap = self._snapshot(tree)
        live = [p for p in snap.pages if not p.quarantined]
        self.last_sha256 = snap.sha256
        return {
            "source": self.config.name,
            "kind": self.kind,
            "format": "folder" if isinstance(tree, FolderTree) else "zip",
            "pages": len(live),
            "quarantined": len(snap.pages) - len(live),
            "unreadable": snap.unreadable + sum(1 for p in snap.pages if p.raw is None),
            "subjects": len({p.subject for p in snap.pages if p.subject}),
            "index_files": len(snap.indexes),
            "sha256": snap.sha256,
        }

    def live_ids(self) -> set[str]:
        """Every page the Memoryfield holds (by name: readable or not), quarantined ones too."""
        names = frozenset(e.rel for e in self._tree().entries() if e.kind != "dir")
        ids = set()
        for name in names:
            if unsafe_name(name) or not (_is_live_page(name) or _quarantined_page(name)):
                continue
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                continue
            ids.add(self._external_id(name, names)[0])
        return ids

    # -- rewriting -------------------------------------------------------------------------

    @contextlib.contextmanager
    def _writing(self) -> Iterator[tuple[Tree, Path]]:
        """Lock, clean what crashed rewrites left, and give a work folder (always removed)."""
        tree = self._tree()
        with tree.locked():
            tree.recover()
            tree.clean_stale()
            work = tree.make_work()
            try:
                yield tree, work
            finally:
                tree.recover()  # never delete the work folder while it holds the original
                shutil.rmtree(work, ignore_errors=True)
                if work.exists():
                    log.error("memoryfield_work_not_removed", source=self.config.name)

    def _commit(self, tree: Tree, snap: _Snapshot, plan: Plan, work: Path, action: str) -> str:
        """Stage, check nothing changed meanwhile, swap; returns the new sha256."""
        keep = self.backup and action != "erase"
        staged = tree.stage(plan, work, copy=keep)
        if self._reader().content_sha256() != snap.sha256:
            raise ConcurrencyError(
                f"{self._where()}: the Memoryfield changed during the {action}; "
                "nothing was changed, try again"
            )
        tree.install(staged, work, tree.backup_path() if keep else None)
        sha = self._reader().content_sha256()
        self.last_sha256 = sha
        log.info(
            "memoryfield_rewritten",
            source=self.config.name,
            action=action,
            sha256_before=snap.sha256,
            sha256=sha,
            backup=keep,
        )
        return sha

    def _open_index(self, tree: Tree, snap: _Snapshot, rel: str, work: Path) -> IndexDb:
        """A private copy of an index (with its ``-wal`` / ``-journal``) in the work folder.

        Raises:
            InputError / IndexEditError: it cannot be copied or opened.
        """
        local = Path(tempfile.mkdtemp(dir=work)) / "index.db"
        tree.extract(rel, local)
        for suffix in ("-wal", "-journal"):
            if rel + suffix in snap.names:
                tree.extract(rel + suffix, local.with_name(local.name + suffix))
        return IndexDb(local)

    @staticmethod
    def _put_index(plan: Plan, snap: _Snapshot, rel: str, db: IndexDb | None) -> None:
        """Write the edited copy in place of an index (None: delete the index), without its
        ``-wal`` / ``-shm`` / ``-journal`` (the copy has them applied)."""
        if db is None:
            plan.delete.add(rel)
        else:
            plan.write[rel] = db.path
        plan.delete.update(rel + s for s in _SIDECARS if rel + s in snap.names)

    def _page_ids(self, external_ids: Sequence[str]) -> list[str]:
        ids: list[str] = []
        for external_id in external_ids:
            if not isinstance(external_id, str) or unsafe_name(external_id):
                raise InputError(f"{self._where()}: refused an unsafe page name")
            if not _is_live_page(external_id):
                raise InputError(f"{self._where()}: {show_name(external_id)!r} is not a page")
            if external_id not in ids:
                ids.append(external_id)
        return ids

    def _check_missing(self, missing: int, asked: int) -> None:
        """Pages gone from the source are skipped (logged); all of them gone is an error.

        Raises:
            NotFoundError: none of the pages asked for is in the Memoryfield.
        """
        if missing and missing == asked:
            raise NotFoundError(f"{self._where()}: no such page ({missing} asked for)")
        if missing:
            log.warning("memoryfield_pages_missing", source=self.config.name, pages=missing)

    def quarantine(self, external_ids: Sequence[str]) -> None:
        """Move pages to ``.quarantine/`` and their index rows beside them.

        Pages already quarantined are left as they are (a retried batch); pages gone from the
        Memoryfield are skipped and logged.

        Raises:
            InputError: an unsafe or non-page name, a quarantined copy already there, or an
                archive a rewrite refuses.
            NotFoundError: none of the pages is in the Memoryfield.
            ConcurrencyError: the Memoryfield changed during the rewrite (nothing changed).
        """
        ids = self._page_ids(external_ids)
        with self._writing() as (tree, work):
            snap = self._snapshot(tree)
            plan = Plan()
            targets: list[str] = []
            missing = 0
            for external_id in ids:
                stash = _quarantine_name(external_id)
                if external_id not in snap.names:
                    missing += stash not in snap.names
                    continue
                if stash in snap.names:
                    raise InputError(
                        f"{self._where()}: page {show_name(external_id)!r} already has a "
                        "quarantined copy; restore or erase it first"
                    )
                plan.rename[external_id] = stash
                targets.append(external_id)
            self._check_missing(missing, len(ids))
            if not targets:
                return
            for external_id, rows in self._move_rows_out(tree, snap, work, plan, targets).items():
                sidecar = Path(tempfile.mkstemp(dir=work, suffix=".json")[1])
                doc = {"format": _ROWS_FORMAT, "page": external_id, "indexes": rows}
                sidecar.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
                plan.write[_rows_name(external_id)] = sidecar
            self._commit(tree, snap, plan, work, "quarantine")

    def _move_rows_out(
        self, tree: Tree, snap: _Snapshot, work: Path, plan: Plan, targets: list[str]
    ) -> dict[str, dict[str, list[dict[str, Any]]]]:
        """Delete the targets' index rows; returns page -> index -> encoded rows."""
        linker = PageLinker(self._refs(snap, targets))
        moved: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for rel in snap.indexes:
            try:
                db = self._open_index(tree, snap, rel, work)
                try:
                    if db.opaque:
                        log.warning(
                            "memoryfield_index_partly_uneditable",
                            source=self.config.name,
                            tables=db.opaque,
                        )
                    rows = db.rows_for(linker, set(targets))
                    if rows:
                        db.delete(rows)
                        db.compact()
                finally:
                    db.close()
            except InputError:  # IndexEditError too: the copy is dropped, the page still moves
                log.warning(
                    "memoryfield_index_skipped", source=self.config.name, action="quarantine"
                )
                continue
            if not rows:
                continue
            self._put_index(plan, snap, rel, db)
            by_page: dict[str, list[Row]] = {}
            for row in rows:
                by_page.setdefault(row.page or targets[0], []).append(row)
            for page, page_rows in by_page.items():
                moved.setdefault(page, {})[rel] = encode_rows(page_rows)
        return moved

    @staticmethod
    def _refs(snap: _Snapshot, extra: Iterable[str] = ()) -> list[PageRef]:
        """Every page for the linker (pages the adapter could not parse: by path only)."""
        refs = {p.external_id: p.ref() for p in snap.pages}
        for name in [*extra, *(n for n in snap.names if _is_live_page(n))]:
            refs.setdefault(name, PageRef(name, None, ""))
        return list(refs.values())

    def restore(self, external_ids: Sequence[str]) -> None:
        """Move quarantined pages back, and their index rows into the index.

        Pages that are live already are left as they are; pages gone from the Memoryfield are
        skipped and logged. Index rows whose table is gone or
        whose key the agent reused since are not put back (the index can be rebuilt from the
        pages); the count is logged.

        Raises:
            InputError: an unsafe or non-page name, or a live page has taken the name.
            NotFoundError: none of the pages is in the Memoryfield, live or quarantined.
            ConcurrencyError: the Memoryfield changed during the rewrite (nothing changed).
        """
        ids = self._page_ids(external_ids)
        with self._writing() as (tree, work):
            snap = self._snapshot(tree)
            plan = Plan()
            rows_by_index: dict[str, list[Row]] = {}
            skipped = 0
            missing = 0
            for external_id in ids:
                stash = _quarantine_name(external_id)
                if stash not in snap.names:
                    missing += external_id not in snap.names
                    continue
                if external_id in snap.names:
                    raise InputError(
                        f"{self._where()}: a live page has taken the name "
                        f"{show_name(external_id)!r}; rename it before restoring"
                    )
                plan.rename[stash] = external_id
                if _rows_name(external_id) in snap.names:
                    plan.delete.add(_rows_name(external_id))
                    for rel, rows in self._stashed_rows(tree, external_id, work).items():
                        rows_by_index.setdefault(rel, []).extend(rows)
            self._check_missing(missing, len(ids))
            if not plan:
                return
            for rel, rows in rows_by_index.items():
                if rel not in snap.indexes:
                    skipped += len(rows)
                    continue
                try:
                    db = self._open_index(tree, snap, rel, work)
                    try:
                        inserted, missed = db.insert(rows)
                        if inserted:
                            db.compact()
                    finally:
                        db.close()
                except InputError:  # IndexEditError too: the copy is dropped, the page moves
                    skipped += len(rows)
                    continue
                skipped += missed
                if inserted:
                    self._put_index(plan, snap, rel, db)
            if skipped:
                log.warning(
                    "memoryfield_index_rows_not_restored", source=self.config.name, rows=skipped
                )
            self._commit(tree, snap, plan, work, "restore")

    def _stashed_rows(self, tree: Tree, external_id: str, work: Path) -> dict[str, list[Row]]:
        local = Path(tempfile.mkstemp(dir=work, suffix=".json")[1])
        try:
            tree.extract(_rows_name(external_id), local)
            doc = json.loads(local.read_text(encoding="utf-8"))
            if not isinstance(doc, dict) or doc.get("format") != _ROWS_FORMAT:
                raise ValueError("unknown format")
            indexes = doc.get("indexes")
            if not isinstance(indexes, dict):
                raise ValueError("no indexes")
            return {str(rel): decode_rows(rows) for rel, rows in indexes.items()}
        except (InputError, ValueError, UnicodeDecodeError, KeyError, TypeError):
            log.warning("memoryfield_stashed_rows_unreadable", source=self.config.name)
            return {}

    # -- erasure ---------------------------------------------------------------------------

    def _needles(
        self, subject: str, values: Sequence[str], targets: list[_Page], kept: list[_Page]
    ) -> set[str]:
        """The subject id, the given values, and the erased pages' text (minus text that
        pages kept for other subjects hold too, such as a shared template line)."""
        minimum = self.settings.erasure_min_value_chars
        derived = {t for p in targets for t in p.texts() if len(t.strip()) >= minimum}
        derived |= {p.ref().uuid or "" for p in targets} - {""}
        kept_text = "\n".join(t for p in kept for t in p.texts()).casefold()
        derived = {v for v in derived if v.casefold() not in kept_text}
        return {subject, *(v for v in values if v and v.strip())} | derived

    def erase_subject(self, subject: str, values: Sequence[str] = ()) -> ErasureResult:
        """Delete the subject's pages and index rows, compact, then search every byte.

        Args:
            subject: the subject (front matter ``subject``, or the ``subject`` option for
                pages without one).
            values: identifying values to search for too (memory only, never logged).

        Returns:
            Counts per place, where something was still found (names, never values), notes
            (the new sha256 among them).

        Raises:
            InputError: an archive a rewrite refuses (nothing was changed).
            ConcurrencyError: the Memoryfield changed during the rewrite (nothing changed).
        """
        result = ErasureResult()
        counts = {
            "memoryfield.pages": 0,
            "memoryfield.quarantined_pages": 0,
            "memoryfield.index_rows": 0,
            "memoryfield.index_files_dropped": 0,
            "memoryfield.backups": 0,
        }
        with self._writing() as (tree, work):
            snap = self._snapshot(tree)
            targets = [p for p in snap.pages if p.subject == subject]
            kept = [p for p in snap.pages if p.subject != subject]
            matcher = Matcher(self._needles(subject, values, targets, kept))
            plan = Plan()
            for page in targets:
                plan.delete.add(page.entry)
                if page.quarantined and _rows_name(page.external_id) in snap.names:
                    plan.delete.add(_rows_name(page.external_id))
                counts[
                    "memoryfield.quarantined_pages" if page.quarantined else "memoryfield.pages"
                ] += 1
            self._erase_index_rows(tree, snap, work, plan, targets, matcher, counts, result)
            if plan:
                sha = self._commit(tree, snap, plan, work, "erase")
                result.notes.append(f"rewrote the Memoryfield; new sha256 {sha}")
            for backup in tree.backups():
                if backup.is_dir() and not backup.is_symlink():
                    shutil.rmtree(backup)
                else:
                    backup.unlink()
                counts["memoryfield.backups"] += 1
        result.counts = counts
        with tree.locked():
            self._verify(tree, matcher, result)
        unparsed = snap.unreadable + sum(1 for p in snap.pages if p.raw is None)
        if unparsed:
            result.notes.append(
                f"{unparsed} page(s) could not be read, so their subject is unknown: they were "
                "searched, not erased"
            )
        if self.backup:
            result.notes.append("no backup is kept after an erasure (option 'backup')")
        log.info(
            "memoryfield_erased",
            source=self.config.name,
            counts=counts,
            verified=result.verified,
            remaining=len(result.remaining),
        )
        return result

    def _erase_index_rows(
        self,
        tree: Tree,
        snap: _Snapshot,
        work: Path,
        plan: Plan,
        targets: list[_Page],
        matcher: Matcher,
        counts: dict[str, int],
        result: ErasureResult,
    ) -> None:
        """Delete the targets' rows (and orphan rows holding a needle) from every index."""
        linker = PageLinker(self._refs(snap))
        keys = {p.external_id for p in targets}
        for rel in snap.indexes:
            try:
                db = self._open_index(tree, snap, rel, work)
                try:
                    if db.opaque and self.drop_uneditable_index:
                        raise IndexEditError("it has tables memaudit cannot edit")
                    changed, deleted = self._erase_in_index(db, linker, keys, matcher)
                finally:
                    db.close()
            except InputError as exc:  # IndexEditError too
                if self.drop_uneditable_index:
                    self._put_index(plan, snap, rel, None)
                    counts["memoryfield.index_files_dropped"] += 1
                else:
                    result.remaining.append(f"index {show_name(rel)}: cannot be edited ({exc})")
                continue
            result.remaining.extend(
                f"index {show_name(rel)}: {what} cannot be edited by memaudit" for what in db.opaque
            )
            counts["memoryfield.index_rows"] += deleted
            if changed:
                self._put_index(plan, snap, rel, db)
        if counts["memoryfield.index_files_dropped"]:
            result.notes.append(
                "deleted index file(s) memaudit cannot edit: the agent must rebuild its index"
            )

    @staticmethod
    def _erase_in_index(
        db: IndexDb, linker: PageLinker, keys: set[str], matcher: Matcher
    ) -> tuple[bool, int]:
        """Delete the pages' rows and orphan rows holding a needle; compact when the copy
        changed or its free pages still hold a needle. Returns (changed, rows deleted)."""
        residue = search_file(db.path, matcher) > 0
        rows = db.rows_for(
            linker, keys, lambda row: any(matcher.search_any(v) for v in row.values.values())
        )
        deleted = db.delete(rows) if rows else 0
        if rows or residue:
            db.compact()
        return bool(rows) or residue, deleted

    def _verify(self, tree: Tree, matcher: Matcher, result: ErasureResult) -> None:
        """Search every byte of the Memoryfield; name places, never values."""
        for place, count in sorted(tree.search(matcher).items()):
            result.remaining.append(
                f"{show_name(place)}: {count} match(es) of the subject's id or text"
            )
        for leftover in [*tree.backups(), *tree.work_dirs()]:
            result.remaining.append(f"{leftover.name}: a copy left beside the Memoryfield")
