"""The closed vocabularies of memaudit, written once.

Every list of allowed words that more than one part uses lives here: memory kinds,
memory statuses, provenance source types, trust tiers, finding categories, severities,
finding statuses, account roles, reviewer actions and the special categories of
personal data (GDPR art. 9 and 10). Each is a ``Literal`` type (for
pydantic models, click choices and mypy) with its tuple of values beside it, taken from
the type so the two cannot drift apart. The store's enums
(:class:`auditor.store.models.MemoryStatus`, ``MemoryKind``, ``FindingStatus``) hold the
same values; ``tests/test_imports_vocab.py`` checks it.

Contract: standard library only, no I/O; importing it costs nothing, so the CLI can build
its options from it without loading the store, the rule engine or any detector.
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "CATEGORIES",
    "FINDING_STATUSES",
    "MEMORY_ACTIONS",
    "MEMORY_KINDS",
    "MEMORY_STATUSES",
    "REVIEW_ACTIONS",
    "ROLES",
    "SCAN_ACTOR",
    "SEVERITIES",
    "SEVERITY_RANK",
    "SOURCE_TYPES",
    "SPECIAL_CATEGORIES",
    "TRUST_TIERS",
    "Category",
    "FindingStatus",
    "MemoryKind",
    "MemoryStatus",
    "ReviewAction",
    "Role",
    "Severity",
    "SourceType",
    "SpecialCategory",
    "TrustTier",
]

#: What a memory is (SEEDS.md section 1).
MemoryKind = Literal["semantic", "episodic", "procedural", "note"]
MEMORY_KINDS: tuple[str, ...] = get_args(MemoryKind)

#: Where a memory is in its lifecycle.
MemoryStatus = Literal["active", "superseded", "expired", "quarantined", "deleted"]
MEMORY_STATUSES: tuple[str, ...] = get_args(MemoryStatus)

#: ``source.type`` of a memory's provenance (the trust policy maps each to a tier).
SourceType = Literal[
    "explicit_statement",
    "inferred",
    "external_content",
    "tool_output",
    "system",
    "import",
]
SOURCE_TYPES: tuple[str, ...] = get_args(SourceType)

#: Trust tiers, from the most trusted to the least.
TrustTier = Literal["system", "user", "agent", "external"]
TRUST_TIERS: tuple[str, ...] = get_args(TrustTier)

#: What a rule looks for (a rule's ``category``; a finding carries its rule's).
Category = Literal[
    "injection",
    "sensitive",
    "secret",
    "contradiction",
    "expired",
    "duplicate",
    "lifecycle",
    "trust",
]
CATEGORIES: tuple[str, ...] = get_args(Category)

#: How bad a finding is, from the least to the worst.
Severity = Literal["low", "medium", "high", "critical"]
SEVERITIES: tuple[str, ...] = get_args(Severity)
SEVERITY_RANK: dict[str, int] = {s: i for i, s in enumerate(SEVERITIES)}

#: Where a finding is in its review.
FindingStatus = Literal["open", "acknowledged", "resolved", "dismissed", "suppressed"]
FINDING_STATUSES: tuple[str, ...] = get_args(FindingStatus)

#: The actor the scanner records in the audit log and on the findings it resolves itself
#: (the dashboard tells those apart from reviewers' decisions).
SCAN_ACTOR = "memaudit-scan"

#: What an account may do in the dashboard (a user sees only their own memories).
Role = Literal["user", "officer", "admin"]
ROLES: tuple[str, ...] = get_args(Role)

#: What a reviewer can do to a finding, in the order the dashboard offers them (``memaudit
#: review`` has a flag for each; ``--assign`` is not an action but who works on it).
ReviewAction = Literal[
    "acknowledge",
    "resolve",
    "dismiss",
    "suppress",
    "quarantine",
    "delete",
    "restore",
    "supersede",
    "escalate",
    "reopen",
]
REVIEW_ACTIONS: tuple[str, ...] = get_args(ReviewAction)
#: The reviewer actions that change memories (previewed and confirmed before they run).
MEMORY_ACTIONS: tuple[str, ...] = ("quarantine", "delete", "restore")

#: The special categories of personal data (GDPR art. 9, criminal records art. 10) that
#: the special-category detector reports and that consents name.
SpecialCategory = Literal[
    "health",
    "religion",
    "political_opinion",
    "sexual_orientation",
    "ethnic_origin",
    "trade_union",
    "genetic",
    "biometric",
    "criminal_record",
]
SPECIAL_CATEGORIES: tuple[str, ...] = get_args(SpecialCategory)
