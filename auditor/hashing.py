"""Stable hashes: content hashes of facts, record hashes, subject digests."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import unicodedata
from typing import Any

__all__ = ["canonical_json", "content_hash", "normalise_fact", "record_hash", "subject_digest"]

_SPACE = re.compile(r"\s+")


def normalise_fact(fact: str) -> str:
    """NFKC-normalise a fact and fold runs of white space into one space."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", fact)).strip()


def content_hash(fact: str) -> str:
    """sha256 (hex) of the normalised fact: change detection and finding fingerprints."""
    return hashlib.sha256(normalise_fact(fact).encode("utf-8")).hexdigest()


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no white space, for hashing."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def record_hash(fields: dict[str, Any]) -> str:
    """sha256 (hex) of a record's canonical JSON: any change of any field changes it."""
    return hashlib.sha256(canonical_json(fields).encode("utf-8")).hexdigest()


def subject_digest(subject: str, key: bytes | None = None) -> str:
    """A digest of a subject id that can stand in logs and audit events instead of it.

    With a key (the audit HMAC key) the digest cannot be reversed by guessing ids.
    """
    data = subject.encode("utf-8")
    if key:
        return hmac.new(key, data, hashlib.sha256).hexdigest()
    return hashlib.sha256(b"memaudit-subject:" + data).hexdigest()
