"""Data keys per subject, kept outside the database: the key store of crypto-shredding.

Personal text in memaudit's store (see :mod:`auditor.store.crypto`) is sealed with AES-GCM
under a *data key* that belongs to one subject. Destroying that key makes every copy of
the subject's text unreadable at once: the live rows, SQLite free pages and WAL frames,
PostgreSQL heap pages, WAL segments, replicas and backups. That only works if the key
itself never enters the database (its WAL and backups would keep it), so keys live in a
:class:`SubjectKeyStore`:

* :class:`LocalKeyStore` (the default): one small file per subject in a folder (0700,
  files 0600), each holding the data key *wrapped* (AES-GCM) by the master key. Deleting
  overwrites the file's bytes with random data, fsyncs, unlinks and fsyncs the folder.
  File names are keyed digests of the subject id (a listing names nobody).
* a KMS or Vault transit engine can implement the same protocol (wrap/unwrap remotely,
  destroy = delete the key version); :func:`keystore_for` is the single place that picks.

Where things live (environment only: these are secrets or their locations):

* ``MEMAUDIT_ENCRYPTION=off`` disables encryption (default: on wherever a master key is).
* master key (32 bytes, 64 hex characters): ``MEMAUDIT_MASTER_KEY``, else the secret file
  ``MEMAUDIT_SECRETS_DIR/memaudit_master_key``, else, for a SQLite store, the file
  ``<database>.master-key`` that ``memaudit init`` creates beside it (0600, ``O_EXCL``);
* key folder: ``MEMAUDIT_KEY_DIR``, else for SQLite ``<database>.keys/`` beside it. A
  PostgreSQL store needs ``MEMAUDIT_KEY_DIR`` (a folder every replica of memaudit shares);
  without it, encryption is off and ``init`` says so.

Contract used by erasure (:mod:`auditor.erasure.requests`): ``keystore_for(settings)`` (None:
encryption off), ``destroy(subject)`` first, ``exists(subject)`` in verification.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from auditor.config import sqlite_path
from auditor.errors import ConfigError

if TYPE_CHECKING:
    from auditor.config import Settings

__all__ = [
    "ENCRYPTION_ENV",
    "KEY_DIR_ENV",
    "MASTER_KEY_ENV",
    "MASTER_KEY_FILE_NAME",
    "KeyStoreError",
    "LocalKeyStore",
    "SubjectKeyStore",
    "encryption_disabled",
    "key_dir_for",
    "keystore_for",
    "keystore_for_url",
    "master_key_for",
    "master_key_location",
    "parse_master_key",
]

ENCRYPTION_ENV = "MEMAUDIT_ENCRYPTION"
MASTER_KEY_ENV = "MEMAUDIT_MASTER_KEY"
KEY_DIR_ENV = "MEMAUDIT_KEY_DIR"
#: The master key's file in ``MEMAUDIT_SECRETS_DIR``.
MASTER_KEY_FILE_NAME = "memaudit_master_key"
#: Beside a SQLite store: ``<database>`` + these suffixes.
MASTER_KEY_SUFFIX = ".master-key"
KEY_DIR_SUFFIX = ".keys"

_WRAP_VERSION = b"\x01"
_NONCE = 12
_NAMING_FILE = "_naming.key"


class KeyStoreError(Exception):
    """A key file is unreadable, damaged or wrapped with another master key."""


@runtime_checkable
class SubjectKeyStore(Protocol):
    """Where data keys per subject live. Implementations must keep keys out of the database."""

    def data_key(self, subject_id: str, *, create: bool) -> bytes | None:
        """The subject's 32-byte data key; with ``create`` made if missing, else None."""

    def destroy(self, subject_id: str) -> bool:
        """Destroy the subject's key for good. True if a key existed and is now gone."""

    def exists(self, subject_id: str) -> bool:
        """Whether the subject has a key (checked at the store, never from a cache)."""

    def describe(self) -> str:
        """Where keys live, for receipts and ``keys status`` (no key material)."""

    def key_id(self, subject_id: str) -> str:
        """The subject's key id (a keyed digest: names nobody); written in ciphertexts."""

    def data_key_by_id(self, key_id: str) -> bytes | None:
        """The data key with this id (None: destroyed or never made). Used to decrypt."""


def encryption_disabled() -> bool:
    """Whether ``MEMAUDIT_ENCRYPTION`` turns encryption off (off/0/false/no)."""
    return os.environ.get(ENCRYPTION_ENV, "").strip().lower() in {"off", "0", "false", "no"}


def parse_master_key(text: str, where: str) -> bytes:
    """Decode a master key (64 hex characters).

    Raises:
        ConfigError: not 64 hex characters (``where`` names the variable or file).
    """
    value = text.strip()
    try:
        key = bytes.fromhex(value)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise ConfigError(f"master key in {where} must be 64 hex characters (32 bytes)")
    return key


def master_key_location(database_url: str) -> Path | None:
    """Where ``init`` writes a master key: the secrets folder, or beside a SQLite file."""
    secrets_dir = os.environ.get("MEMAUDIT_SECRETS_DIR")
    if secrets_dir:
        return Path(secrets_dir) / MASTER_KEY_FILE_NAME
    path = sqlite_path(database_url)
    return None if path is None else path.with_name(path.name + MASTER_KEY_SUFFIX)


def master_key_for(database_url: str) -> bytes | None:
    """The master key from the environment, the secrets folder or beside a SQLite store."""
    env = os.environ.get(MASTER_KEY_ENV)
    if env:
        return parse_master_key(env, MASTER_KEY_ENV)
    path = master_key_location(database_url)
    if path is not None and path.is_file():
        return parse_master_key(path.read_text(encoding="ascii", errors="replace"), str(path))
    return None


def key_dir_for(database_url: str) -> Path | None:
    """The key folder: ``MEMAUDIT_KEY_DIR``, else ``<database>.keys`` beside SQLite."""
    env = os.environ.get(KEY_DIR_ENV)
    if env:
        return Path(env).expanduser().resolve()
    path = sqlite_path(database_url)
    return None if path is None else path.with_name(path.name + KEY_DIR_SUFFIX)


def keystore_for(settings: Settings) -> SubjectKeyStore | None:
    """The store's key store, or None when encryption is off (or has no key / folder).

    Raises:
        ConfigError: a master key is given but malformed.
    """
    return keystore_for_url(settings.database_url)


def keystore_for_url(database_url: str) -> SubjectKeyStore | None:
    """:func:`keystore_for` for a database URL (what :class:`Database` uses)."""
    if encryption_disabled():
        return None
    master = master_key_for(database_url)
    folder = key_dir_for(database_url)
    if master is None or folder is None:
        return None
    return LocalKeyStore(folder, master)


def _derive(master: bytes, label: bytes) -> bytes:
    return hmac.new(master, b"memaudit-kdf:" + label, hashlib.sha256).digest()


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


class LocalKeyStore:
    """Data keys as wrapped files in a local folder (see the module docstring).

    Args:
        folder: the key folder (created 0700 if missing).
        master: the 32-byte master key; wraps every data key (key-encryption key).
    """

    def __init__(self, folder: Path, master: bytes) -> None:
        self.folder = folder
        self._kek = AESGCM(_derive(master, b"wrap"))
        self._cache: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self._naming: bytes | None = None
        self._kids: dict[str, str] = {}
        self._folder_str = str(folder)

    # -- files ------------------------------------------------------------------------

    def _ensure_folder(self) -> None:
        if not self.folder.is_dir():
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(self.folder, 0o700)

    def _wrap(self, name: str, key: bytes) -> bytes:
        nonce = secrets.token_bytes(_NONCE)
        return _WRAP_VERSION + nonce + self._kek.encrypt(nonce, key, name.encode())

    def _unwrap(self, name: str, blob: bytes) -> bytes:
        if len(blob) < 1 + _NONCE + 16 or blob[:1] != _WRAP_VERSION:
            raise KeyStoreError(f"key file {self.folder / name} is damaged")
        try:
            return self._kek.decrypt(blob[1 : 1 + _NONCE], blob[1 + _NONCE :], name.encode())
        except InvalidTag:
            raise KeyStoreError(
                f"key file {self.folder / name} does not open with this master key "
                "(wrong MEMAUDIT_MASTER_KEY, or a damaged file)"
            ) from None

    def _read(self, name: str) -> bytes | None:
        try:
            blob = (self.folder / name).read_bytes()
        except FileNotFoundError:
            return None
        return self._unwrap(name, blob)

    def _create(self, name: str) -> bytes:
        """Write a new wrapped key atomically (temp file + link: never overwrites)."""
        self._ensure_folder()
        key = secrets.token_bytes(32)
        tmp = self.folder / f".tmp-{secrets.token_hex(8)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, self._wrap(name, key))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, self.folder / name)
        except FileExistsError:
            existing = self._read(name)  # another process won the race: use its key
            if existing is None:
                raise KeyStoreError(
                    f"key file {self.folder / name} vanished while created"
                ) from None
            key = existing
        finally:
            tmp.unlink()
        _fsync_dir(self.folder)
        return key

    def _naming_key(self) -> bytes:
        if self._naming is None:
            found = self._read(_NAMING_FILE)
            self._naming = found if found is not None else self._create(_NAMING_FILE)
        return self._naming

    # -- the protocol ---------------------------------------------------------------------

    def key_id(self, subject_id: str) -> str:
        kid = self._kids.get(subject_id)
        if kid is None:
            digest = hmac.new(self._naming_key(), subject_id.encode("utf-8"), hashlib.sha256)
            kid = digest.hexdigest()[:32]
            if len(self._kids) >= 100_000:
                self._kids.clear()  # bounded: ids are cheap to recompute
            self._kids[subject_id] = kid
        return kid

    def data_key_by_id(self, key_id: str) -> bytes | None:
        with self._lock:
            cached = self._cache.get(key_id)
        if cached is not None:
            return cached
        if len(key_id) != 32 or not all(c in "0123456789abcdef" for c in key_id):
            raise KeyStoreError(f"malformed key id {key_id!r}")
        key = self._read(f"{key_id}.key")
        if key is not None:
            with self._lock:
                self._cache[key_id] = key
        return key

    def data_key(self, subject_id: str, *, create: bool) -> bytes | None:
        kid = self.key_id(subject_id)
        name = f"{kid}.key"
        if create:
            # A write checks the file, not the cache: a key destroyed by another process
            # (an erasure) must not keep sealing new text under it.
            key = self._read(name)
            if key is None:
                key = self._create(name)
            with self._lock:
                self._cache[kid] = key
            return key
        return self.data_key_by_id(kid)

    def exists(self, subject_id: str) -> bool:
        return os.path.isfile(os.path.join(self._folder_str, self.key_id(subject_id) + ".key"))

    def destroy(self, subject_id: str) -> bool:
        kid = self.key_id(subject_id)
        with self._lock:
            self._cache.pop(kid, None)
        return shred_file(self.folder / f"{kid}.key")

    def describe(self) -> str:
        return f"local key folder {self.folder} (data keys wrapped by the master key)"

    def key_files(self) -> list[Path]:
        """Every subject key file (not the naming key)."""
        if not self.folder.is_dir():
            return []
        return sorted(p for p in self.folder.glob("*.key") if p.name != _NAMING_FILE)

    def rewrap(self, new_master: bytes) -> int:
        """Re-wrap every key file under a new master key (rotation). Returns the count.

        Each file is replaced atomically; the old bytes are overwritten first. Run it with
        memaudit stopped, then swap the master key everywhere it is configured.
        """
        fresh = LocalKeyStore(self.folder, new_master)
        names = [_NAMING_FILE] + [p.name for p in self.key_files()]
        count = 0
        for name in names:
            key = self._read(name)
            if key is None:
                continue
            tmp = self.folder / f".tmp-{secrets.token_hex(8)}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(fd, fresh._wrap(name, key))
                os.fsync(fd)
            finally:
                os.close(fd)
            _overwrite(self.folder / name)
            os.replace(tmp, self.folder / name)
            count += 1
        _fsync_dir(self.folder)
        return count


def _overwrite(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        size = path.stat().st_size
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, secrets.token_bytes(max(size, 1)))
            os.fsync(fd)
        finally:
            os.close(fd)


def shred_file(path: Path) -> bool:
    """Overwrite a file's bytes with random data, fsync, unlink, fsync its folder.

    Returns:
        True if the file existed (and is now gone).
    """
    if not path.exists():
        return False
    _overwrite(path)
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    _fsync_dir(path.parent)
    return True
