"""A Memoryfield on disk (folder or zip) and its safe rewrite: stage, fsync, swap.

A rewrite never edits the Memoryfield in place. Under an exclusive lock on the parent
folder it builds the new version in a private work folder beside it
(``.<name>.memaudit-work-<random>``, mode 0700, same file system), fsyncs every file and
folder it wrote, and then replaces the Memoryfield in one step:

* a zip: ``rename(2)`` of the new archive over the old one;
* a folder: ``renameat2(RENAME_EXCHANGE)`` swaps the two folders atomically (Linux); where
  the file system cannot, two renames, with the old folder moved back if the second fails.
  A crash between the two leaves the old folder in the work folder; :func:`recover` (run
  before every read and rewrite) moves it back.

The work folder, which then holds the previous version, is deleted, unless the caller keeps
that version as ``<name>.memaudit-backup-<UTC time>``. A crash before the swap leaves the
Memoryfield untouched and a stale work folder that the next rewrite deletes.

Unchanged files of a folder are hard links in the new version (no copy of their bytes); with
a backup they are copied, so the backup does not change when the agent edits a page in place.

Zip input is untrusted and keeps the import adapter's limits: a rewrite refuses archives with
unsafe entry names (absolute, ``..``, backslashes, NUL), encrypted or duplicate entries, more
than ``memoryfield_max_entries`` entries, zip-bomb compression ratios, or more than
``memoryfield_max_total_bytes`` of data. Entries are streamed, never extracted, except the
index copy the caller asks for (:meth:`Tree.extract`).
"""

from __future__ import annotations

import abc
import contextlib
import ctypes
import errno
import fcntl
import os
import shutil
import stat
import sys
import tempfile
import time
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from auditor.config import Settings
from auditor.errors import ConcurrencyError, InputError
from auditor.sources.files.memoryfield import (
    ZIP_READ_ERRORS,
    open_archive,
    unsafe_name,
)
from auditor.store.residue import Matcher, search_file

__all__ = [
    "BACKUP_MARK",
    "Entry",
    "FolderTree",
    "Plan",
    "Tree",
    "ZipTree",
    "open_tree",
]

WORK_MARK = ".memaudit-work-"
BACKUP_MARK = ".memaudit-backup-"
_MIB = 1 << 20
_LOCK_WAIT_S = 30.0
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


@dataclass(frozen=True)
class Entry:
    """One entry: a relative POSIX name and what it is (``file``, ``link``, ``dir``, ``other``)."""

    rel: str
    kind: str
    size: int = 0


@dataclass
class Plan:
    """What a rewrite changes; every other entry is kept as it is.

    Attributes:
        delete: entries to leave out.
        rename: entry -> its new name.
        write: entry (new or replaced) -> a local file in the work folder with its bytes.
    """

    delete: set[str] = field(default_factory=set)
    rename: dict[str, str] = field(default_factory=dict)
    write: dict[str, Path] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.delete or self.rename or self.write)

    def check(self, existing: set[str], links: frozenset[str] = frozenset()) -> None:
        """Refuse unsafe names and changes that would overwrite a kept entry.

        Args:
            existing: every entry that is not a folder.
            links: symlinks of a folder: nothing may be written below one.

        Raises:
            InputError: the plan names an unsafe or missing entry, or collides.
        """
        for name in [*self.delete, *self.rename, *self.rename.values(), *self.write]:
            problem = unsafe_name(name)
            if problem:
                raise InputError(f"refused to rewrite: {problem}")
        for name in [*self.rename.values(), *self.write]:
            parts = name.split("/")
            if any("/".join(parts[:n]) in links for n in range(1, len(parts))):
                raise InputError("refused to rewrite: a folder on the way is a symlink")
        for name in [*self.delete, *self.rename]:
            if name not in existing:
                raise InputError("refused to rewrite: an entry to move or delete is missing")
        kept = existing - self.delete - set(self.rename)
        targets = list(self.rename.values())
        if len(set(targets)) != len(targets) or kept & set(targets):
            raise InputError("refused to rewrite: a moved entry would replace another one")
        if set(targets) & set(self.write):
            raise InputError("refused to rewrite: two changes name the same entry")


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2``); False where that is not possible."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
        return False
    raise OSError(err, os.strerror(err), str(a))


def _zip_date(info: zipfile.ZipInfo) -> tuple[int, int, int, int, int, int]:
    """The entry's date, or 1980-01-01 when it is not one ``ZipInfo`` accepts."""
    y, mo, d, h, mi, sec = info.date_time
    try:
        datetime(y, mo, d, h, mi, min(sec, 59))
    except (TypeError, ValueError):
        return (1980, 1, 1, 0, 0, 0)
    return (y, mo, d, h, mi, sec) if y >= 1980 else (1980, 1, 1, 0, 0, 0)


def _search_stream(fh: IO[bytes], matcher: Matcher, limit: int) -> int:
    """Matches of ``matcher`` in at most ``limit`` bytes of a stream (as ``search_file``)."""
    overlap = matcher.max_form_bytes + 8
    count = read = 0
    buf = b""
    while True:
        chunk = fh.read(min(_MIB, max(limit - read, 0))) if read < limit else b""
        read += len(chunk)
        eof = not chunk
        buf += chunk
        cut = len(buf) if eof else max(0, len(buf) - overlap)
        count += sum(1 for m in matcher.finditer_bytes(buf) if m.start() < cut)
        buf = buf[cut:]
        if eof:
            return count


class Tree(abc.ABC):
    """A Memoryfield on disk.

    Args:
        path: the folder or archive (symlinks resolved).
        settings: the ``memoryfield_*`` limits.
    """

    def __init__(self, path: Path, settings: Settings) -> None:
        self.path = path
        self.settings = settings

    @property
    def parent(self) -> Path:
        return self.path.parent

    @property
    def name(self) -> str:
        return self.path.name

    # -- locking, work folders, recovery --------------------------------------------------

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold an exclusive lock on the parent folder (one rewrite at a time).

        Raises:
            ConcurrencyError: another rewrite held it for more than 30 seconds.
        """
        fd = os.open(self.parent, os.O_RDONLY)
        try:
            deadline = time.monotonic() + _LOCK_WAIT_S
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise ConcurrencyError(
                            f"{self.path}: another rewrite holds the lock; try again later"
                        ) from None
                    time.sleep(0.1)
            yield
        finally:
            os.close(fd)  # releases the lock

    def work_dirs(self) -> list[Path]:
        """Work folders of rewrites (stale ones, when no rewrite is running)."""
        prefix = f".{self.name}{WORK_MARK}"
        try:
            return sorted(p for p in self.parent.iterdir() if p.name.startswith(prefix))
        except OSError:
            return []

    def backups(self) -> list[Path]:
        """Backups a rewrite kept (``<name>.memaudit-backup-*`` beside the Memoryfield)."""
        prefix = f"{self.name}{BACKUP_MARK}"
        try:
            return sorted(p for p in self.parent.iterdir() if p.name.startswith(prefix))
        except OSError:
            return []

    def recover(self) -> bool:
        """Put back a folder a crashed rewrite left in its work folder. True if it did."""
        if self.path.exists():
            return False
        for work in self.work_dirs():
            old = work / "old"
            if old.is_dir():
                os.rename(old, self.path)
                _fsync(self.parent)
                shutil.rmtree(work, ignore_errors=True)  # what is left: the unfinished version
                return True
        return False

    def clean_stale(self) -> int:
        """Delete work folders of rewrites that did not finish (call under the lock)."""
        if not self.path.exists():
            return 0
        stale = self.work_dirs()
        for work in stale:
            shutil.rmtree(work, ignore_errors=True)
        return len(stale)

    def make_work(self) -> Path:
        """A new private work folder beside the Memoryfield (mode 0700)."""
        return Path(tempfile.mkdtemp(prefix=f".{self.name}{WORK_MARK}", dir=self.parent))

    def backup_path(self) -> Path:
        return self.parent / f"{self.name}{BACKUP_MARK}{_stamp()}"

    # -- reading --------------------------------------------------------------------------

    @abc.abstractmethod
    def entries(self) -> list[Entry]:
        """Every entry, sorted by name.

        Raises:
            InputError: unreadable, or over ``memoryfield_max_entries``.
        """

    @abc.abstractmethod
    def read_heads(self, rels: list[str], size: int) -> dict[str, bytes]:
        """The first ``size`` bytes of file entries (b"" for one that cannot be read)."""

    @abc.abstractmethod
    def extract(self, rel: str, dest: Path) -> None:
        """Copy a file entry's bytes to ``dest`` (bounded by the limits).

        Raises:
            InputError: the entry is refused or unreadable.
        """

    @abc.abstractmethod
    def search(self, matcher: Matcher) -> dict[str, int]:
        """Where the needles occur: entry name (or ``(archive)``) -> matches."""

    # -- rewriting ------------------------------------------------------------------------

    @abc.abstractmethod
    def stage(self, plan: Plan, work: Path, *, copy: bool) -> Path:
        """Build the new version in ``work``, fsynced; the Memoryfield is not touched.

        Args:
            plan: the changes.
            work: the work folder.
            copy: copy unchanged files instead of hard-linking them (a backup is kept).

        Raises:
            InputError: the plan or the input is refused.
        """

    @abc.abstractmethod
    def install(self, staged: Path, work: Path, backup: Path | None) -> None:
        """Replace the Memoryfield with ``staged``; keep the old one at ``backup`` if given,
        else leave it in ``work`` (which the caller deletes)."""


class FolderTree(Tree):
    """A Memoryfield folder."""

    def entries(self) -> list[Entry]:
        limit = self.settings.memoryfield_max_entries
        found: list[Entry] = []

        def fail(exc: OSError) -> None:
            raise InputError(f"{self.path}: cannot read folder: {exc.strerror}")

        for dirpath, dirnames, filenames in os.walk(self.path, onerror=fail):
            here = Path(dirpath)
            for name in [*dirnames, *filenames]:
                if len(found) >= limit:
                    raise InputError(
                        f"{self.path}: the folder has more than {limit:,} entries (the limit)"
                    )
                path = here / name
                rel = path.relative_to(self.path).as_posix()
                try:
                    info = path.lstat()
                except OSError as exc:
                    raise InputError(f"{self.path}: cannot read: {exc.strerror}") from None
                if stat.S_ISLNK(info.st_mode):
                    found.append(Entry(rel, "link"))
                elif stat.S_ISDIR(info.st_mode):
                    found.append(Entry(rel, "dir"))
                elif stat.S_ISREG(info.st_mode):
                    found.append(Entry(rel, "file", info.st_size))
                else:
                    found.append(Entry(rel, "other"))
        found.sort(key=lambda e: e.rel)
        return found

    def _file(self, rel: str) -> Path:
        path = self.path / rel
        if unsafe_name(rel) or path.is_symlink() or not path.is_file():
            raise InputError("refused: not a regular file inside the Memoryfield")
        return path

    def read_heads(self, rels: list[str], size: int) -> dict[str, bytes]:
        heads: dict[str, bytes] = {}
        for rel in rels:
            try:
                with self._file(rel).open("rb") as fh:
                    heads[rel] = fh.read(size)
            except (InputError, OSError):
                heads[rel] = b""
        return heads

    def extract(self, rel: str, dest: Path) -> None:
        path = self._file(rel)
        limit = self.settings.memoryfield_max_total_bytes
        try:
            if path.stat().st_size > limit:
                raise InputError(f"a file is over the limit of {limit:,} bytes")
            shutil.copyfile(path, dest)
        except OSError as exc:
            raise InputError(f"{self.path}: cannot read: {exc.strerror}") from None

    def search(self, matcher: Matcher) -> dict[str, int]:
        hits: dict[str, int] = {}
        for entry in self.entries():
            if entry.kind != "file":
                continue
            count = search_file(self.path / entry.rel, matcher)
            if count:
                hits[entry.rel] = count
        return hits

    def stage(self, plan: Plan, work: Path, *, copy: bool) -> Path:
        entries = self.entries()
        links = frozenset(e.rel for e in entries if e.kind == "link")
        plan.check({e.rel for e in entries if e.kind != "dir"}, links)
        new = work / "new"
        new.mkdir()
        written: list[Path] = []
        dirs: list[tuple[Path, int]] = [(new, self.path.stat().st_mode)]
        for entry in entries:
            src = self.path / entry.rel
            if entry.kind == "dir":
                (new / entry.rel).mkdir(parents=True, exist_ok=True)
                dirs.append((new / entry.rel, src.lstat().st_mode))
                continue
            if entry.rel in plan.delete or entry.rel in plan.write or entry.kind == "other":
                continue
            dst = new / plan.rename.get(entry.rel, entry.rel)
            dst.parent.mkdir(parents=True, exist_ok=True)
            if entry.kind == "link":
                os.symlink(os.readlink(src), dst)
                continue
            if copy:
                shutil.copy2(src, dst)
            else:
                try:
                    os.link(src, dst)
                except OSError:
                    shutil.copy2(src, dst)
            written.append(dst)
        for rel, local in plan.write.items():
            dst = new / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            old = self.path / rel
            mode = old.lstat().st_mode if old.is_file() and not old.is_symlink() else 0o600
            os.replace(local, dst)
            os.chmod(dst, stat.S_IMODE(mode))
            written.append(dst)
        for path in written:
            _fsync(path)
        self._prune_empty(new / ".quarantine")
        for path, mode in sorted(dirs, key=lambda d: len(d[0].parts), reverse=True):
            if path.is_dir():
                _fsync(path)
                os.chmod(path, stat.S_IMODE(mode))
        _fsync(work)
        return new

    @staticmethod
    def _prune_empty(root: Path) -> None:
        """Remove empty folders under ``root`` (what quarantine and restore leave behind)."""
        if not root.is_dir() or root.is_symlink():
            return
        for dirpath, _dirs, _files in os.walk(root, topdown=False):
            with contextlib.suppress(OSError):
                os.rmdir(dirpath)

    def install(self, staged: Path, work: Path, backup: Path | None) -> None:
        if _exchange(staged, self.path):
            old = staged
        else:
            old = work / "old"
            os.rename(self.path, old)
            try:
                os.rename(staged, self.path)
            except BaseException:
                os.rename(old, self.path)
                raise
        _fsync(self.parent)
        if backup is not None:
            os.rename(old, backup)
            _fsync(self.parent)


class ZipTree(Tree):
    """A Memoryfield archive."""

    def _open(self) -> zipfile.ZipFile:
        return open_archive(self.path, self.settings.memoryfield_max_entries)

    def _checked(self, archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
        """The entries, refusing an archive that a rewrite must not copy.

        Raises:
            InputError: unsafe names, duplicate names, or encrypted entries.
        """
        infos = archive.infolist()
        seen: set[str] = set()
        unsafe = dupes = encrypted = 0
        for info in infos:
            if unsafe_name(info.orig_filename) or info.filename != info.orig_filename:
                unsafe += 1
            elif info.filename in seen:
                dupes += 1
            elif info.flag_bits & 0x1:
                encrypted += 1
            seen.add(info.filename)
        problems = [
            f"{n} {what}"
            for n, what in (
                (unsafe, "entries with unsafe names (path traversal, absolute, NUL, backslash)"),
                (dupes, "duplicate entry names"),
                (encrypted, "encrypted entries"),
            )
            if n
        ]
        if problems:
            raise InputError(f"{self.path}: refused to rewrite the archive: {'; '.join(problems)}")
        return infos

    def entries(self) -> list[Entry]:
        with self._open() as archive:
            found = []
            for info in archive.infolist():
                if info.is_dir():
                    kind = "dir"
                elif stat.S_ISLNK(info.external_attr >> 16):
                    kind = "link"
                else:
                    kind = "file"
                found.append(Entry(info.filename, kind, info.file_size))
        found.sort(key=lambda e: e.rel)
        return found

    def read_heads(self, rels: list[str], size: int) -> dict[str, bytes]:
        heads = dict.fromkeys(rels, b"")
        with self._open() as archive:
            for info in archive.infolist():
                if info.filename not in heads or info.is_dir() or info.flag_bits & 0x1:
                    continue
                if unsafe_name(info.orig_filename):
                    continue
                try:
                    with archive.open(info) as fh:
                        heads[info.filename] = fh.read(size)
                except ZIP_READ_ERRORS:
                    continue
        return heads

    def _copy(
        self, archive: zipfile.ZipFile, info: zipfile.ZipInfo, out: IO[bytes], left: int
    ) -> int:
        """Stream one entry into ``out`` under the ratio and total limits; bytes copied."""
        max_ratio = self.settings.memoryfield_max_ratio
        packed = max(info.compress_size, 1)
        if info.file_size > _MIB and info.file_size / packed > max_ratio:
            raise InputError(f"{self.path}: refused: an entry looks like a zip bomb")
        copied = 0
        try:
            with archive.open(info) as fh:
                while chunk := fh.read(_MIB):
                    copied += len(chunk)
                    if copied > left:
                        raise InputError(
                            f"{self.path}: refused: over the limit of "
                            f"{self.settings.memoryfield_max_total_bytes:,} uncompressed bytes"
                        )
                    if copied > _MIB and copied / packed > max_ratio:
                        raise InputError(f"{self.path}: refused: an entry looks like a zip bomb")
                    out.write(chunk)
        except ZIP_READ_ERRORS as exc:
            raise InputError(f"{self.path}: a corrupt entry ({type(exc).__name__})") from None
        return copied

    def extract(self, rel: str, dest: Path) -> None:
        with self._open() as archive:
            infos = {i.filename: i for i in self._checked(archive)}
            info = infos.get(rel)
            if info is None or info.is_dir():
                raise InputError(f"{self.path}: no such entry")
            with dest.open("wb") as out:
                self._copy(archive, info, out, self.settings.memoryfield_max_total_bytes)

    def search(self, matcher: Matcher) -> dict[str, int]:
        hits: dict[str, int] = {}
        raw = search_file(self.path, matcher)
        if raw:
            hits["(archive)"] = raw
        limit = self.settings.memoryfield_max_total_bytes
        with self._open() as archive:
            for info in archive.infolist():
                if info.is_dir() or info.flag_bits & 0x1:
                    continue
                try:
                    with archive.open(info) as fh:
                        count = _search_stream(fh, matcher, limit)
                except ZIP_READ_ERRORS:
                    hits[f"{info.filename} (unreadable)"] = 1
                    continue
                if count:
                    hits[info.filename] = hits.get(info.filename, 0) + count
        return hits

    def stage(self, plan: Plan, work: Path, *, copy: bool) -> Path:
        del copy  # an archive is always written anew
        new = work / "new.zip"
        left = self.settings.memoryfield_max_total_bytes
        moment = datetime.now(UTC)
        now = (moment.year, moment.month, moment.day, moment.hour, moment.minute, moment.second)
        with self._open() as archive:
            infos = self._checked(archive)
            plan.check({i.filename for i in infos if not i.is_dir()})
            modes = {i.filename: i.external_attr for i in infos}
            with zipfile.ZipFile(new, "w", zipfile.ZIP_DEFLATED) as out:
                out.comment = archive.comment
                for info in infos:
                    if info.filename in plan.delete or info.filename in plan.write:
                        continue
                    clone = zipfile.ZipInfo(
                        plan.rename.get(info.filename, info.filename), _zip_date(info)
                    )
                    clone.compress_type = info.compress_type
                    clone.external_attr = info.external_attr
                    clone.create_system = info.create_system
                    clone.comment = info.comment
                    clone.file_size = info.file_size
                    if info.is_dir():
                        out.writestr(clone, b"")
                        continue
                    with out.open(clone, "w") as sink:
                        left -= self._copy(archive, info, sink, left)
                for rel, local in sorted(plan.write.items()):
                    info = zipfile.ZipInfo(rel, now)
                    info.compress_type = zipfile.ZIP_DEFLATED
                    info.external_attr = modes.get(rel, (stat.S_IFREG | 0o600) << 16)
                    info.file_size = local.stat().st_size
                    with local.open("rb") as src, out.open(info, "w") as sink:
                        shutil.copyfileobj(src, sink, _MIB)
        os.chmod(new, stat.S_IMODE(self.path.stat().st_mode))
        _fsync(new)
        _fsync(work)
        return new

    def install(self, staged: Path, work: Path, backup: Path | None) -> None:
        del work
        if backup is not None:
            try:
                os.link(self.path, backup)
            except OSError:
                shutil.copy2(self.path, backup)
                _fsync(backup)
        os.replace(staged, self.path)
        _fsync(self.parent)


def open_tree(path: Path, settings: Settings) -> Tree:
    """The tree for a Memoryfield folder or archive (the path's symlinks resolved).

    Raises:
        InputError: the path does not exist.
    """
    if not path.exists():
        raise InputError(f"{path}: no such file or folder")
    real = path.resolve()
    return FolderTree(real, settings) if real.is_dir() else ZipTree(real, settings)
