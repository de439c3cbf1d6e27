"""Memoryfields (SEEDS.md section 3): Markdown pages with optional YAML front matter.

A Memoryfield is a .zip archive or a folder of ``*.md`` pages (found recursively); each page
becomes one memory. Other entries (an optional SQLite vector index, images) are skipped and
counted in :attr:`MemoryfieldSource.skipped_entries`.

Archives are untrusted input and are never extracted: pages are read into memory with bounded
reads. Entries with unsafe names (absolute paths, ``..`` components, backslashes, NUL bytes),
symlink entries, pages over ``memoryfield_max_page_bytes`` and entries whose compression ratio
looks like a zip bomb are refused one by one; more than ``memoryfield_max_entries`` entries
refuses the whole archive; passing ``memoryfield_max_total_bytes`` of uncompressed data stops
the import. In a folder, symlinks that leave the folder are refused and symlinked folders are
not followed.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import struct
import uuid
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import yaml

from auditor import safe_yaml
from auditor.errors import InputError
from auditor.sources.files._common import show_name, stable_id
from auditor.sources.files.base import Source, SourceItem, file_sha256

__all__ = ["MemoryfieldSource"]

_MIB = 1 << 20
_BOM = b"\xef\xbb\xbf"
_OPEN = re.compile(r"\A---[ \t]*\r?\n")
_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*\r?$", re.MULTILINE)
_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_LONG_QUOTED = re.compile(r"'[^']{5,}'|\"[^\"]{5,}\"")
_EPOCH = datetime(1980, 1, 1, tzinfo=UTC)
ZIP_READ_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    EOFError,
    OSError,
    NotImplementedError,
    RuntimeError,
    ValueError,
)

try:
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML without libyaml
    _Loader = yaml.SafeLoader


class _PageError(Exception):
    """One page cannot be imported; the message names the problem, never the page's text."""


@dataclass(frozen=True)
class _FolderEntry:
    """One file or symlink found in a Memoryfield folder."""

    rel: str
    path: Path  # what to read: the file, or a symlink's target
    size: int
    mtime: float
    link: str | None  # a symlink's link text; None for files
    is_page: bool  # a regular ``.md`` file, or a symlink to one inside the folder
    problem: str | None  # why it is refused, if it is


def unsafe_name(name: str) -> str | None:
    """Why a zip entry name is unsafe to use as a relative path, or None."""
    if "\x00" in name:
        return "NUL byte in the entry name; refused"
    if not name:
        return "empty entry name; refused"
    if "\\" in name:
        return "backslash in the entry name (path trick); refused"
    if name.startswith("/") or _DRIVE.match(name):
        return "absolute path; refused"
    if ".." in name.split("/"):
        return "'..' in the entry name (path traversal); refused"
    if _CONTROL.search(name):
        return "control character in the entry name; refused"
    return None


def _is_page(name: str) -> bool:
    return name.lower().endswith(".md")


def _utc_text(moment: datetime) -> str:
    if moment.tzinfo is None or moment.utcoffset() is None:
        return moment.replace(tzinfo=UTC).isoformat()
    return moment.astimezone(UTC).isoformat()


def _zip_time(info: zipfile.ZipInfo) -> datetime:
    """The entry's stored date (zip dates have no zone: taken as UTC); 1980-01-01 if invalid."""
    try:
        return datetime(*info.date_time, tzinfo=UTC)
    except (TypeError, ValueError):
        return _EPOCH


def declared_entry_count(path: Path) -> int | None:
    """The entry count the zip's end-of-central-directory record declares, without parsing it.

    Lets an archive with too many entries be refused before its central directory is loaded.
    Returns None when the record cannot be found or read (``zipfile`` then decides).
    """
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            start = max(0, size - (22 + 65535))
            fh.seek(start)
            tail = fh.read()
            pos = tail.rfind(b"PK\x05\x06")
            if pos < 0 or len(tail) - pos < 22:
                return None
            fields = struct.unpack("<4H2LH", tail[pos + 4 : pos + 22])
            count: int = fields[3]
            if pos + 22 + fields[6] > len(tail):
                return None  # the comment does not fit: not a real end record
            if count != 0xFFFF or pos < 20:
                return count
            locator = tail[pos - 20 : pos]
            if locator[:4] != b"PK\x06\x07":
                return None
            offset = struct.unpack("<Q", locator[8:16])[0]
            fh.seek(offset)
            record = fh.read(56)
            if len(record) < 56 or record[:4] != b"PK\x06\x06":
                return None
            big: int = struct.unpack("<Q", record[32:40])[0]
            return big
    except (OSError, struct.error, ValueError):
        return None


def open_archive(path: Path, limit: int) -> zipfile.ZipFile:
    """Open a Memoryfield archive of at most ``limit`` entries (importer and connector alike).

    The declared entry count is checked before the central directory is loaded, and the
    real one after. The caller closes the archive.

    Raises:
        InputError: not a zip archive, a corrupt one, or more than ``limit`` entries.
    """
    declared = declared_entry_count(path)
    if declared is not None and declared > limit:
        raise InputError(
            f"{path}: the archive has {declared:,} entries, over the limit of {limit:,}"
        )
    try:
        archive = zipfile.ZipFile(path)
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        OSError,
        EOFError,
        ValueError,
        struct.error,
    ) as exc:
        raise InputError(
            f"{path}: not a zip archive or a corrupt one ({type(exc).__name__})"
        ) from None
    count = len(archive.infolist())
    if count > limit:
        archive.close()
        raise InputError(f"{path}: the archive has {count:,} entries, over the limit of {limit:,}")
    return archive


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML error as ``bad YAML front matter at line N: problem``, without page text.

    Long quoted fragments (which may be the page's text) are cut out of the problem.
    """
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or getattr(exc, "reason", None) or "cannot parse"
    problem = _LONG_QUOTED.sub("'…'", str(problem))
    if mark is not None:
        # +2: the mark is 0-based and counts from the line after the opening '---'.
        return f"bad YAML front matter at line {mark.line + 2}: {problem}"
    return f"bad YAML front matter: {problem}"


def _split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """Split a page into its front matter (a mapping) and its Markdown body.

    A page that does not start with a ``---`` line, or whose front matter is never closed by a
    ``---`` (or ``...``) line, has no front matter: the whole text is the body.

    Raises:
        _PageError: the front matter is not valid YAML or not a mapping.
    """
    opening = _OPEN.match(text)
    if not opening:
        return {}, text
    closing = _CLOSE.search(text, opening.end())
    if not closing:
        return {}, text
    front = text[opening.end() : closing.start()]
    refused = safe_yaml.check_events(front, loader=_Loader, first_line=2)  # no alias bombs
    if refused is not None:
        raise _PageError(f"bad YAML front matter at {refused}")
    try:
        meta = yaml.load(front, Loader=_Loader)  # noqa: S506
    except yaml.YAMLError as exc:
        raise _PageError(_yaml_problem(exc)) from None
    except RecursionError:
        raise _PageError("bad YAML front matter: nested too deeply") from None
    except (ValueError, OverflowError) as exc:  # e.g. an impossible date such as 2026-13-45
        raise _PageError(
            f"bad YAML front matter: a value cannot be read ({type(exc).__name__})"
        ) from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise _PageError(f"front matter is not a mapping (got {type(meta).__name__})")
    end = closing.end()
    body = text[end + 1 :] if text[end : end + 1] == "\n" else text[end:]
    return meta, body


def _meta_text(meta: dict[str, Any], field: str) -> str | None:
    """A scalar front-matter field as text (numbers and dates too), or None when missing."""
    value = meta.get(field)
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float | date):
        return value.isoformat() if isinstance(value, date) else str(value)
    raise _PageError(f"front matter '{field}' must be text, got {type(value).__name__}")


def _meta_time(meta: dict[str, Any], field: str) -> str | None:
    """A front-matter date (YAML date or datetime, or an ISO 8601 string) as UTC ISO text."""
    value = meta.get(field)
    if value is None:
        return None
    if isinstance(value, datetime):
        return _utc_text(value)
    if isinstance(value, date):
        return _utc_text(datetime(value.year, value.month, value.day))
    if isinstance(value, str):
        try:
            return _utc_text(datetime.fromisoformat(value.strip()))
        except ValueError:
            raise _PageError(f"front matter '{field}' is not an ISO 8601 date") from None
    raise _PageError(f"front matter '{field}' must be a date, got {type(value).__name__}")


def _meta_uuid(meta: dict[str, Any]) -> str | None:
    """The front matter's uuid in canonical form, or None when missing or not a valid UUID."""
    value = meta.get("uuid")
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    try:
        return str(uuid.UUID(str(value).strip()))
    except ValueError:
        return None


class MemoryfieldSource(Source):
    """Reads a Memoryfield (.zip or folder): one memory per Markdown page.

    Attributes:
        skipped_entries: entries that are not pages (``*.sqlite``, images, ...) and symlinked
            folders inside the folder, skipped without an error (set by :meth:`items`).
        sha256: the archive's sha256; for a folder, sha256 over its files' sorted relative paths
            and contents (set by :meth:`items` before the first item).
    """

    format = "memoryfield"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.skipped_entries = 0

    @property
    def total(self) -> int | None:
        """The archive's size, or the sum of a folder's page sizes."""
        if not self.path.is_dir():
            return super().total
        try:
            return sum(entry.size for entry in self._scan_folder() if entry.is_page)
        except (InputError, OSError):
            return None

    def _is_page_name(self, name: str) -> bool:
        """Whether an entry (by its relative name) is a page; subclasses may widen it."""
        return _is_page(name)

    def content_sha256(self) -> str:
        """The Memoryfield's sha256 now, as :attr:`sha256` defines it (without reading pages).

        Raises:
            InputError: the folder or archive cannot be read (or a folder has too many entries).
        """
        try:
            if self.path.is_dir():
                return self._folder_sha256(self._scan_folder())
            return file_sha256(self.path)
        except OSError as exc:
            raise InputError(f"{self.path}: cannot read: {exc.strerror}") from None

    def _default_namespace(self) -> str:
        name = self.path.resolve().name if self.path.is_dir() else self.path.stem
        return self.namespace or f"memoryfield:{name}"

    def items(self) -> Iterator[SourceItem]:
        """Yield one item per page, in archive (or sorted path) order.

        Raises:
            InputError: not a zip archive or a folder, a corrupt zip, or too many entries.
        """
        self.skipped_entries = 0
        if self.path.is_dir():
            yield from self._folder_items()
        else:
            yield from self._zip_items()

    # -- zip -------------------------------------------------------------------------------

    def _zip_items(self) -> Iterator[SourceItem]:
        with open_archive(self.path, self.settings.memoryfield_max_entries) as archive:
            infos = archive.infolist()
            try:
                self.sha256 = file_sha256(self.path)
            except OSError as exc:
                raise InputError(f"{self.path}: cannot read: {exc.strerror}") from None
            yield from self._zip_pages(archive, infos)

    def _zip_pages(
        self, archive: zipfile.ZipFile, infos: list[zipfile.ZipInfo]
    ) -> Iterator[SourceItem]:
        settings = self.settings
        max_page = settings.memoryfield_max_page_bytes
        max_total = settings.memoryfield_max_total_bytes
        max_ratio = settings.memoryfield_max_ratio
        namespace = self._default_namespace()
        names: set[str] = set()
        ids: dict[str, str] = {}
        total = 0
        for info in infos:
            where = f"entry {show_name(info.orig_filename, 200)}"
            consumed = info.compress_size
            problem = unsafe_name(info.orig_filename)
            if problem:
                yield SourceItem(where, error=problem, consumed=consumed)
                continue
            if info.is_dir():
                continue
            if stat.S_ISLNK(info.external_attr >> 16):
                yield SourceItem(where, error="symlink entry; refused", consumed=consumed)
                continue
            name = info.filename
            if not self._is_page_name(name):
                self.skipped_entries += 1
                continue
            if name in names:
                yield SourceItem(
                    where, error="duplicate entry name in the archive", consumed=consumed
                )
                continue
            names.add(name)
            if info.flag_bits & 0x1:
                yield SourceItem(
                    where,
                    error="encrypted entry; not supported",
                    consumed=consumed,
                    external_id=name,
                )
                continue
            packed = max(info.compress_size, 1)
            if info.file_size > _MIB and info.file_size / packed > max_ratio:
                yield SourceItem(
                    where,
                    error=self._bomb(info.file_size, packed),
                    consumed=consumed,
                    external_id=name,
                )
                continue
            if info.file_size > max_page:
                yield SourceItem(
                    where, error=self._too_big(max_page), consumed=consumed, external_id=name
                )
                continue
            try:
                with archive.open(info) as fh:
                    data = fh.read(max_page + 1)  # bounded: the header's size is not trusted
            except ZIP_READ_ERRORS as exc:
                yield SourceItem(
                    where,
                    error=f"corrupt entry ({type(exc).__name__})",
                    consumed=consumed,
                    external_id=name,
                )
                continue
            total += len(data)
            if total > max_total:
                yield SourceItem(
                    where,
                    error=f"the archive is over the limit of {max_total:,} uncompressed bytes; "
                    "stopped here, later entries are not imported",
                    consumed=consumed,
                    external_id=name,
                )
                return
            if len(data) > _MIB and len(data) / packed > max_ratio:
                yield SourceItem(
                    where, error=self._bomb(len(data), packed), consumed=consumed, external_id=name
                )
                continue
            if len(data) > max_page:
                yield SourceItem(
                    where, error=self._too_big(max_page), consumed=consumed, external_id=name
                )
                continue
            yield self._page_item(
                where, name, data, _zip_time(info), namespace, ids, consumed=consumed
            )

    def _bomb(self, size: int, packed: int) -> str:
        return (
            f"looks like a zip bomb: compression ratio {size / packed:,.0f} is over the limit "
            f"of {self.settings.memoryfield_max_ratio:,.0f}; refused"
        )

    @staticmethod
    def _too_big(limit: int) -> str:
        return f"page is over the limit of {limit:,} bytes"

    # -- folder ----------------------------------------------------------------------------

    def _scan_folder(self) -> list[_FolderEntry]:
        """Every file and symlink below the folder, sorted by relative path.

        Raises:
            InputError: more than ``memoryfield_max_entries`` entries, or unreadable folder.
        """
        root = self.path.resolve()
        limit = self.settings.memoryfield_max_entries
        found: list[_FolderEntry] = []

        def fail(exc: OSError) -> None:
            raise InputError(f"{self.path}: cannot read folder: {exc.strerror}")

        for dirpath, dirnames, filenames in os.walk(root, onerror=fail, followlinks=False):
            here = Path(dirpath)
            linked_dirs = [d for d in dirnames if (here / d).is_symlink()]
            for name in [*filenames, *linked_dirs]:
                if len(found) >= limit:
                    raise InputError(
                        f"{self.path}: the folder has more than {limit:,} entries (the limit)"
                    )
                found.append(self._folder_entry(root, here / name))
        found.sort(key=lambda entry: entry.rel)
        return found

    def _folder_entry(self, root: Path, path: Path) -> _FolderEntry:
        rel = path.relative_to(root).as_posix()
        page_name = self._is_page_name(rel)
        if page_name:
            try:
                rel.encode("utf-8")
            except UnicodeEncodeError:
                return _FolderEntry(
                    rel, path, 0, 0.0, None, False, "file name is not valid UTF-8; refused"
                )
        try:
            info = path.lstat()
        except OSError as exc:
            return _FolderEntry(rel, path, 0, 0.0, None, False, f"cannot read: {exc.strerror}")
        if not stat.S_ISLNK(info.st_mode):
            regular = stat.S_ISREG(info.st_mode)
            problem: str | None = (
                None if regular or not page_name else "not a regular file; refused"
            )
            return _FolderEntry(
                rel, path, info.st_size, info.st_mtime, None, regular and page_name, problem
            )
        try:
            link = os.readlink(path)
        except OSError:
            link = ""
        target = Path(os.path.realpath(path))
        if not target.is_relative_to(root):
            problem = "symlink leaves the folder; refused"
            return _FolderEntry(rel, path, 0, info.st_mtime, link, False, problem)
        try:
            aim = target.stat()
        except OSError as exc:
            problem = f"cannot read: {exc.strerror}" if page_name else None
            return _FolderEntry(rel, path, 0, info.st_mtime, link, False, problem)
        regular = stat.S_ISREG(aim.st_mode)
        problem = None if regular or not page_name else "not a regular file; refused"
        return _FolderEntry(
            rel, target, aim.st_size, aim.st_mtime, link, regular and page_name, problem
        )

    @staticmethod
    def _folder_sha256(entries: list[_FolderEntry]) -> str:
        """sha256 over the sorted relative paths and bytes (symlinks: their link text).

        Each file adds ``F <path> NUL <size, 8 bytes LE> <bytes>``, each symlink
        ``L <path> NUL <link text> NUL``; unreadable and non-regular files add nothing.
        """
        digest = hashlib.sha256()
        for entry in entries:
            rel = entry.rel.encode("utf-8", errors="surrogateescape")
            if entry.link is not None:
                digest.update(b"L" + rel + b"\0" + os.fsencode(entry.link) + b"\0")
                continue
            if entry.problem is not None or not entry.path.is_file():
                continue
            digest.update(b"F" + rel + b"\0" + struct.pack("<Q", entry.size))
            with entry.path.open("rb") as fh:
                while block := fh.read(_MIB):
                    digest.update(block)
        return digest.hexdigest()

    def _folder_items(self) -> Iterator[SourceItem]:
        entries = self._scan_folder()
        try:
            self.sha256 = self._folder_sha256(entries)
        except OSError as exc:
            raise InputError(f"{self.path}: cannot read: {exc.strerror}") from None
        max_page = self.settings.memoryfield_max_page_bytes
        max_total = self.settings.memoryfield_max_total_bytes
        namespace = self._default_namespace()
        ids: dict[str, str] = {}
        total = 0
        for entry in entries:
            where = f"entry {show_name(entry.rel, 200)}"
            if entry.problem is not None:
                yield SourceItem(where, error=entry.problem, consumed=entry.size)
                continue
            if not entry.is_page:
                self.skipped_entries += 1
                continue
            if entry.size > max_page:
                yield SourceItem(
                    where, error=self._too_big(max_page), consumed=entry.size, external_id=entry.rel
                )
                continue
            try:
                with entry.path.open("rb") as fh:
                    data = fh.read(max_page + 1)
            except OSError as exc:
                yield SourceItem(
                    where,
                    error=f"cannot read: {exc.strerror}",
                    consumed=entry.size,
                    external_id=entry.rel,
                )
                continue
            total += len(data)
            if total > max_total:
                yield SourceItem(
                    where,
                    error=f"the folder is over the limit of {max_total:,} bytes of pages; "
                    "stopped here, later pages are not imported",
                    consumed=entry.size,
                    external_id=entry.rel,
                )
                return
            if len(data) > max_page:
                yield SourceItem(
                    where, error=self._too_big(max_page), consumed=entry.size, external_id=entry.rel
                )
                continue
            stamp = datetime.fromtimestamp(int(entry.mtime), tz=UTC)
            yield self._page_item(where, entry.rel, data, stamp, namespace, ids, entry.size)

    # -- pages -----------------------------------------------------------------------------

    def _page_item(
        self,
        where: str,
        rel: str,
        data: bytes,
        fallback: datetime,
        namespace: str,
        ids: dict[str, str],
        consumed: int,
    ) -> SourceItem:
        """Turn one page's bytes into a record (or an error item).

        Args:
            where: the location, e.g. ``"entry notes/a.md"``.
            rel: the page's relative path (its external id).
            data: the page's bytes.
            fallback: the time for a page without created/modified dates.
            namespace: the namespace to record.
            ids: memory ids given so far -> location (to refuse duplicate front-matter uuids).
            consumed: progress units of this entry.
        """
        try:
            raw = self._page_record(rel, data, fallback, namespace)
        except _PageError as exc:
            return SourceItem(where, error=str(exc), consumed=consumed, external_id=rel)
        first = ids.setdefault(raw["memory_id"], where)
        if first != where:
            return SourceItem(
                where,
                error=f"front matter uuid is already used by {first}",
                consumed=consumed,
                external_id=rel,
            )
        return SourceItem(where, raw=raw, consumed=consumed, external_id=rel)

    def _page_record(
        self, rel: str, data: bytes, fallback: datetime, namespace: str
    ) -> dict[str, Any]:
        """Build the raw record of one page.

        Raises:
            _PageError: invalid UTF-8, bad front matter, or no subject.
        """
        skip = len(_BOM) if data.startswith(_BOM) else 0
        try:
            text = data[skip:].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _PageError(f"invalid UTF-8 at byte {skip + exc.start + 1}") from None
        meta, body = _split_front_matter(text)
        subject = _meta_text(meta, "subject") or self.subject
        if not subject:
            raise _PageError("no subject: pass --subject or set subject in the front matter")
        page_uuid = _meta_uuid(meta)
        memory_id = f"mf_{page_uuid}" if page_uuid else stable_id("mf_", namespace, rel)
        created = _meta_time(meta, "created")
        modified = _meta_time(meta, "modified")
        created_at = created or modified or fallback.isoformat()
        return {
            "memory_id": memory_id,
            "subject": subject,
            "namespace": namespace,
            "kind": _meta_text(meta, "kind") or "note",
            "category": _meta_text(meta, "category") or "note",
            "fact": body,
            "created_at": created_at,
            "updated_at": modified or created_at,
            "expires_at": _meta_time(meta, "expires"),
            "source": {"type": "import", "uri": f"memoryfield://{self.sha256}/{rel}"},
            "title": _meta_text(meta, "title"),
            "summary": _meta_text(meta, "summary"),
            "page_bytes": len(data),
        }
