"""Personal data: the false-alarm and miss classes of issue 10 item 4, English and Korean.

Every case is written for this file (none comes from a corpus). False-alarm classes: product
and order ids read as phone numbers, ISO dates, identifiers glued into longer tokens,
cuisines / breeds read as nationality, business addresses read as home addresses, health
words in descriptions of things. Miss classes: a date of birth, a password told in prose,
other countries' national ids, mental-health / substance-use / sexual-violence /
gender-identity disclosures, illness told in Korean, Art. 9 categories stated plainly.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from auditor.config import load_settings
from auditor.detectors import pii_prose
from auditor.detectors.base import DetectContext, Detection, MemoryView
from auditor.detectors.pii import PiiDetector
from auditor.detectors.special_categories import SpecialCategoryDetector

CTX = DetectContext(now=datetime(2026, 6, 1, tzinfo=UTC), settings=load_settings())
#: The threshold the MA-PII rules apply (MA-PII-009 / 010 use 0.5).
RULE_MIN_SCORE = 0.4


@pytest.fixture(scope="module")
def pii() -> PiiDetector:
    return PiiDetector({})


@pytest.fixture(scope="module")
def special() -> SpecialCategoryDetector:
    return SpecialCategoryDetector({})


def view(text: str) -> MemoryView:
    return MemoryView(memory_id="m1", subject="user:t", fact=text, trust_tier="user")


def reported(pii: PiiDetector, text: str) -> list[tuple[str, str, Detection]]:
    """(entity, value, detection) the rules report (score >= the rules' threshold)."""
    out = []
    for d in pii.analyze(view(text), CTX):
        if d.score >= RULE_MIN_SCORE:
            span = d.spans[0]
            out.append((d.entity, text[span.start : span.end], d))
    return out


def entities(pii: PiiDetector, text: str) -> set[str]:
    return {entity for entity, _, _ in reported(pii, text)}


def categories(special: SpecialCategoryDetector, text: str) -> set[str]:
    return {d.entity for d in special.analyze(view(text), CTX)}


# -- phone numbers: ids, dates and tokens are not phones ------------------------------------

NOT_PHONES = [
    "Order 5930184726 left the warehouse this morning.",
    "SKU 8841920375 is back in stock.",
    "Item #7719304852 was removed from the basket.",
    "Product 6620183945 has a new price.",
    "주문번호 7482910365 배송이 시작됨",
    "상품번호 9182736450 재입고 알림을 신청함",
    "Deploy started 2025-12-30T23:59:59Z and ended 2025-12-31 00:10.",
    "The report covers 2024-02-29 to 2024-03-31.",
    "Trace id 123e4567-e89b-12d3-a456-426614174000 in the gateway log.",
    "Artifact sha 9f8e7d6c5b4a39281706f5e4d3c2b1a0 uploaded.",
    "Fetched https://shop.example.net/orders/5930184726/invoice.pdf for the user.",
    "Mirror at /srv/data/users/8203947156/export.zip is ready.",
    "Batch 4415920387 processed without errors.",
]


@pytest.mark.parametrize("text", NOT_PHONES)
def test_ids_dates_and_tokens_are_not_phone_numbers(pii: PiiDetector, text: str) -> None:
    assert "PHONE_NUMBER" not in entities(pii, text)


PHONES = [
    ("Call me at 4155552671 after six.", "4155552671"),
    ("Her mobile: 7700900123", "7700900123"),
    ("연락처 010-2345-6789로 문자 주세요", "010-2345-6789"),
    ("Reach him on +44 7700 900123.", "+44 7700 900123"),
    ("전화번호는 01023456789 입니다", "01023456789"),
]


@pytest.mark.parametrize(("text", "value"), PHONES)
def test_phone_numbers_with_phone_words_or_formatting_stay(
    pii: PiiDetector, text: str, value: str
) -> None:
    assert ("PHONE_NUMBER", value) in {(e, v) for e, v, _ in reported(pii, text)}


# -- e-mail addresses inside longer tokens --------------------------------------------------

NOT_EMAILS = [
    "git clone git@gitlab.com:team/service.git before the review",
    "Opened https://user@files.example.org/share/report for the audit.",
]


@pytest.mark.parametrize("text", NOT_EMAILS)
def test_email_inside_a_longer_token_is_not_an_email(pii: PiiDetector, text: str) -> None:
    assert "EMAIL_ADDRESS" not in entities(pii, text)


def test_a_plain_email_address_is_still_found(pii: PiiDetector) -> None:
    assert ("EMAIL_ADDRESS", "mina.park@example.com") in {
        (e, v) for e, v, _ in reported(pii, "Her e-mail is mina.park@example.com.")
    }


# -- nationality words naming things --------------------------------------------------------

NOT_ORIGIN = [
    "Craving Korean food after the long hike.",
    "Adopted a German shepherd from the shelter.",
    "Book a table at a Thai restaurant for Friday.",
    "Wants an Italian recipe for the party.",
    "Find a place that serves Mexican near the station.",
    "Flying with American Airlines next week.",
    # plurals of the thing nouns
    "Our neighbours breed Irish Setters and English Pointers.",
    "Two Scottish Collies live next door.",
    "The farm keeps English Mastiffs and Thai pastries are sold at the gate.",
]


@pytest.mark.parametrize("text", NOT_ORIGIN)
def test_cuisines_breeds_and_brands_are_not_origin(pii: PiiDetector, text: str) -> None:
    assert "NRP" not in entities(pii, text)


@pytest.mark.parametrize(
    "text", ["User is Vietnamese and moved to Busan last year.", "My parents are Ethiopian."]
)
def test_a_persons_nationality_is_still_found(pii: PiiDetector, text: str) -> None:
    assert "NRP" in entities(pii, text)


# -- business and venue addresses -----------------------------------------------------------

BUSINESS_ADDRESSES = [
    "The company headquarters is at 410 Terry Avenue North, Seattle.",
    "Our office moved to 88 Queen Street, Suite 400.",
    "The restaurant is at 27 Harbour Road.",
    "The venue is 1200 Market Street, Philadelphia.",
    "본사 주소는 서울 중구 세종대로 110이다.",
    "매장 위치: 부산 해운대구 해운대로 570",
    # an address block whose company line stands above the street (an e-mail footer)
    "Thanks for your order!\nNorthwind Traders Ltd.\n\n415 Harbour Road  Unit 7  Portsmouth",
    "Unsubscribe | Contact Support\n77 Quayside Street  Floor 3  Leith",
    # a listing in a search tool's record, not anyone's home
    '{"address": "18 Orchard Lane", "furnished": "True", "number_of_baths": "2"}',
]


@pytest.mark.parametrize("text", BUSINESS_ADDRESSES)
def test_business_addresses_are_not_home_addresses(pii: PiiDetector, text: str) -> None:
    assert "STREET_ADDRESS" not in entities(pii, text)


HOME_ADDRESSES = [
    "User lives at 42 Elm Street, Springfield.",
    "She lives above the bakery at 14 Mill Lane, Leeds.",
    "My home address is 7 Birch Road, Apt. 3.",
    "우리 집은 서울 마포구 월드컵로 25이다.",
    "Ship the parcel to:\nMira Lindqvist\n\n14 Elm Grove\nBristol BS8 2QT",
    "I live at Hämeentie 12, Helsinki.",
]


def test_a_short_street_ending_needs_a_compound(pii: PiiDetector) -> None:
    """Finnish "tie" ends "Hämeentie", not the French "Partie 1" or "Sortie 3"."""
    assert "STREET_ADDRESS" not in entities(pii, "Écrivez : Partie 1 [intro] et Partie 2.")
    assert "STREET_ADDRESS" not in entities(pii, "Prenez la Sortie 3 vers Lyon.")


def test_context_words_open_a_word(pii: PiiDetector) -> None:
    """Presidio's context word "sent" stands inside "Senate": no support for a weak shape."""
    text = "He represented the first of 40 State Senate districts for a decade."
    assert "STREET_ADDRESS" not in entities(pii, text)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("EMAIL_FROM: Upwork <donotreply@upwork.com>", False),
        ("Write to support@acme.io for help.", False),
        ("Alerts come from alerts2@monitor.io.", False),
        ("Her e-mail is dana.support@gmail.com.", True),  # a name with a role word
        ("My e-mail address is info@hanbakery.kr.", True),  # a role address claimed
    ],
)
def test_role_mailboxes_are_no_one_s_address(pii: PiiDetector, text: str, found: bool) -> None:
    assert ("EMAIL_ADDRESS" in entities(pii, text)) is found


@pytest.mark.parametrize("text", HOME_ADDRESSES)
def test_home_addresses_are_found_even_near_a_business_word(pii: PiiDetector, text: str) -> None:
    assert "STREET_ADDRESS" in entities(pii, text)


# -- dates of birth --------------------------------------------------------------------------

DATES_OF_BIRTH = [
    ("My date of birth is 1987-04-12.", "1987-04-12"),
    ("She was born on March 3, 1990.", "March 3, 1990"),
    ("DOB: 12/05/1985", "12/05/1985"),
    ("His birthday is 14 July 1979.", "14 July 1979"),
    ("Birthday is May 5th, send a card.", "May 5th"),
    ("생년월일: 1990년 3월 5일", "1990년 3월 5일"),
    ("제 생일은 5월 14일이에요.", "5월 14일"),
]


@pytest.mark.parametrize(("text", "value"), DATES_OF_BIRTH)
def test_date_of_birth_is_found_with_the_date_as_span(
    pii: PiiDetector, text: str, value: str
) -> None:
    hits = [(v, d) for e, v, d in reported(pii, text) if e == "DATE_OF_BIRTH"]
    assert [v for v, _ in hits] == [value]
    _, detection = hits[0]
    assert value not in detection.reason
    assert value not in repr(dict(detection.details))


@pytest.mark.parametrize(
    "text",
    [
        "Plan a birthday party for the team on 2026-02-14.",
        "Signed the lease on 2025-08-01.",
        "생일 축하 메시지를 2026년 1월 3일에 보내기",
    ],
)
def test_dates_not_attached_to_a_birth_are_not_dates_of_birth(pii: PiiDetector, text: str) -> None:
    assert "DATE_OF_BIRTH" not in entities(pii, text)


# -- passwords told in prose -----------------------------------------------------------------

PASSWORDS = [
    ("My password is Tr0ub4dor&3", "Tr0ub4dor&3"),
    ("my bank PIN is 4821", "4821"),
    ("The user's email password is sunflower88.", "sunflower88"),
    ("Door code: 7788#", "7788#"),
    ("비밀번호는 hello1234 이야", "hello1234"),
    ("제 비밀번호는 qwer1234입니다.", "qwer1234"),
    ("현관 비밀번호는 1234*입니다", "1234*"),
]


@pytest.mark.parametrize(("text", "value"), PASSWORDS)
def test_password_in_prose_is_found_with_the_value_as_span(
    pii: PiiDetector, text: str, value: str
) -> None:
    hits = [(v, d) for e, v, d in reported(pii, text) if e == "PASSWORD"]
    assert [v for v, _ in hits] == [value]
    _, detection = hits[0]
    assert value not in detection.reason
    assert value not in repr(dict(detection.details))


NOT_PASSWORDS = [
    "The admin password is required to change this setting.",
    "Password is stored in the team vault.",
    "Set the password to ${DB_PASSWORD} in the template.",
    "My password is ******** (hidden).",
    "비밀번호 변경 방법을 물어봄",
    "Password: <your password here>",
]


@pytest.mark.parametrize("text", NOT_PASSWORDS)
def test_words_about_passwords_are_not_passwords(pii: PiiDetector, text: str) -> None:
    assert "PASSWORD" not in entities(pii, text)


# -- other countries' national identifiers (Presidio's country recognizers) -----------------


@pytest.mark.parametrize(
    ("text", "entity"),
    [
        ("User's PESEL is 90010112349.", "PL_PESEL"),
        ("Her Aadhaar number is 2345 6789 0124.", "IN_AADHAAR"),
    ],
)
def test_other_countries_ids_are_found(pii: PiiDetector, text: str, entity: str) -> None:
    assert entity in entities(pii, text)


# -- special categories: miss classes ---------------------------------------------------------

SPECIAL_POSITIVES = [
    ("I've been having panic attacks since the accident.", "health"),
    ("He was diagnosed with PTSD after his deployment.", "health"),
    ("I started therapy last month.", "health"),
    ("She's been sober for two years.", "health"),
    ("I'm struggling with an addiction to painkillers.", "health"),
    ("He was physically abused as a child.", "health"),
    ("저는 당뇨가 있어서 단 음식을 피해요.", "health"),
    ("작년에 암 진단을 받았어요.", "health"),
    ("그는 공황장애를 앓고 있다.", "health"),
    ("요즘 정신과에 다니고 있어요.", "health"),
    ("I was sexually assaulted in college.", "sexual_orientation"),
    ("작년에 성추행을 당했다.", "sexual_orientation"),
    ("I'm transgender and started HRT in March.", "sexual_orientation"),
    ("I'm in the middle of my transition.", "sexual_orientation"),
    ("My pronouns are they/them.", "sexual_orientation"),
    ("He married his husband last summer.", "sexual_orientation"),
    ("I'm a man and my husband works nights.", "sexual_orientation"),
    ("그는 남자친구와 함께 산다.", "sexual_orientation"),
    ("I joined the nurses' union last year.", "trade_union"),
    ("저는 민주노총 조합원이에요.", "trade_union"),
    ("저는 정의당 당원입니다.", "political_opinion"),
    ("The user's face embedding is kept for unlock.", "biometric"),
    ("사용자의 홍채 정보를 등록했다.", "biometric"),
]


@pytest.mark.parametrize(("text", "category"), SPECIAL_POSITIVES)
def test_special_category_disclosures_are_found(
    special: SpecialCategoryDetector, text: str, category: str
) -> None:
    assert category in categories(special, text)


# -- special categories: descriptions of things name nobody's health -------------------------

DESCRIPTIONS = [
    "This app helps patients track their insulin doses.",
    "The paper studies depression in adolescents.",
    "Our platform offers therapy session booking for clinics.",
    "The SDK extracts face embeddings from uploaded photos.",
    "우울증 치료제 시장이 빠르게 커지고 있다는 기사",
    "당뇨병 환자를 위한 혈당 관리 앱을 개발 중이다.",
    "My transition to the platform team starts in May.",
]


@pytest.mark.parametrize("text", DESCRIPTIONS)
def test_descriptions_of_things_are_not_special_data(
    special: SpecialCategoryDetector, text: str
) -> None:
    assert categories(special, text) == set()


@pytest.mark.parametrize(
    "text",
    [
        "I use an app to log my insulin doses.",
        "제가 쓰는 앱에 우울증 약 복용 시간을 기록해요.",
    ],
)
def test_a_person_in_a_description_sentence_keeps_the_finding(
    special: SpecialCategoryDetector, text: str
) -> None:
    assert "health" in categories(special, text)


# -- linear time on hostile input ---------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "password is " * 3000,
        "born on 1" * 3000,
        "my " * 5000 + "password",
        "1" * 20000,
        "저는 " * 5000,
        "Korean " * 4000,
    ],
)
def test_new_patterns_stay_fast_on_long_repetitive_text(
    pii: PiiDetector, special: SpecialCategoryDetector, text: str
) -> None:
    started = time.perf_counter()
    pii_prose.DateOfBirthRecognizer("en").analyze(text, ["DATE_OF_BIRTH"])
    pii_prose.PasswordRecognizer("en").analyze(text, ["PASSWORD"])
    special.analyze(view(text), CTX)
    assert time.perf_counter() - started < 2.0


@pytest.mark.parametrize(
    "text",
    [
        "We do not discriminate on the basis of race, religion, age, disability or veteran status.",
        "All are welcome regardless of ethnicity, religion, disability, sexual orientation or age.",
        "인종, 성별, 종교, 장애, 나이를 이유로 한 차별을 금지합니다.",
    ],
)
def test_a_list_of_protected_attributes_is_no_one_s_data(
    special: SpecialCategoryDetector, text: str
) -> None:
    assert not categories(special, text)


def test_a_person_in_the_list_keeps_the_finding(special: SpecialCategoryDetector) -> None:
    text = "She was turned down because of her age, disability and religion."
    assert "health" in categories(special, text)
