"""The rule pack: YAML rules (policy as data), loaded, validated, linted and self-tested.

One rule per file under ``rules/`` (sub-folders allowed). A rule names a detector and its
params, which of the detector's entities it reports (``match``), which memories it applies
to, its category, severity, maturity and automatic action, and carries its own test cases:
``flag`` (must fire), ``pass`` (must not) and ``known_miss`` (should fire, does not yet:
written down honestly, reported, never failing). See ``rules/README.md``.

A malformed rule is refused with ``file:line`` and a reason (:class:`RuleError`). Rule files
are read with :mod:`auditor.safe_yaml`: at most 256 KiB, no aliases, anchors or non-core
tags, bounded nesting and node count, so a hostile pack costs bounded time and memory.
Params are checked by each detector; no rule param is a regular expression (the keyword
detector escapes its terms), and the keyword detector bounds how many terms it takes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from auditor import limits, safe_yaml
from auditor.errors import InputError
from auditor.vocab import (
    CATEGORIES,
    SEVERITIES,
    SEVERITY_RANK,
    Category,
    MemoryKind,
    Severity,
    TrustTier,
)

__all__ = [
    "CATEGORIES",
    "DEFAULT_RULES_DIR",
    "SEVERITIES",
    "SEVERITY_RANK",
    "Applies",
    "Match",
    "Rule",
    "RuleError",
    "RulePack",
    "load_pack",
]

_PACKAGE = Path(__file__).resolve().parents[1]
#: Where the shipped rule pack is looked for, in order: ``rules/`` beside the package (a
#: source checkout or an editable install: the source of truth), then the copy a wheel
#: carries inside the package (``auditor/_rules``, put there by the wheel build).
RULE_PACK_CANDIDATES = (_PACKAGE.parent / "rules", _PACKAGE / "_rules")
#: The shipped rule pack (a folder holding ``RETIRED_IDS`` marks a pack, not any ``rules/``).
DEFAULT_RULES_DIR = next(
    (p for p in RULE_PACK_CANDIDATES if (p / "RETIRED_IDS").is_file()), RULE_PACK_CANDIDATES[0]
)
_ID = re.compile(r"^MA-[A-Z]{2,6}-\d{3}$")


class RuleError(InputError):
    """A rule file is malformed; the message starts with ``file:line``."""


class Match(BaseModel):
    """Which detections of the detector this rule reports."""

    model_config = ConfigDict(extra="forbid")

    entities: list[str] | None = None
    min_score: float = Field(0.0, ge=0.0, le=1.0)
    #: Exclusive upper bound: lets a soft rule take what a strong rule (min_score) leaves.
    max_score: float | None = Field(None, gt=0.0, le=1.0)


class Applies(BaseModel):
    """Which memories the rule applies to (empty lists: all)."""

    model_config = ConfigDict(extra="forbid")

    tiers: list[TrustTier] = Field(default_factory=list)
    categories: list[str] = Field(default_factory=list)
    exclude_categories: list[str] = Field(default_factory=list)
    kinds: list[MemoryKind] = Field(default_factory=list)
    statuses: list[str] = Field(default_factory=lambda: ["active"])


class Tests(BaseModel):
    """Inline test cases: a string (a fact) or a mapping (a memory, or ``memories: [...]``)."""

    model_config = ConfigDict(extra="forbid")

    flag: list[Any] = Field(default_factory=list)
    pass_: list[Any] = Field(default_factory=list, alias="pass")
    known_miss: list[Any] = Field(default_factory=list)


class Rule(BaseModel):
    """One rule; see the module docstring and ``rules/README.md``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str
    title: str = Field(min_length=3, max_length=200)
    status: Literal["experimental", "test", "stable", "deprecated"]
    description: str = Field(min_length=3)
    author: str | None = None
    date: str | None = None

    @field_validator("date", mode="before")
    @classmethod
    def _date_as_text(cls, value: Any) -> Any:
        return value.isoformat() if hasattr(value, "isoformat") else value

    category: Category
    severity: Severity
    detector: str
    params: dict[str, Any] = Field(default_factory=dict)
    match: Match = Field(default_factory=lambda: Match())
    applies_to: Applies = Field(default_factory=lambda: Applies())
    action: Literal["flag", "quarantine", "expire", "supersede"] = "flag"
    references: list[str] = Field(default_factory=list)
    false_positives: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    tests: Tests = Field(default_factory=Tests)

    # set by the loader
    path: str = Field("", exclude=True)
    line: int = Field(0, exclude=True)

    @field_validator("id")
    @classmethod
    def _id_form(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError("must look like MA-<AREA>-<nnn>, e.g. MA-INJ-001")
        return value

    @field_validator("detector")
    @classmethod
    def _known_detector(cls, value: str) -> str:
        from auditor.detectors import DETECTORS

        if value not in DETECTORS:
            raise ValueError(f"unknown detector; known: {', '.join(sorted(DETECTORS))}")
        return value

    @property
    def where(self) -> str:
        """``file:line`` of the rule."""
        return f"{self.path}:{self.line}"

    def applies(self, tier: str, category: str, kind: str, status: str) -> bool:
        """Whether the rule looks at a memory with these properties."""
        a = self.applies_to
        return (
            (not a.tiers or tier in a.tiers)
            and (not a.categories or category in a.categories)
            and category not in a.exclude_categories
            and (not a.kinds or kind in a.kinds)
            and (not a.statuses or status in a.statuses)
        )

    def selects(self, entity: str, score: float) -> bool:
        """Whether a detection with this entity and score is reported by this rule."""
        m = self.match
        return (
            (m.entities is None or entity in m.entities)
            and score >= m.min_score
            and (m.max_score is None or score < m.max_score)
        )


def _node_line(node: yaml.Node, loc: Sequence[str | int]) -> int:
    """The 1-based line of the YAML node at ``loc`` (or of the deepest node found)."""
    current = node
    for part in loc:
        if isinstance(current, yaml.MappingNode):
            nxt = next(
                (v for k, v in current.value if isinstance(k, yaml.ScalarNode) and k.value == part),
                None,
            )
            if nxt is None:
                break
            current = nxt
        elif isinstance(current, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(current.value):
                break
            current = current.value[part]
        else:
            break
    return current.start_mark.line + 1


def _iter_rule_files(folder: Path) -> Iterator[Path]:
    yield from sorted(p for p in folder.rglob("*.yaml") if p.is_file())
    yield from sorted(p for p in folder.rglob("*.yml") if p.is_file())


def load_rule_file(path: Path, root: Path | None = None) -> Rule:
    """Load and validate one rule file.

    Raises:
        RuleError: ``file:line: reason`` for unreadable YAML, a second document, or an
            invalid field.
    """
    shown = str(path.relative_to(root)) if root and path.is_relative_to(root) else str(path)
    try:
        text = safe_yaml.read_bounded(path, f"{shown}:1", limits.MAX_RULE_FILE_BYTES)
        nodes, values = safe_yaml.compose_documents(text, shown)
    except InputError as exc:
        raise RuleError(str(exc)) from None
    if len(nodes) != 1:
        line = nodes[1].start_mark.line + 1 if len(nodes) > 1 else 1
        raise RuleError(f"{shown}:{line}: a rule file holds exactly one rule (one document)")
    node, data = nodes[0], values[0]
    if not isinstance(data, dict):
        raise RuleError(f"{shown}:{node.start_mark.line + 1}: a rule is a mapping of fields")
    try:
        rule = Rule.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = [p for p in err["loc"] if isinstance(p, (str, int))]
        loc = ["pass" if p == "pass_" else p for p in loc]
        line = _node_line(node, loc)
        field_name = ".".join(str(p) for p in loc) or "rule"
        msg = str(err["msg"]).removeprefix("Value error, ")
        more = f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
        raise RuleError(f"{shown}:{line}: {field_name}: {msg}{more}") from None
    rule.path, rule.line = shown, node.start_mark.line + 1
    return rule


@dataclass
class RulePack:
    """A loaded, validated rule pack."""

    root: Path
    rules: list[Rule]
    sha256: str
    retired: frozenset[str] = field(default_factory=frozenset)

    def by_id(self, rule_id: str) -> Rule:
        """The rule with this id.

        Raises:
            InputError: no such rule.
        """
        for rule in self.rules:
            if rule.id == rule_id:
                return rule
        raise InputError(f"no rule {rule_id!r} in {self.root}")

    def active(self) -> list[Rule]:
        """Rules that run in scans (every status except ``deprecated``)."""
        return [r for r in self.rules if r.status != "deprecated"]


def load_pack(folder: Path | None = None, *, lint: bool = True) -> RulePack:
    """Load every rule under ``folder`` (default: the shipped pack, :data:`DEFAULT_RULES_DIR`).

    Args:
        folder: the pack's folder.
        lint: also check pack-wide rules (unique ids, retired ids, file names).

    Raises:
        RuleError: the first malformed rule, or a lint failure, with ``file:line``.
    """
    root = (folder or DEFAULT_RULES_DIR).resolve()
    if not root.is_dir():
        raise RuleError(
            f"rule folder not found: {root} (point MEMAUDIT_RULES_DIR or --rules at a rule pack)"
        )
    retired_file = root / "RETIRED_IDS"
    try:
        retired_text = (
            safe_yaml.read_bounded(retired_file, "RETIRED_IDS:1", limits.MAX_CONFIG_FILE_BYTES)
            if retired_file.exists()
            else ""
        )
    except InputError as exc:
        raise RuleError(str(exc)) from None
    retired = frozenset(
        line.split("#", 1)[0].strip()
        for line in retired_text.splitlines()
        if line.split("#", 1)[0].strip()
    )
    rules: list[Rule] = []
    digest = hashlib.sha256()
    paths = list(_iter_rule_files(root))
    if len(paths) > limits.MAX_RULE_FILES:
        raise RuleError(
            f"{root}: {len(paths):,} rule files, over the limit of {limits.MAX_RULE_FILES:,}"
        )
    for path in paths:
        rule = load_rule_file(path, root)
        rules.append(rule)
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    if lint:
        lint_pack(rules, retired)
    return RulePack(root, rules, digest.hexdigest(), retired)


def lint_pack(rules: Sequence[Rule], retired: frozenset[str] = frozenset()) -> None:
    """Pack-wide checks: unique ids, no retired id reused, file named after the id.

    Raises:
        RuleError: the first problem, with ``file:line``.
    """
    seen: dict[str, Rule] = {}
    for rule in rules:
        if rule.id in seen:
            raise RuleError(f"{rule.where}: id {rule.id} is also used by {seen[rule.id].where}")
        if rule.id in retired:
            raise RuleError(f"{rule.where}: id {rule.id} is retired and may not be reused")
        if not Path(rule.path).name.lower().startswith(rule.id.lower()):
            raise RuleError(
                f"{rule.where}: file name must start with the rule id ({rule.id.lower()}-...)"
            )
        if not rule.tests.flag:
            raise RuleError(f"{rule.where}: tests.flag needs at least one case the rule catches")
        seen[rule.id] = rule


def rule_summary(rule: Rule) -> Mapping[str, Any]:
    """A rule as a JSON-ready row (for ``memaudit rules list``)."""
    return {
        "id": rule.id,
        "title": rule.title,
        "status": rule.status,
        "category": rule.category,
        "severity": rule.severity,
        "detector": rule.detector,
        "action": rule.action,
        "tiers": rule.applies_to.tiers,
        "file": rule.where,
    }
