"""Field encryption: personal text sealed with AES-GCM under the subject's data key.

Encrypted columns (``EncryptedText``): ``memories.fact``, ``memories.source_uri`` and
``consents.source``. Everything else stays clear: ids, subject ids (needed to find and
erase a subject's rows; they are pseudonymous keys, not content), timestamps, statuses,
digests, finding evidence (redacted by the detectors, never raw values) and audit events
(which never hold personal data).

Ciphertext format (text, so it fits the existing ``TEXT`` columns on both databases)::

    enc1:<key id>:<row tag, 16 hex>:<base64url(nonce 12 bytes | ciphertext + GCM tag)>

where the key id is the subject's key id (32 hex) followed by the data key's fingerprint
(8 hex).

The associated data is ``enc1|<column>|<key id>|<row tag>``: a ciphertext opens only in the
column it was written for, under the key it names; the row tag (a SHA-256 prefix of the
memory id, or of subject + category for a consent) is checked on every ORM load against
the row's own id, so a ciphertext copied into another row is refused
(:class:`RowMismatchError`), not shown as that row's text. Core reads of single columns
(``select(Memory.fact)``) cannot see the row and are not checked.

Reading is transparent: the type decorates the column and decrypts in
``process_result_value`` with the key the header names (data keys are cached per process).
A value whose key was destroyed (crypto-shredded) reads as :data:`SHREDDED`. Writing needs
the subject, which a column value does not carry: session events
(:mod:`auditor.store.crypto_events`) wrap plain values in :class:`SealRequest` before a
flush or an ORM bulk insert, and the type seals those. A plain ``str`` bound to the column
(e.g. a ``WHERE`` comparison) passes through unchanged.

The cipher of a database is attached to its engine's dialect by
:class:`auditor.store.db.Database` (``dialect.memaudit_cipher``); no cipher means
encryption is off, and an encrypted value then raises :class:`EncryptionUnavailableError`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import secrets
import threading
from collections import OrderedDict
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from sqlalchemy import Select, Table, Text, select, type_coerce
from sqlalchemy.engine import Dialect
from sqlalchemy.types import TypeDecorator

from auditor.store.subject_keys import KeyStoreError, SubjectKeyStore

__all__ = [
    "PREFIX",
    "SHREDDED",
    "EncryptedText",
    "EncryptionUnavailableError",
    "FieldCipher",
    "opened_tag",
    "raw_select",
    "RowMismatchError",
    "SealRequest",
    "cipher_of",
    "is_sealed",
    "key_fingerprint",
    "row_tag",
]

PREFIX = "enc1:"
#: What a value reads as once its subject's key is destroyed.
SHREDDED = "[unreadable: the subject's key was destroyed]"
_NONCE = 12


class EncryptionUnavailableError(KeyStoreError):
    """An encrypted value was read without a master key / key folder configured."""


class RowMismatchError(KeyStoreError):
    """A ciphertext bound to one row was found in another (swapped or copied)."""


def row_tag(binding: str) -> str:
    """The row tag written in a ciphertext: SHA-256 prefix of the row's binding id."""
    return hashlib.sha256(binding.encode("utf-8")).hexdigest()[:16]


def is_sealed(value: object) -> bool:
    """Whether a stored value is a ciphertext of this module."""
    return isinstance(value, str) and value.startswith(PREFIX)


class SealRequest(str):
    """A plain value plus what sealing it needs: the subject and the row binding."""

    subject: str
    binding: str

    def __new__(cls, value: str, subject: str, binding: str) -> SealRequest:
        obj = super().__new__(cls, value)
        obj.subject = subject
        obj.binding = binding
        return obj


class _Opened(threading.local):
    """Row tags of values this thread decrypted, for the check on ORM load.

    Decrypted values must be exact ``str`` (C extensions such as RE2 refuse subclasses),
    so the tag is kept beside them: keyed by ``id`` and holding the value itself (so the
    id cannot be reused while the entry lives), at most :data:`_OPENED_MAX` entries (Core
    reads that no ORM load consumes age out first).
    """

    def __init__(self) -> None:
        self.tags: OrderedDict[int, tuple[str, str]] = OrderedDict()


_OPENED_MAX = 4096
_opened = _Opened()


def _remember(value: str, tag: str) -> str:
    tags = _opened.tags
    if len(tags) >= _OPENED_MAX:
        tags.popitem(last=False)  # O(1); a plain dict's first key gets slower to find
    tags[id(value)] = (value, tag)
    return value


def opened_tag(value: object) -> str | None:
    """The row tag of a value this thread just decrypted (and forget it); None if unknown."""
    entry = _opened.tags.pop(id(value), None)
    if entry is None or entry[0] is not value:
        return None
    return entry[1]


def key_fingerprint(key: bytes) -> str:
    """8 hex characters naming one data key: a key made after an erasure differs."""
    return hashlib.sha256(b"memaudit-key-fingerprint:" + key).hexdigest()[:8]


class FieldCipher:
    """Seals and opens column values with the data keys of a :class:`SubjectKeyStore`.

    The key id in a ciphertext is the subject's key id (32 hex) plus the fingerprint of the
    data key (8 hex): text sealed under a destroyed key never opens with a newer key of the
    same subject; it reads as :data:`SHREDDED`.
    """

    def __init__(self, keystore: SubjectKeyStore) -> None:
        self.keystore = keystore
        self._aead: dict[str, AESGCM | None] = {}
        self._current: dict[str, tuple[str, AESGCM]] = {}
        self._lock = threading.Lock()

    def forget(self, subject: str) -> None:
        """Drop a subject's key from this process's caches (after a destroy)."""
        kid = self.keystore.key_id(subject)
        with self._lock:
            self._current.pop(subject, None)
            for full in [k for k in self._aead if k.startswith(kid)]:
                del self._aead[full]

    def _for_subject(self, subject: str) -> tuple[str, AESGCM]:
        with self._lock:
            found = self._current.get(subject)
        # sealing re-checks the key is still there: an erasure in another process may have
        # destroyed it, and new text must then get a new key, not the dead one
        if found is not None and self.keystore.exists(subject):
            return found
        key = self.keystore.data_key(subject, create=True)
        assert key is not None  # create=True always yields a key
        full = self.keystore.key_id(subject) + key_fingerprint(key)
        entry = (full, AESGCM(key))
        with self._lock:
            self._current[subject] = entry
            self._aead[full] = entry[1]
        return entry

    def _for_id(self, full: str) -> AESGCM | None:
        with self._lock:
            if full in self._aead:
                return self._aead[full]
        key = self.keystore.data_key_by_id(full[:32])
        aead = None if key is None or key_fingerprint(key) != full[32:] else AESGCM(key)
        if aead is not None:
            with self._lock:
                self._aead[full] = aead
        return aead

    def seal(self, plaintext: str, *, subject: str, binding: str, column: str) -> str:
        """Encrypt one value for one row and column under the subject's key."""
        full, aead = self._for_subject(subject)
        tag = row_tag(binding)
        nonce = secrets.token_bytes(_NONCE)
        aad = f"enc1|{column}|{full}|{tag}".encode()
        body = base64.urlsafe_b64encode(nonce + aead.encrypt(nonce, plaintext.encode(), aad))
        return f"{PREFIX}{full}:{tag}:{body.decode('ascii')}"

    def open(self, token: str, *, column: str) -> str:
        """Decrypt one stored value (:data:`SHREDDED` when its key is gone)."""
        try:
            _, full, tag, body = token.split(":", 3)
            raw = base64.urlsafe_b64decode(body)
        except (ValueError, binascii.Error):
            raise KeyStoreError(f"malformed ciphertext in {column}") from None
        if len(full) != 40:
            raise KeyStoreError(f"malformed key id in a ciphertext in {column}")
        aead = self._for_id(full)
        if aead is None:
            return SHREDDED
        aad = f"enc1|{column}|{full}|{tag}".encode()
        try:
            plain = aead.decrypt(raw[:_NONCE], raw[_NONCE:], aad)
        except InvalidTag:
            raise KeyStoreError(
                f"ciphertext in {column} does not open (altered, or moved from another column)"
            ) from None
        return _remember(plain.decode("utf-8"), tag)


def raw_select(table: Table) -> Select[Any]:
    """``SELECT`` every column of a table with encrypted columns read raw (not decrypted).

    For copies of the store (backups, restores): ciphertext moves as it is, so a backup
    never holds clear text and needs no key to write or to read back.
    """
    cols = [
        type_coerce(c, Text).label(c.name) if isinstance(c.type, EncryptedText) else c
        for c in table.columns
    ]
    return select(*cols)


def cipher_of(dialect: Dialect) -> FieldCipher | None:
    """The cipher a :class:`~auditor.store.db.Database` attached to its dialect."""
    cipher = getattr(dialect, "memaudit_cipher", None)
    return cipher if isinstance(cipher, FieldCipher) else None


class EncryptedText(TypeDecorator[str]):
    """A ``TEXT`` column whose values are sealed per subject (see the module docstring).

    Args:
        column: ``table.column``, bound into every ciphertext's associated data.
    """

    impl = Text
    cache_ok = True

    def __init__(self, column: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.column = column

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        if value is None:
            return None
        if isinstance(value, SealRequest):
            cipher = cipher_of(dialect)
            if cipher is None:
                return str(value)
            return cipher.seal(
                str(value), subject=value.subject, binding=value.binding, column=self.column
            )
        return str(value) if isinstance(value, str) else value

    def process_result_value(self, value: str | None, dialect: Dialect) -> str | None:
        if value is None or not value.startswith(PREFIX):
            return value
        cipher = cipher_of(dialect)
        if cipher is None:
            raise EncryptionUnavailableError(
                f"{self.column} holds encrypted text but no master key is configured: set "
                "MEMAUDIT_MASTER_KEY (or the secret file / the key beside the SQLite store) "
                "and MEMAUDIT_KEY_DIR; see docs/erasure.md"
            )
        return cipher.open(value, column=self.column)
