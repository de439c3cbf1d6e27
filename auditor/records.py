"""The canonical memory record as it enters memaudit (import, lifecycle ``add``).

:class:`MemoryRecord` validates one record; :func:`parse_record` turns a raw mapping into a
record or a :class:`~auditor.errors.RecordError` that names the field and the problem but
never echoes the value (it may be personal data).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from auditor.config import Settings
from auditor.errors import RecordError
from auditor.hashing import content_hash, record_hash
from auditor.vocab import (
    MEMORY_KINDS,
    MEMORY_STATUSES,
    SOURCE_TYPES,
    SPECIAL_CATEGORIES,
    MemoryKind,
    MemoryStatus,
)

__all__ = [
    "KINDS",
    "SOURCE_TYPES",
    "STATUSES",
    "ConsentIn",
    "MemoryRecord",
    "SourceIn",
    "parse_record",
    "source_types",
]

KINDS = MEMORY_KINDS
STATUSES = MEMORY_STATUSES

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
#: every C0 and C1 control (tab and newline too), DEL and the bidi controls: for one-line
#: fields that are shown as they are (session ids, URIs)
_ANY_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_SUBJECT = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,31}:\S")


def _aware(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    if value.tzinfo is None or value.utcoffset() is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


class SourceIn(BaseModel):
    """Provenance of a memory: who or what said it, where."""

    model_config = ConfigDict(extra="allow", str_strip_whitespace=True)

    type: str | None = Field(None, max_length=32)
    session_id: str | None = Field(None, max_length=256)
    turn: int | None = Field(None, ge=0)
    uri: str | None = Field(None, max_length=4096)

    @field_validator("session_id", mode="before")
    @classmethod
    def _session_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) else value

    @field_validator("type")
    @classmethod
    def _known_type(cls, value: str | None, info: ValidationInfo) -> str | None:
        """A provenance type is a closed vocabulary: the built-in types, plus any type the
        trust policy names (passed as ``source_types`` in the validation context)."""
        if value is None:
            return None
        allowed = (info.context or {}).get("source_types") or SOURCE_TYPES
        if value not in allowed:
            raise ValueError(f"must be one of: {', '.join(sorted(allowed))}")
        return value

    @field_validator("session_id", "uri")
    @classmethod
    def _printable(cls, value: str | None) -> str | None:
        if value is not None and _ANY_CONTROL.search(value):
            raise ValueError("must not contain control characters or bidi controls")
        return value


class ConsentIn(BaseModel):
    """An explicit opt-in for one special category, carried by a record."""

    model_config = ConfigDict(extra="forbid")

    category: str = Field(min_length=1, max_length=64)
    granted_at: datetime
    source: str | None = Field(None, max_length=4096)
    revoked_at: datetime | None = None

    @field_validator("granted_at", "revoked_at")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return _aware(value)

    @field_validator("category")
    @classmethod
    def _special_category(cls, value: str) -> str:
        if value not in SPECIAL_CATEGORIES:
            raise ValueError(
                f"must be a special category memaudit knows: {', '.join(SPECIAL_CATEGORIES)}"
            )
        return value


class MemoryRecord(BaseModel):
    """One canonical memory record (DESIGN.md); unknown fields are kept in ``extra``."""

    model_config = ConfigDict(extra="allow", str_strip_whitespace=False)

    memory_id: str = Field(min_length=1, max_length=128)
    subject: str = Field(min_length=3, max_length=256)
    namespace: str = Field("default", min_length=1, max_length=256)
    kind: MemoryKind = "semantic"
    category: str = Field("note", min_length=1, max_length=64)
    fact: str
    confidence: float | None = Field(None, ge=0.0, le=1.0)
    source: SourceIn | None = None
    status: MemoryStatus | None = None
    supersedes: str | None = Field(None, min_length=1, max_length=128)
    created_at: datetime | None = None
    updated_at: datetime | None = None
    expires_at: datetime | None = None
    deleted_at: datetime | None = None
    access_count: int = Field(0, ge=0)
    last_accessed_at: datetime | None = None
    embedding_ref: str | None = Field(None, max_length=4096)
    consents: list[ConsentIn] = Field(default_factory=list)

    @field_validator("memory_id", "subject", "namespace", "category", "supersedes")
    @classmethod
    def _no_control_chars(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if _CONTROL.search(value) or value != value.strip():
            raise ValueError("must not contain control characters or surrounding white space")
        return value

    @field_validator("subject")
    @classmethod
    def _subject_form(cls, value: str) -> str:
        if not _SUBJECT.match(value):
            raise ValueError("must look like 'user:<id>' (a kind, a colon, an id)")
        return value

    @field_validator("fact")
    @classmethod
    def _fact_ok(cls, value: str, info: ValidationInfo) -> str:
        if "\x00" in value:
            raise ValueError("contains a NUL byte")
        if not value.strip():
            raise ValueError("is empty")
        limit = (info.context or {}).get("max_fact_bytes")
        if limit is not None:
            size = len(value.encode("utf-8", errors="surrogatepass"))
            if size > limit:
                raise ValueError(f"is {size:,} bytes, over the limit of {limit:,}")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("is not valid Unicode (lone surrogate)") from None
        return value

    @field_validator("created_at", "updated_at", "expires_at", "deleted_at", "last_accessed_at")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return _aware(value)

    @property
    def extra_fields(self) -> dict[str, Any]:
        """Unknown top-level fields, kept verbatim."""
        return dict(self.__pydantic_extra__ or {})

    def to_row(self, settings: Settings, now: datetime) -> dict[str, Any]:
        """Column values for :class:`~auditor.store.models.Memory` (without ``version``).

        Args:
            settings: gives the trust policy.
            now: the time to use for missing ``created_at`` / ``updated_at``.
        """
        src = self.source
        extra = self.extra_fields
        for ignored in ("trust_tier", "content_hash", "version"):
            if ignored in extra:
                extra[f"claimed_{ignored}"] = extra.pop(ignored)
        if src is not None and src.model_extra:
            extra["source_extra"] = dict(src.model_extra)
        created = self.created_at or now
        hashed = self.model_dump(mode="json", exclude={"consents"})
        return {
            "memory_id": self.memory_id,
            "subject": self.subject,
            "namespace": self.namespace,
            "kind": self.kind,
            "category": self.category,
            "fact": self.fact,
            "confidence": self.confidence,
            "source_type": src.type if src else None,
            "source_session_id": src.session_id if src else None,
            "source_turn": src.turn if src else None,
            "source_uri": src.uri if src else None,
            "trust_tier": settings.tier_for(src.type if src else None),
            "status": self.status or "active",
            "status_source": "source" if self.status else "chain",
            "supersedes": self.supersedes,
            "created_at": created,
            "updated_at": self.updated_at or created,
            "expires_at": self.expires_at,
            "deleted_at": self.deleted_at,
            "access_count": self.access_count,
            "last_accessed_at": self.last_accessed_at,
            "embedding_ref": self.embedding_ref,
            "content_hash": content_hash(self.fact),
            "record_hash": record_hash(hashed),
            "extra": extra,
        }


def _describe(err: Any) -> str:
    loc = ".".join(str(part) for part in err["loc"]) or "record"
    kind = err["type"]
    if kind == "missing":
        return f"missing required field '{loc}'"
    if kind == "extra_forbidden":
        return f"unknown field '{loc}'"
    msg = str(err["msg"])
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    return f"field '{loc}' {msg}" if msg[:1].islower() else f"field '{loc}': {msg}"


def source_types(settings: Settings) -> frozenset[str]:
    """The ``source.type`` values a record may carry: the built-in ones and every type the
    trust policy maps (``unknown`` is the policy's fallback, not a type)."""
    return frozenset(SOURCE_TYPES) | (frozenset(settings.trust_policy) - {"unknown"})


def parse_record(raw: Any, location: str, settings: Settings) -> MemoryRecord:
    """Validate one raw record.

    Args:
        raw: the decoded JSON value.
        location: where it came from (``"line 12"``), used in the error.
        settings: gives the fact size limit.

    Raises:
        RecordError: naming the location and every problem (never the values).
    """
    if not isinstance(raw, dict):
        raise RecordError(location, f"expected a JSON object, got {type(raw).__name__}")
    try:
        return MemoryRecord.model_validate(
            raw,
            context={
                "max_fact_bytes": settings.max_fact_bytes,
                "source_types": source_types(settings),
            },
        )
    except ValidationError as exc:
        problems = "; ".join(_describe(err) for err in exc.errors()[:5])
        more = exc.error_count() - 5
        if more > 0:
            problems += f"; and {more} more"
        raise RecordError(location, problems) from None
