"""The secrets detector: detect-secrets' plugins plus memaudit's prose/URL/PEM patterns."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from auditor.config import load_settings
from auditor.detectors import secrets as secrets_mod
from auditor.detectors.base import DetectContext, Detection, MemoryView
from auditor.detectors.secrets import SecretsDetector, entity_for
from auditor.detectors.secrets_filters import placeholder_reason

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "eval" / "secrets-detect-secrets"

# Synthetic values (random, made for these tests; none is a live credential).
GH = "ghp_u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
AWS_ID = "AKIAVW53EFR4EDT2SYWB"
AWS_SECRET = "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"
SLACK = "xoxb-87752032226-98352650089-mxg9edn581u33xtplpft75v2"
STRIPE = "sk_live_sMehGAkWvj7FAc9QeWJKY40u"
GOOGLE = "AIzaOqg6YYZYn9ZhyiA4uoRgnatmUdjAWtGSU8p_ab"
BEARER = "1_qtc4xatws8phP9nhFyJfm_5di4P_zJ59_FHz5r"
PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEA1T7I4qEle9slbJs+T7tJgUbvcDDL+VNyUtzOrddktqMvuwmt\n"
    "6uEJxKmXIDl1NSuH\n"
    "-----END RSA PRIVATE KEY-----"
)


#: Params that leave out the Betterleaks engine and the generic assignment finder.
DS_ONLY: dict[str, object] = {"engine": False, "generic_assignments": False}


@pytest.fixture(scope="module")
def detector() -> SecretsDetector:
    return SecretsDetector({})


@pytest.fixture(scope="module")
def ctx() -> DetectContext:
    return DetectContext(now=datetime(2026, 11, 29, tzinfo=UTC), settings=load_settings())


def _view(text: str, memory_id: str = "m1") -> MemoryView:
    return MemoryView(memory_id=memory_id, subject="user:t", fact=text, trust_tier="user")


def _run(detector: SecretsDetector, ctx: DetectContext, text: str) -> list[Detection]:
    return detector.analyze(_view(text), ctx)


def _found(dets: list[Detection], text: str) -> list[tuple[str, str]]:
    return [(d.entity, text[d.spans[0].start : d.spans[0].end]) for d in dets]


# (text, expected [(entity, exact text under the span)])
FLAG_CASES: list[tuple[str, list[tuple[str, str]]]] = [
    (f"Use this token when pushing: {GH}", [("github_token", GH)]),
    (
        f"env: AWS_ACCESS_KEY_ID={AWS_ID} AWS_SECRET_ACCESS_KEY={AWS_SECRET}",
        [("aws_access_key", AWS_ID), ("aws_access_key", AWS_SECRET)],
    ),
    (f"aws_secret_key = '{AWS_SECRET}'", [("aws_access_key", AWS_SECRET)]),
    (f"Slack bot: {SLACK}", [("slack_token", SLACK)]),
    (f"Stripe live key {STRIPE} for the shop", [("stripe_access_key", STRIPE)]),
    (f"maps: {GOOGLE}", []),  # 38 chars after AIza: not a Google key (35)
    (f"maps: {GOOGLE[:39]}", [("google_api_key", GOOGLE[:39])]),
    (f"Contents of id_rsa:\n{PEM}\nend", [("private_key", PEM)]),
    (
        "truncated: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNz",
        [
            ("private_key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNz"),
        ],
    ),
    ("my password is hunter2", [("password_in_text", "hunter2")]),
    (
        "The Wi-Fi password at the lake cabin is larch-otter-42; remind them.",
        [
            ("password_in_text", "larch-otter-42"),
        ],
    ),
    ("The password for the router is admin123.", [("password_in_text", "admin123")]),
    ("Password: Tr0ub4dor&3", [("password_in_text", "Tr0ub4dor&3")]),
    ("pw: s3cr3t!x", [("password_in_text", "s3cr3t!x")]),
    (
        'Her password was changed to "correct horse battery staple".',
        [
            ("password_in_text", "correct horse battery staple"),
        ],
    ),
    ("The PIN is 4821", [("password_in_text", "4821")]),
    (
        "회사 VPN 비밀번호는 Haneul!2026 이라고 기억해 달라고 함",
        [
            ("password_in_text", "Haneul!2026"),
        ],
    ),
    ("wifi 비번: cafe2024wifi", [("password_in_text", "cafe2024wifi")]),
    ("hunter22를 비밀번호로 설정함", [("password_in_text", "hunter22")]),
    (
        "DB: postgres://app_admin:S3cr3t-Pa55@db.staging.internal:5432/orders",
        [
            ("connection_string", "S3cr3t-Pa55"),
        ],
    ),
    (
        "Server=db.example.com;Database=orders;User Id=admin;Password=P@ssw0rd1;",
        [
            ("connection_string", "P@ssw0rd1"),
        ],
    ),
    (
        "mirror https://deploy:gh7Vx2kq@mirror.example.com/repo.git",
        [
            ("basic_auth_credentials", "gh7Vx2kq"),
        ],
    ),
    (
        "Authorization: Basic dXNlcjpzM2NyZXQtcGFzcw==",
        [
            ("basic_auth_credentials", "dXNlcjpzM2NyZXQtcGFzcw=="),
        ],
    ),
    (
        f'curl -H "Authorization: Bearer {BEARER}" https://api.example.com',
        [
            ("bearer_token", BEARER),
        ],
    ),
    ('db_password = "x7Vq-k2Lm9"', [("password_in_text", "x7Vq-k2Lm9")]),
    ('client_secret = "x7Vq-k2Lm9"', [("secret_keyword", "x7Vq-k2Lm9")]),
    (
        "export API_KEY=8f14e45fceea167a5a36dedd4bea2543",
        [
            ("secret_keyword", "8f14e45fceea167a5a36dedd4bea2543"),
        ],
    ),
    (
        'config: "o+799NksnRH9ucAUsdMlHUvTCQCyEZDz"',
        [
            ("base64_high_entropy_string", "o+799NksnRH9ucAUsdMlHUvTCQCyEZDz"),
        ],
    ),
    (
        "Uses glcbt-0a_abcdefghijklmnopqrstuv tokens",  # detect-secrets' own group bug
        [("gitlab_token", "glcbt-0a_abcdefghijklmnopqrstuv")],
    ),
]

PASS_CASES = [
    "Prefers green tea in the morning and coffee after lunch.",
    "My password is required for login.",
    "The password manager is 1Password.",
    "Never share your password with anyone.",
    "Password must be at least 12 characters.",
    "password: <your-password>",
    'the password is "********"',
    "password: ${DB_PASSWORD}",
    "Keeps API keys in 1Password and never pastes them into chat; remind them if they try.",
    "비밀번호나 토큰은 채팅에 붙여 넣지 않기로 본인이 정함, 실수로 붙여 넣으면 알려 달라고 함",
    "은행 비밀번호 변경 주기는 90일",
    "암호화 방식은 AES256을 사용",
    "boarding pass is AB1234",
    "She passed the exam with 95 points.",
    "mysql://root:${DB_PASS}@localhost/db",
    "Uses a bearer token for the internal API.",
    'CLOUD_APIKEY: "insert_key_here"',
    'cl_api_key = "a-fake-api-key"',
    "arn:aws:sns:us-east-1:111122223333:abcdefghijklmnopqrstuvwxyz012345678",
    "Server address is 93.184.216.34",  # an IP address is personal data, not a credential
    'request id "123e4567-e89b-12d3-a456-426614174000"',
    "config: eyJAAAA.eyJBBB",  # not a decodable JWT
]


@pytest.mark.parametrize(("text", "expected"), FLAG_CASES)
def test_flags_and_spans(
    detector: SecretsDetector, ctx: DetectContext, text: str, expected: list[tuple[str, str]]
) -> None:
    assert _found(_run(detector, ctx, text), text) == expected


@pytest.mark.parametrize("text", PASS_CASES)
def test_passes(detector: SecretsDetector, ctx: DetectContext, text: str) -> None:
    assert _run(detector, ctx, text) == []


@pytest.mark.parametrize(("text", "expected"), [c for c in FLAG_CASES if c[1]])
def test_reason_and_details_never_hold_the_secret(
    detector: SecretsDetector, ctx: DetectContext, text: str, expected: list[tuple[str, str]]
) -> None:
    for det in _run(detector, ctx, text):
        value = text[det.spans[0].start : det.spans[0].end]
        assert value not in det.reason
        assert value not in json.dumps(dict(det.details), ensure_ascii=False)
        assert det.memory_ids == ("m1",)
        assert det.spans[0].memory_id == "m1"
        assert 0 < det.score <= 1


def test_one_finding_per_secret_most_specific_wins(
    detector: SecretsDetector, ctx: DetectContext
) -> None:
    # the PEM block and detect-secrets' BEGIN line overlap: one private_key finding
    dets = _run(detector, ctx, PEM)
    assert [d.entity for d in dets] == ["private_key"]
    assert dets[0].details["pattern"] == "pem_private_key_block"


@pytest.mark.parametrize(
    ("secret_type", "entity"),
    [
        ("AWS Access Key", "aws_access_key"),
        ("Public IP (ipv4)", "public_ip_ipv4"),
        ("NPM tokens", "npm_tokens"),
        ("Azure Storage Account access key", "azure_storage_account_access_key"),
    ],
)
def test_entity_names(secret_type: str, entity: str) -> None:
    assert entity_for(secret_type) == entity


@pytest.mark.parametrize(
    ("params", "text", "entities"),
    [
        # (the Betterleaks engine and the generic finder are off here: these cases test the
        # detect-secrets plugins and memaudit's patterns alone; tests/test_secrets_engine.py
        # covers the engine)
        ({"disabled_plugins": ["github_token"], **DS_ONLY}, f"token {GH}", []),
        ({"disabled_plugins": [], **DS_ONLY}, f"token {GH}", ["github_token"]),
        ({"disabled_plugins": ["GitHubTokenDetector"], **DS_ONLY}, f"token {GH}", []),
        ({"extra_patterns": False, **DS_ONLY}, "my password is hunter2", []),
        (
            {"unquoted_keywords": False, **DS_ONLY},
            "export API_KEY=8f14e45fceea167a5a36dedd4bea2543",
            [],
        ),
        ({"keyword_exclude": "^client_"}, 'client_secret = "x7Vq-k2Lm9"', []),
        ({"hex_limit": 8.0, **DS_ONLY}, "'fb008f86bebb2737f6a6f0fb23c6f5da2cec2554'", []),
    ],
)
def test_params(
    ctx: DetectContext, params: dict[str, object], text: str, entities: list[str]
) -> None:
    assert [d.entity for d in SecretsDetector(params).analyze(_view(text), ctx)] == entities


@pytest.mark.parametrize(
    "params",
    [
        {"base64_limit": 9},
        {"hex_limit": "high"},
        {"disabled_plugins": "AWSKeyDetector"},
        {"keyword_exclude": "("},
        {"keyword_exclude": 3},
    ],
)
def test_bad_params_are_refused(params: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        SecretsDetector(params)


def test_plugin_gates_change_no_result(monkeypatch: pytest.MonkeyPatch, ctx: DetectContext) -> None:
    """The literal gates only skip work: results with and without them are the same."""
    texts = [t for t, _ in FLAG_CASES] + PASS_CASES
    if CORPUS.is_dir():
        texts += [json.loads(line)["fact"] for line in (CORPUS / "memories.jsonl").open()]
    gated = SecretsDetector({"disabled_plugins": []})
    monkeypatch.setattr(secrets_mod, "PLUGIN_GATES", {})
    monkeypatch.setattr(secrets_mod, "_KEYWORD_GATE_OK", False)
    plain = SecretsDetector({"disabled_plugins": []})
    for text in texts:
        view = _view(text)
        assert gated.analyze(view, ctx) == plain.analyze(view, ctx), text


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared/eval corpus not present")
def test_detect_secrets_corpus(detector: SecretsDetector, ctx: DetectContext) -> None:
    """Train and dev splits only (the test split is for reporting, never for fitting).

    Its negatives are detect-secrets' own near-miss format tests (a GitLab token one
    character short, a Discord token with a bad part); the maintained rule set and the
    generic finders flag a few of them, hence the false-alarm bound. Since 2026-12-06 a
    random-looking value stated in prose as a token ("My Discord bot token is ...") is
    reported whatever its vendor format (patterns token_prose / token_korean, values of 20
    characters or more): four of those negatives are such sentences (two Discord tokens, an
    OpenAI and a SendGrid key, each one character or part off the vendor's format), which a
    memory store should not keep either, so the false-alarm bound went from 7% to 10% (8 of
    81) and the F1 bound from 0.97 to 0.96.

    Some positives are placeholder runs (``AKIAZZZZZZZZZZZZZZZZ``, ``SKxxxx...``,
    ``npm_xxxxxxxxxxx``): detect-secrets' fixtures for its regexes, which issue 10 asks us
    not to report. Since 2026-12-06 (a run nearly filling a value is refused like one
    filling it) they are checked apart: none of them is reported, and recall is measured on
    the others.
    """
    from auditor.tools.splits import recorded_splits

    split = recorded_splits()[CORPUS.name]
    labels = json.loads((CORPUS / "labels.json").read_text(encoding="utf-8"))
    positives = set(labels["memory_labels"])
    ignore = set(labels["ignore"])
    tp = fp = fn = negatives = 0
    placeholders: list[str] = []
    for line in (CORPUS / "memories.jsonl").open(encoding="utf-8"):
        rec = json.loads(line)
        mid = rec["memory_id"]
        if mid in ignore or split[mid] == "test":
            continue
        hit = bool(detector.analyze(_view(rec["fact"], mid), ctx))
        if mid in positives and _placeholder_run(rec["fact"]):
            placeholders.append(rec["fact"])
            assert not hit, rec["fact"]
        elif mid in positives:
            tp += hit
            fn += not hit
        else:
            negatives += 1
            fp += hit
    assert placeholders  # the corpus still holds such fixtures: the check above ran
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    assert recall >= 0.98
    assert fp / negatives <= 0.10
    assert 2 * precision * recall / (precision + recall) >= 0.96


def _placeholder_run(fact: str) -> bool:
    """Whether a word of ``fact`` is a placeholder run by the format-level check."""
    words = (w.strip(".,:;\"'`()") for w in fact.split())
    return any(
        len(w) >= 12
        and placeholder_reason(w.rsplit("=", 1)[-1], level="format") == "placeholder_run"
        for w in words
    )
