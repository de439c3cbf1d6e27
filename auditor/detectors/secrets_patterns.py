"""memaudit's own credential patterns (the ones detect-secrets lacks for memories).

Data for :mod:`auditor.detectors.secrets`: passwords stated in prose (English and Korean),
connection strings, whole PEM blocks, bearer / basic headers, unquoted AWS secret keys, Google
and Anthropic API keys, password hashes in the modular crypt format, and the placeholder words
that mark a value as not real.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["EXTRA_PATTERNS", "PLACEHOLDER_WORDS", "Check", "ExtraPattern", "is_placeholder"]

#: How a match is checked before it is reported.
Check = Literal["none", "password", "token", "placeholder"]


@dataclass(frozen=True)
class ExtraPattern:
    """A credential pattern detect-secrets lacks for memories.

    Attributes:
        id: stable pattern id (shown in details).
        entity: what a match is reported as.
        regex: the compiled pattern; ``group`` holds the secret.
        group: the group that holds the secret (0: the whole match).
        score: confidence of a match that passes its check.
        check: ``password`` (a stated password must look like one), ``token`` (random-looking),
            ``placeholder`` (only refuse placeholders) or ``none``.
        priority: lower wins when two findings overlap (0 private keys ... 4 entropy).
        gate: lower-case literals, one of which must occur in the text before the (slower)
            regex runs.
        requires: another regex that must also occur in the text, or None.
    """

    id: str
    entity: str
    regex: re.Pattern[str]
    group: int | str
    score: float
    check: Check
    priority: float
    gate: tuple[str, ...]
    requires: re.Pattern[str] | None = None


_I = re.IGNORECASE
_PEM = (
    r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY((?: BLOCK)?)-----"
    r"[\s\S]*?(?:-----END \1PRIVATE KEY\2-----|\Z)"
)
#: Schemes whose URLs carry database / broker credentials.
_DB_SCHEMES = (
    r"postgres(?:ql)?(?:\+\w+)?|mysql(?:\+\w+)?|mariadb|mssql(?:\+\w+)?|sqlserver|oracle(?:\+\w+)?"
    r"|mongodb(?:\+srv)?|redis|rediss|amqps?|clickhouse|cockroachdb|snowflake|jdbc:[a-z0-9]+"
    r"|sftp|ftps?|ldaps?|smtps?|imaps?"
)
#: English (and a few other) words for a password; "strong" ones also take "is ..." forms.
_PW_STRONG = (
    r"pass(?:word|phrase|code|wd)|pwd|passwort|kennwort|contrase(?:ñ|n)a|mot de passe"
    r"|senha|wachtwoord"
)
_PW_WEAK = r"pw|pass|pin"
#: What may stand between the password word and its value ("for the router", "at the cabin").
_PW_QUALIFIER = r"(?:\s+(?:for|at|of|to|on|in|from|with)\s+[^\n.;:=\"'`]{1,40}?)?"
#: A clause set off by commas between the word and its link ("the password, which the
#: landlord changed, is ...").
_PW_CLAUSE = r"(?:,\s{1,3}[^,\n.;:=\"'`]{1,60}?,)?"
#: "is", "was changed to", ... (prose) or ":" / "=" (assignments).
_PW_PROSE_LINK = (
    r"\s+(?:has been changed to|was changed to|changed to|is set to|set to|reset to|is now"
    r"|is still|remains|is|was|lautet|ist|es|est|é)\s*[:=]?\s*"
)
_PW_ASSIGN_LINK = r"\s*(?:[:=]|=>|->)\s*"
_PW_VALUE = r"(?P<val>\"[^\"\n]{3,128}\"|'[^'\n]{3,128}'|`[^`\n]{3,128}`|[^\s\"'`]{3,128})"
_KO_PW = r"(?:비밀\s?번호|비번|패스워드|암호|핀\s?번호|PIN\s?번호)"
#: Words for a token or a key in prose ("the API token for the staging box is ...").
_TOKEN_WORDS = (
    r"api[ _-]?(?:key|token)|access[ _-]?(?:key|token)|auth(?:entication)?[ _-]?token"
    r"|bearer[ _-]?token|secret[ _-]?key|client[ _-]?secret|deploy[ _-]?(?:key|token)"
    r"|personal[ _-]access[ _-]token|token|secret|key"
)
_KO_TOKEN = (
    r"(?:토큰|(?:API|api)\s?키|액세스\s?키|시크릿\s?키|비밀\s?키|인증\s?키|접근\s?키"
    r"|(?<=[A-Za-z0-9] )키|(?<=[A-Za-z0-9])키)"  # "OpenAI 키는": a service's key
)
#: A generated value: letters, digits and the separators keys use, 20 characters or more
#: (as for a key pasted without an operator; the "token" check then asks for letters and
#: digits and enough entropy).
_TOKEN_VALUE = r"[\"'`]?(?P<val>[A-Za-z0-9][A-Za-z0-9_\-./+=]{19,255})"

#: Literals that gate the password patterns (lower case).
_PW_GATE = (
    "pass",
    "pwd",
    "pw",
    "pin",
    "kennwort",
    "contrase",
    "mot de passe",
    "senha",
    "wachtwoord",
)
#: Codes that open a physical lock ("the alarm code for the studio: 4471").
_ACCESS_CODE_WORDS = "alarm|door|gate|safe|lock|keypad|garage|entry"
_KO_GATE = ("비밀", "비번", "패스워드", "암호", "번호")

#: Modular crypt format password hashes (md5crypt and Apache's apr1, sha256crypt and
#: sha512crypt with optional rounds, bcrypt, Cisco type 8 / 9, argon2) and Kerberos roasting
#: hashes: crackable offline,
#: so a stored hash is a credential. Each alphabet and length is the format's own.
_CRYPT_B64 = r"[./0-9A-Za-z]"
_PASSWORD_HASH = (
    rf"(?<![\w$])(?:\$(?:1|apr1|5|6)\$(?:rounds=\d{{1,9}}\$)?{_CRYPT_B64}{{1,16}}\$"
    rf"{_CRYPT_B64}{{22,86}}"
    rf"|\$2[abxy]\$\d{{2}}\${_CRYPT_B64}{{53}}"
    rf"|\$[89]\${_CRYPT_B64}{{14}}\${_CRYPT_B64}{{43}}"
    r"|\$argon2(?:id|i|d)\$v=\d{1,3}\$m=\d{1,9},t=\d{1,4},p=\d{1,3}\$[A-Za-z0-9+/]{8,64}"
    r"\$[A-Za-z0-9+/]{16,128}"
    # Kerberos 5 AS-REP / TGS-REP hashes (etype 23, 17, 18), as roasting tools print them
    r"|\$krb5(?:asrep|tgs)\$\d{1,2}\$(?:[^$\s]{1,200}\$){0,3}[0-9a-f]{32}\$[0-9a-f]{64,4096})"
    rf"(?!{_CRYPT_B64})"
)
_HASH_GATE = (
    "$1$",
    "$apr1$",
    "$5$",
    "$6$",
    "$2a$",
    "$2b$",
    "$2x$",
    "$2y$",
    "$8$",
    "$9$",
    "$argon2",
    "$krb5",
)

#: Vendor token formats the Betterleaks rule set lacks (its rules are tried first): id,
#: regex, gate, score. Each prefix or signature is the vendor's documented token format; a
#: match is checked as a vendor format is (only a placeholder body is refused).
_VENDOR_FORMATS: tuple[tuple[str, str, tuple[str, ...], float], ...] = (
    # Google OAuth 2.0 access tokens start "ya29."
    (
        "google_oauth_access_token",
        r"(?<![\w.-])ya29\.[0-9A-Za-z_\-]{30,400}(?![\w-])",
        ("ya29.",),
        0.85,
    ),
    # CLI, personal, service, service-account, SCIM and audit tokens
    (
        "doppler_token",
        r"(?<![\w.-])dp\.(?:ct|pt|st|sa|scim|audit)\."
        r"(?:[a-z0-9_-]{1,30}\.)?[A-Za-z0-9]{40,44}(?![\w])",
        ("dp.",),
        0.9,
    ),
    # "CCIPAT_" personal API tokens
    (
        "circleci_personal_token",
        r"(?<![\w-])CCIPAT_[A-Za-z0-9]{20,24}_[A-Za-z0-9]{38,42}(?![\w])",
        ("ccipat_",),
        0.9,
    ),
    # 84 characters with the "AZDO" signature at position 76
    ("azure_devops_pat", r"(?<![\w])[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}(?![\w])", ("azdo",), 0.9),
    # Adafruit IO keys
    ("adafruit_io_key", r"(?<![\w-])aio_[A-Za-z0-9]{28}(?![\w])", ("aio_",), 0.9),
    # Tavily search API keys
    ("tavily_api_key", r"(?<![\w-])tvly-(?:dev-|prod-)?[A-Za-z0-9]{32}(?![\w])", ("tvly-",), 0.9),
    # Telegram bot tokens: the bot id, a colon, "AA" and the secret
    (
        "telegram_bot_token",
        r"(?<![\w:])\d{8,10}:AA(?!([A-Za-z0-9_-])\1{7})[A-Za-z0-9_-]{30,34}(?![\w-])",
        (":aa",),
        0.9,
    ),
    # Twitch stream keys
    ("twitch_stream_key", r"(?<![\w-])live_\d{6,12}_[A-Za-z0-9]{30}(?![\w])", ("live_",), 0.9),
    # NuGet API keys
    ("nuget_api_key", r"(?<![\w-])oy2[a-z0-9]{43}(?![\w])", ("oy2",), 0.9),
    # New Relic user API keys: "NRAK-" and 27 capitals or digits (the engine's rule needs the
    # word "newrelic" written as one word or with a hyphen beside it)
    ("new_relic_user_key", r"(?<![\w-])NRAK-[A-Z0-9]{27}(?![\w])", ("nrak-",), 0.9),
    # Salesforce: the org id (00D...), "!", the session
    (
        "salesforce_access_token",
        r"(?<![\w!])00D[A-Za-z0-9]{12}![A-Za-z0-9._]{80,250}(?![\w])",
        ("00d",),
        0.9,
    ),
    # Okta API tokens after the SSWS scheme
    ("okta_api_token", r"(?<=SSWS )00[A-Za-z0-9_-]{40}(?![\w-])", ("ssws",), 0.9),
    # Discord webhooks: anyone holding the URL can post as the hook
    (
        "discord_webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d{17,20}/"
        r"[A-Za-z0-9_\-]{60,72}(?![\w-])",
        ("discord",),
        0.9,
    ),
    # Microsoft Teams incoming webhooks on the Office 365 domain
    (
        "teams_incoming_webhook",
        r"https://(?:outlook\.office(?:365)?\.com|[a-z0-9-]{1,63}\.webhook\.office\.com)"
        r"/webhook(?:b2)?/[0-9a-f-]{36}@[0-9a-f-]{36}/IncomingWebhook/[0-9a-f]{32}/[0-9a-f-]{36}",
        ("incomingwebhook",),
        0.9,
    ),
)


def _password_pattern(
    id_: str,
    regex: str,
    *,
    score: float = 0.8,
    gate: tuple[str, ...] = _PW_GATE,
    check: Check = "password",
) -> ExtraPattern:
    """A password stated in text: the value in group ``val``, case-insensitive."""
    return ExtraPattern(
        id=id_,
        entity="password_in_text",
        regex=re.compile(regex, _I),
        group="val",
        score=score,
        check=check,
        priority=2,
        gate=gate,
    )


def _vendor_pattern(id_: str, regex: str, gate: tuple[str, ...], score: float) -> ExtraPattern:
    return ExtraPattern(
        id=id_,
        entity="service_credential",
        regex=re.compile(regex),
        group=0,
        score=score,
        check="placeholder",
        priority=1,
        gate=gate,
    )


#: Patterns that detect-secrets lacks for memories (see the module docstring).
EXTRA_PATTERNS: tuple[ExtraPattern, ...] = (
    ExtraPattern(
        id="pem_private_key_block",
        entity="private_key",
        regex=re.compile(_PEM),
        group=0,
        score=0.99,
        check="none",
        priority=0,
        gate=("private key",),
    ),
    ExtraPattern(
        id="url_credentials_db",
        entity="connection_string",
        regex=re.compile(
            rf"(?<![\w+.-])(?:{_DB_SCHEMES})://[^\s:/@'\"]{{1,128}}:(?P<val>[^\s@/'\"]{{1,256}})@"
            r"[\w.\-\[\]]+",
            _I,
        ),
        group="val",
        score=0.92,
        check="placeholder",
        priority=0.5,
        gate=("://",),
    ),
    ExtraPattern(
        id="ado_connection_string_password",
        entity="connection_string",
        regex=re.compile(
            r"(?:^|[;\s\"'])(?:password|pwd)\s*=\s*(?P<val>[^;\"'\s]{1,128})(?=\s*(?:;|$))",
            _I | re.M,
        ),
        group="val",
        score=0.88,
        check="placeholder",
        priority=0.5,
        gate=("password", "pwd"),
        requires=re.compile(
            r"(?:server|host|data source|database|initial catalog|uid|user id)\s*=", _I
        ),
    ),
    ExtraPattern(
        id="bearer_token",
        entity="bearer_token",
        regex=re.compile(r"\bbearer\s+(?P<val>[A-Za-z0-9\-._~+/]{20,}=*)", _I),
        group="val",
        score=0.85,
        check="token",
        priority=1,
        gate=("bearer",),
    ),
    ExtraPattern(
        id="authorization_basic_header",
        entity="basic_auth_credentials",
        regex=re.compile(
            r"\bauthorization\s*[:=]\s*[\"']?basic\s+(?P<val>[A-Za-z0-9+/]{8,}={0,2})", _I
        ),
        group="val",
        score=0.85,
        check="placeholder",
        priority=1,
        gate=("basic",),
    ),
    ExtraPattern(
        id="aws_secret_access_key_unquoted",
        entity="aws_access_key",
        regex=re.compile(
            r"aws.{0,20}?(?:secret|key|pwd|pw|password|pass|token).{0,20}?[=:]\s*[\"']?"
            r"(?P<val>[0-9a-zA-Z/+]{40})(?![0-9a-zA-Z/+=])",
            _I,
        ),
        group="val",
        score=0.9,
        check="none",
        priority=1,
        gate=("aws",),
    ),
    ExtraPattern(
        id="password_hash_crypt",
        entity="password_hash",
        regex=re.compile(_PASSWORD_HASH),
        group=0,
        score=0.85,
        check="none",
        priority=1,
        gate=_HASH_GATE,
    ),
    ExtraPattern(
        id="google_api_key",
        entity="google_api_key",
        regex=re.compile(r"(?<![\w-])AIza[0-9A-Za-z_\-]{35}(?![\w-])"),
        group=0,
        score=0.9,
        check="none",
        priority=1,
        gate=("aiza",),
    ),
    ExtraPattern(
        id="anthropic_api_key",
        entity="anthropic_api_key",
        regex=re.compile(r"(?<![\w-])sk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_\-]{80,}"),
        group=0,
        score=0.95,
        check="none",
        priority=1,
        gate=("sk-ant-",),
    ),
    *(_vendor_pattern(*row) for row in _VENDOR_FORMATS),
    ExtraPattern(
        id="password_prose",
        entity="password_in_text",
        regex=re.compile(
            rf"(?<![A-Za-z])(?:{_PW_STRONG})s?(?![A-Za-z]){_PW_QUALIFIER}{_PW_CLAUSE}"
            rf"(?:{_PW_PROSE_LINK}|{_PW_ASSIGN_LINK}){_PW_VALUE}",
            _I,
        ),
        group="val",
        score=0.82,
        check="password",
        priority=2,
        gate=_PW_GATE,
    ),
    _password_pattern(
        "password_quoted_after_word",
        rf"(?<![A-Za-z])(?:{_PW_STRONG})(?![A-Za-z])\s{{1,3}}"
        r"(?P<val>\"[^\"\n]{3,128}\"|'[^'\n]{3,128}')",
    ),
    _password_pattern(  # "psexec \\\\host -u admin -p VALUE", "-Password VALUE"
        "password_cli_flag",
        r"(?:\s-u(?:ser)?\s{1,3}[^\s-][^\s]{0,63}\s{1,3}-p(?:(?:w|ass|assword)?(?:\s{1,3}|=)"
        r"|(?=[^\s=\-]))"  # mysql's "-u root -pVALUE": the value glued to the flag
        r"|\s-password(?:\s{1,3}|=)|\s--password(?:\s{1,3}|=)|\s--passwd(?:\s{1,3}|=))"
        r"(?P<val>[^\s\"'`$%{<]{4,64})(?=\s|$)",
        gate=("-p", "-password", "--passw"),
    ),
    _password_pattern(  # "ssh in with password VALUE", "log in using the password VALUE"
        "password_after_with",
        rf"(?<![A-Za-z])(?:with|using|use)\s{{1,3}}(?:the\s{{1,3}}|a\s{{1,3}})?(?:{_PW_STRONG})"
        # (not hyphenated words: "with password Manager-generated values")
        rf"(?![A-Za-z])\s{{1,3}}(?![A-Za-z]+(?:-[A-Za-z]+)+(?:[\s.,;:!?]|$)){_PW_VALUE}",
    ),
    _password_pattern(  # "the login for the router is admin / VALUE", "credentials: root/VALUE"
        "login_pair",
        rf"(?<![A-Za-z])(?:log[ -]?in|sign[ -]?in|credentials?|creds){_PW_QUALIFIER}"
        rf"(?:{_PW_PROSE_LINK}|{_PW_ASSIGN_LINK})[^\s/:=]{{1,64}}\s{{0,2}}/\s{{0,2}}{_PW_VALUE}",
        gate=("login", "log in", "log-in", "signin", "sign in", "sign-in", "cred"),
    ),
    _password_pattern(  # sixteen letters in four groups, as Google shows them
        "google_app_password",
        rf"(?<![A-Za-z])app[ \-]?passwords?{_PW_QUALIFIER}"
        rf"(?:{_PW_PROSE_LINK}|{_PW_ASSIGN_LINK}|\s{{1,3}})[\"'`]?"
        r"(?P<val>[a-z]{4} [a-z]{4} [a-z]{4} [a-z]{4})(?![A-Za-z])",
        score=0.85,
        gate=("app password", "app-password", "apppassword"),
        check="placeholder",
    ),
    ExtraPattern(
        id="token_prose",
        entity="credential_assignment",
        regex=re.compile(
            rf"(?<![A-Za-z])(?:{_TOKEN_WORDS})s?(?![A-Za-z]){_PW_QUALIFIER}{_PW_CLAUSE}"
            rf"{_PW_PROSE_LINK}{_TOKEN_VALUE}",
            _I,
        ),
        group="val",
        score=0.8,
        check="token",
        priority=5,
        gate=("token", "key", "secret"),
    ),
    ExtraPattern(
        id="token_korean",
        entity="credential_assignment",
        regex=re.compile(rf"{_KO_TOKEN}\s*(?:은|는|이|가)?\s*(?:[:=]\s*)?{_TOKEN_VALUE}"),
        group="val",
        score=0.8,
        check="token",
        priority=5,
        gate=("토큰", "키"),
    ),
    ExtraPattern(
        id="password_short_assignment",
        entity="password_in_text",
        regex=re.compile(
            rf"(?<![A-Za-z])(?:{_PW_WEAK})(?![A-Za-z]){_PW_ASSIGN_LINK}{_PW_VALUE}", _I
        ),
        group="val",
        score=0.75,
        check="password",
        priority=2,
        gate=("pw", "pass", "pin"),
    ),
    ExtraPattern(
        id="pin_code",
        entity="password_in_text",
        regex=re.compile(
            r"(?<![A-Za-z])(?:PIN|PIN code|pin code|passcode"
            rf"|(?i:(?:{_ACCESS_CODE_WORDS}) code)){_PW_QUALIFIER}\s*(?:is|:|=)?\s*"
            r"(?P<val>\d{4,8})(?!\d)"
        ),
        group="val",
        score=0.75,
        check="placeholder",
        priority=2,
        gate=("pin", "passcode", *(f"{w} code" for w in _ACCESS_CODE_WORDS.split("|"))),
    ),
    ExtraPattern(
        id="password_korean",
        entity="password_in_text",
        regex=re.compile(rf"{_KO_PW}\s*(?:는|은|가|:|=|->)?\s*[:=]?\s*(?P<val>[!-~]{{4,64}})"),
        group="val",
        score=0.82,
        check="password",
        priority=2,
        gate=_KO_GATE,
    ),
    ExtraPattern(
        id="password_korean_set_to",
        entity="password_in_text",
        regex=re.compile(rf"(?P<val>[!-~]{{4,64}})\s*(?:을|를|으로|로)?\s*{_KO_PW}\s*(?:으로|로)"),
        group="val",
        score=0.8,
        check="password",
        priority=2,
        gate=_KO_GATE,
    ),
)

#: Words that mark a value as a placeholder, not a credential (as a whole value, or as a
#: ``-``/``_``/``.``-separated part of it).
PLACEHOLDER_WORDS = frozenset(
    {
        "your",
        "insert",
        "enter",
        "replace",
        "fake",
        "dummy",
        "sample",
        "example",
        "placeholder",
        "redacted",
        "changeme",
        "todo",
        "tbd",
        "xxx",
        "xxxx",
        "null",
        "none",
        "undefined",
        "empty",
        "hidden",
        "masked",
        "secret",
        "password",
        "passwd",
        "token",
        "here",
        "omitted",
        "removed",
    }
)
_PLACEHOLDER_WHOLE = re.compile(r"^(?:x+|\*+|\.+|#+|-+|_+|•+|<[^>]*>|\[[^\]]*\]|\{[^}]*\})$", _I)
_PARTS = re.compile(r"[-_.\s]+")


def is_placeholder(value: str) -> bool:
    """Whether ``value`` is a placeholder (``<token>``, ``***``, ``insert_key_here``, ...)."""
    v = value.strip("\"'`")
    if not v or _PLACEHOLDER_WHOLE.match(v):
        return True
    low = v.lower()
    if low in PLACEHOLDER_WORDS:
        return True
    return any(part in PLACEHOLDER_WORDS for part in _PARTS.split(low) if part)
