"""Data for :mod:`auditor.detectors.pii`: context words, street vocabularies, group names.

Everything here is plain data (tuples of words and regex fragments); the detector module
compiles it once. The lists are built from public conventions (USPS Publication 28 street
suffixes, European street-name endings, ISO country demonyms, Korean address and ID
vocabulary), not from any evaluation corpus.
"""

from __future__ import annotations

from pathlib import Path

import yaml

__all__ = [
    "COUNTRY_GATE_STOPWORDS",
    "COUNTRY_IDS",
    "COUNTRY_ID_ENTITIES",
    "ADDRESS_CONTEXT",
    "ADDRESS_CONTEXT_NARROW",
    "AMBIGUOUS_DEMONYMS",
    "CARD_CONTEXT",
    "DEFAULT_ENTITIES",
    "DEMONYMS",
    "DEMONYM_NOUNS",
    "DRIVER_LICENSE_CONTEXT",
    "NOT_STREET_WORDS",
    "EMAIL_CONTEXT",
    "FRN_TYPE_WORDS",
    "IBAN_CONTEXT",
    "KO_ADDRESS_UNITS",
    "KO_NRP_COUNTRIES",
    "KO_NRP_WORDS",
    "KR_BRN_CONTEXT",
    "KR_DRIVER_LICENSE_CONTEXT",
    "KR_FRN_CONTEXT",
    "KR_PASSPORT_CONTEXT",
    "KR_RRN_CONTEXT",
    "LANGUAGE_USE_AFTER",
    "LANGUAGE_USE_BEFORE",
    "NAME_LIKE_GROUPS",
    "NON_PHONE_ID_WORDS",
    "NRP_CONTEXT",
    "NRP_PERSON_CUES",
    "PHONE_CONTEXT",
    "PHONE_TYPE_WORDS",
    "POLITICAL_GROUPS",
    "RELIGIOUS_GROUPS",
    "RRN_TYPE_WORDS",
    "STREET_COMPOUND_ENDINGS",
    "STREET_PREFIX_TYPES",
    "STREET_SUFFIXES_STRONG",
    "STREET_SUFFIXES_WEAK",
    "UNIT_WORDS",
    "US_DRIVER_LICENSE_CONTEXT",
]


# fmt: off
#: Entities the ``pii`` detector looks for when a rule does not name its own.
def _country_ids() -> tuple[tuple[str, str], ...]:
    """(Presidio recognizer class, entity) rows of ``data/pii_country_ids.yaml``."""
    path = Path(__file__).with_name("data") / "pii_country_ids.yaml"
    rows = yaml.safe_load(path.read_text(encoding="utf-8"))["recognizers"]
    return tuple((str(r["recognizer"]), str(r["entity"])) for r in rows)


#: Presidio's country identifier recognizers run beside the US / UK / Korean ones.
COUNTRY_IDS = _country_ids()
COUNTRY_ID_ENTITIES = tuple(entity for _, entity in COUNTRY_IDS)
#: Presidio context words too common to decide whether a country recognizer runs.
COUNTRY_GATE_STOPWORDS = frozenset(
    str(w).lower()
    for w in yaml.safe_load(
        (Path(__file__).with_name("data") / "pii_country_ids.yaml").read_text(encoding="utf-8")
    )["gate_stopwords"]
)

DEFAULT_ENTITIES: tuple[str, ...] = (
    "EMAIL_ADDRESS",
    "PHONE_NUMBER",
    "CREDIT_CARD",
    "IBAN_CODE",
    "IP_ADDRESS",
    "US_SSN",
    "US_ITIN",
    "US_PASSPORT",
    "US_DRIVER_LICENSE",
    "DRIVER_LICENSE",
    "US_BANK_NUMBER",
    "UK_NINO",
    "CRYPTO",
    "KR_RRN",
    "KR_FRN",
    "KR_BRN",
    "KR_DRIVER_LICENSE",
    "KR_PASSPORT",
    "STREET_ADDRESS",
    "NRP",
    "DATE_OF_BIRTH",
    "PASSWORD",
    *COUNTRY_ID_ENTITIES,
)

# -- context words (English and Korean; matched as substrings of lower-cased tokens) --------

EMAIL_CONTEXT = ("email", "e-mail", "mail", "contact", "이메일", "메일", "연락처")
PHONE_CONTEXT = (
    "phone", "telephone", "tel", "mobile", "cell", "call", "fax", "office", "desk", "home",
    "contact", "reach", "sms", "whatsapp", "message", "answer", "dial", "ring", "voicemail",
    "landline",
    "전화", "휴대폰", "핸드폰", "연락처", "연락", "문자",
)
CARD_CONTEXT = (
    "card", "credit", "debit", "visa", "mastercard", "amex", "discover", "jcb", "maestro",
    "payment", "charge", "billing", "cc", "카드", "신용카드", "체크카드", "결제",
)
IBAN_CONTEXT = ("iban", "bank", "account", "transfer", "wire", "계좌", "은행")
US_DRIVER_LICENSE_CONTEXT = (
    "driver", "license", "licence", "permit", "driving", "dl#", "dmv",
)
#: English licence words only: Korean licence numbers have a checked format of their own.
DRIVER_LICENSE_CONTEXT = ("driver", "license", "licence", "driving")
KR_RRN_CONTEXT = (
    "주민등록번호", "주민번호", "주민등록", "rrn", "resident registration",
    "korean rrn", "resident number",
)
KR_FRN_CONTEXT = (
    "외국인등록번호", "외국인번호", "외국인등록", "frn", "foreigner registration",
    "alien registration", "korean frn",
)
KR_BRN_CONTEXT = (
    "사업자등록번호", "사업자번호", "사업자", "brn", "business registration",
    "business number", "tax registration",
)
KR_DRIVER_LICENSE_CONTEXT = (
    "운전면허", "운전면허번호", "면허번호", "면허", "driver", "license", "licence",
)
KR_PASSPORT_CONTEXT = ("여권", "여권번호", "passport")

#: Words that name the *type* of a Korean resident number. An RRN-shaped value next to an FRN
#: word (or the reverse) that also fails its checksum is a mistyped or made-up value.
RRN_TYPE_WORDS = ("주민등록번호", "주민번호", "rrn", "resident registration number")
FRN_TYPE_WORDS = (
    "외국인등록번호", "외국인번호", "frn", "foreigner registration number",
    "alien registration number",
)

#: Words naming a number as a phone number, and words naming it as another identifier: a
#: phone-shaped number after the latter (and none of the former) is not a phone number.
PHONE_TYPE_WORDS = (
    "phone", "tel", "mobile", "cell", "call", "fax", "전화", "휴대폰", "핸드폰", "연락",
)
NON_PHONE_ID_WORDS = (
    "주민등록번호", "주민번호", "외국인등록번호", "외국인번호", "사업자등록번호", "사업자번호",
    "면허번호", "운전면허", "여권", "계좌", "카드번호", "passport", "licen", "ssn",
    "social security", "account", "iban", "card", "rrn", "frn", "brn", "tax id", "invoice",
    "order no", "order number", "tracking", "serial", "isbn",
    # product, order and ticket identifiers
    "order", "sku", "product", "item", "#", "ticket", "receipt", "confirmation",
    "transaction", "reference", "ref.", "ref:", "part no", "model no", "catalog",
    "주문", "상품", "제품", "품번", "송장", "일련번호", "모델번호", "예약번호", "티켓", "영수증",
)

ADDRESS_CONTEXT = (
    "address", "addr", "live", "lives", "lived", "living", "reside", "residence",
    "moved", "move", "located", "location", "office", "headquarter", "ship", "send", "sent",
    "deliver", "mailing", "mailed", "billing", "postal", "street", "road", "avenue", "meet",
    "return",
    "drop", "apartment", "home", "house", "visit",
    "주소", "거주", "살고", "사는", "배송", "우편", "집", "이사",
)
#: Stronger cues for weak address shapes ("Name 12", "12 Name"): someone's place is meant.
ADDRESS_CONTEXT_NARROW = (
    "address", "addr", "live", "lives", "lived", "living", "reside", "residence", "moved",
    "located", "headquarter", "ship", "deliver", "mailing", "mailed", "billing", "postal",
    "sent",
    "send", "return", "meet", "drop", "street",
    "주소", "거주", "살고", "사는", "배송", "우편", "이사",
)
#: Words that make a sentence about a person (for NRP mentions).
NRP_PERSON_CUES = (
    r"\b(?:i|i'm|im|me|my|mine|myself|we|we're|our|ours|us|he|she|him|her|his|hers|they"
    r"|them|their|user|user's|family|parents|mother|father|mom|mum|dad|wife|husband|son"
    r"|daughter|brother|sister|partner|spouse|friend|friends|boyfriend|girlfriend|colleague"
    r"|neighbou?r|grandparents?|citizen|citizenship|nationality|born|descent|immigrant"
    r"|customer|client|patient|employee)\b"
    r"|사용자|저는|제가|나는|내가|우리|그는|그녀|가족|부모|아내|남편|친구|국적"
)
NRP_CONTEXT = (
    "nationality", "citizen", "citizenship", "ethnicity", "religion", "faith", "party",
    "국적", "민족", "종교", "정당",
)

# -- street addresses ----------------------------------------------------------------------

#: Street suffixes that are not ordinary words (any case): USPS Pub. 28 C1 common forms.
STREET_SUFFIXES_STRONG = (
    "street", "st", "str", "avenue", "ave", "av", "road", "rd", "lane", "ln", "drive", "dr",
    "boulevard", "blvd", "court", "ct", "crescent", "cres", "highway", "hwy", "parkway",
    "pkwy", "terrace", "ter", "plaza", "plz", "circle", "cir", "expressway", "expy",
    "freeway", "fwy", "turnpike", "tpke", "trail", "trl", "alley", "aly", "causeway",
    "cswy", "square", "sq", "place", "pl", "close", "mews", "quay", "wharf", "esplanade",
    "parade", "pde", "motorway", "stravenue", "throughway", "trafficway", "underpass",
    "overpass", "viaduct", "crossing", "xing", "crossroad", "junction", "jct", "extension",
    "ext", "gardens", "gdns", "heights", "hts", "hollow", "landing", "manor", "meadows",
    "orchard", "passage", "pike", "ridge", "skyway", "spur", "summit", "village", "vlg",
    "ville", "vista", "way", "wy", "row", "walk",
)
#: Suffixes that are also ordinary words: only capitalised after capitalised names.
STREET_SUFFIXES_WEAK = (
    "Branch", "Bridge", "Brook", "Brooks", "Burg", "Bypass", "Camp", "Canyon", "Cape",
    "Center", "Centre", "Cliff", "Club", "Common", "Corner", "Course", "Cove", "Creek",
    "Crest", "Curve", "Dale", "Dam", "Divide", "Estate", "Estates", "Fall", "Falls",
    "Ferry", "Field", "Fields", "Flat", "Flats", "Ford", "Forest", "Forge", "Forges", "Fork",
    "Forks", "Fort", "Garden", "Gateway", "Glen", "Green", "Greens", "Grove", "Harbor",
    "Harbour", "Haven", "Hill", "Hills", "Inlet", "Island", "Isle", "Key", "Knoll", "Lake",
    "Lakes", "Land", "Light", "Loaf", "Lock", "Lodge", "Loop", "Mall", "Meadow", "Mill",
    "Mills", "Mission", "Mount", "Mountain", "Neck", "Oval", "Park", "Pass", "Path", "Pine",
    "Pines", "Plain", "Plains", "Point", "Points", "Port", "Prairie", "Radial", "Ramp",
    "Ranch", "Rapid", "Rapids", "Rest", "River", "Route", "Run", "Shoal", "Shore", "Shores",
    "Spring", "Springs", "Station", "Stream", "Track", "Trace", "Tunnel", "Union", "Valley",
    "View", "Views", "Wall", "Well", "Wells",
)
#: Endings of one-word street names in European languages (Danish vej, Swedish gatan,
#: Finnish katu, German strasse, Dutch straat, ...), followed by a house number.
STREET_COMPOUND_ENDINGS = (
    "vej", "vejen", "gade", "gaden", "stræde", "strædet", "gatan", "gata", "vägen", "väg",
    "gränd", "backe", "torget", "torg", "torv", "veien", "vei", "vegen", "veg", "vegur",
    "braut", "stígur", "stien", "bakken", "katu", "kuja", "tie", "polku", "kaari", "strasse",
    "straße", "str", "gasse", "weg", "wei", "allee", "damm", "ufer", "platz", "markt",
    "straat", "laan", "steeg", "gracht", "plein", "kade", "singel", "utca", "iela", "ulica",
    "ulice", "cesta", "tänav", "gården", "garden",
)
#: Street-type words written before the name (Rua X 12, ul. X 5, 31 rue de X).
STREET_PREFIX_TYPES = (
    "rua", "avenida", "av.", "c/", "avda.", "calle", "carrer", "avinguda", "viale", "piazza",
    "corso", "largo", "strada", "rue", "boulevard", "bd", "chemin", "allée", "impasse",
    "quai", "praça", "travessa", "estrada", "rodovia", "paseo", "camino", "ul.", "ulica",
    "aleja", "plac", "odos", "leoforos", "jalan", "jl.",
)
#: Words that make a weak "Name 12" / "12 Name" shape something else: dates, times, units,
#: products and document parts.
NOT_STREET_WORDS = (
    "jan", "january", "feb", "february", "mar", "march", "apr", "april", "may", "jun",
    "june", "jul", "july", "aug", "august", "sep", "sept", "september", "oct", "october",
    "nov", "november", "dec", "december", "mon", "monday", "tue", "tues", "tuesday", "wed",
    "wednesday", "thu", "thur", "thurs", "thursday", "fri", "friday", "sat", "saturday",
    "sun", "sunday", "am", "pm", "utc", "gmt", "est", "pst", "cet", "kst", "day", "days",
    "week", "weeks", "month", "months", "year", "years", "hour", "hours", "minute",
    "minutes", "second", "seconds", "chapter", "page", "pages", "section", "part", "step",
    "steps", "level", "season", "episode", "volume", "vol", "issue", "item", "items",
    "figure", "table", "article", "version", "release", "build", "python", "java", "node",
    "windows", "macos", "ios", "android", "ubuntu", "iphone", "ipad", "pixel", "galaxy",
    "model", "series", "gen", "grade", "class", "unit", "units", "room", "floor", "gate",
    "terminal", "platform", "seat", "row", "flight", "bus", "route", "line", "team",
    "player", "players", "people", "persons", "users", "times", "points", "percent", "usd",
    "eur", "krw", "gbp", "dollars", "euros", "won", "kg", "km", "mb", "gb", "tb", "ms",
    "px", "x", "vs", "and", "or", "the", "of", "in", "on", "at", "to", "for", "with", "by",
    "from", "is", "are", "was", "were", "a", "an", "i", "we", "you", "he", "she", "they",
)
#: Apartment / suite designators (a unit number alone is a strong address part).
UNIT_WORDS = ("apt.", "apt", "apartment", "suite", "ste.")
#: Korean address units: road (로, 길), neighbourhood (동), building / flat (동 ... 호).
KO_ADDRESS_UNITS = ("특별시", "광역시", "특별자치시", "특별자치도", "도", "시", "군", "구")

# -- nationality, religious and political groups (NRP) --------------------------------------

#: Nationality adjectives (ISO 3166 countries and common nations); the plural "-s" form is
#: added by the detector where English uses it (Americans, Saudis, ...).
DEMONYMS = (
    "Afghan", "Albanian", "Algerian", "American", "Andorran", "Angolan", "Argentine",
    "Argentinian", "Armenian", "Australian", "Austrian", "Azerbaijani", "Bahamian",
    "Bahraini", "Bangladeshi", "Barbadian", "Belarusian", "Belgian", "Belizean", "Beninese",
    "Bhutanese", "Bolivian", "Bosnian", "Botswanan", "Brazilian", "British", "Bruneian",
    "Bulgarian", "Burkinabe", "Burmese", "Burundian", "Cambodian", "Cameroonian",
    "Canadian", "Cape Verdean", "Chadian", "Chilean", "Chinese", "Colombian", "Congolese",
    "Costa Rican", "Croatian", "Cuban", "Cypriot", "Czech", "Danish", "Djiboutian",
    "Dominican", "Dutch", "Ecuadorian", "Egyptian", "Emirati", "English", "Eritrean",
    "Estonian", "Ethiopian", "Fijian", "Filipino", "Finnish", "French", "Gabonese",
    "Gambian", "Georgian", "German", "Ghanaian", "Greek", "Greenlandic", "Grenadian",
    "Guatemalan", "Guinean", "Guyanese", "Haitian", "Honduran", "Hungarian", "Icelandic",
    "Indian", "Indonesian", "Iranian", "Iraqi", "Irish", "Israeli", "Italian", "Ivorian",
    "Jamaican", "Japanese", "Jordanian", "Kazakh", "Kazakhstani", "Kenyan", "Korean",
    "Kosovar", "Kuwaiti", "Kyrgyz", "Lao", "Laotian", "Latvian", "Lebanese", "Liberian",
    "Libyan", "Lithuanian", "Luxembourgish", "Macedonian", "Malagasy", "Malawian",
    "Malaysian", "Maldivian", "Malian", "Maltese", "Mauritanian", "Mauritian", "Mexican",
    "Moldovan", "Monegasque", "Mongolian", "Montenegrin", "Moroccan", "Mozambican",
    "Namibian", "Nepalese", "Nepali", "New Zealander", "Nicaraguan", "Nigerian",
    "Nigerien", "North Korean", "Norwegian", "Omani", "Pakistani", "Palestinian",
    "Panamanian", "Paraguayan", "Peruvian", "Portuguese", "Puerto Rican", "Qatari",
    "Romanian", "Russian", "Rwandan", "Salvadoran", "Samoan", "Saudi", "Scottish",
    "Senegalese", "Serbian", "Seychellois", "Singaporean", "Slovak", "Slovakian",
    "Slovenian", "Somali", "South African", "South Korean", "Spanish", "Sri Lankan",
    "Sudanese", "Surinamese", "Swazi", "Swedish", "Swiss", "Syrian", "Taiwanese", "Tajik",
    "Tanzanian", "Thai", "Tibetan", "Togolese", "Tongan", "Trinidadian", "Tunisian",
    "Turkish", "Turkmen", "Ugandan", "Ukrainian", "Uruguayan", "Uzbek", "Venezuelan",
    "Vietnamese", "Welsh", "Yemeni", "Zambian", "Zimbabwean",
    # peoples and ethnic groups commonly named as a nationality
    "Arab", "Arabic", "Basque", "Catalan", "Kurdish", "Kurd", "Uyghur", "Tamil", "Roma",
    "Romani", "Hispanic", "Latino", "Latina", "Pashtun", "Punjabi", "Bengali", "Berber",
    "Persian", "Flemish", "Walloon", "Faroese", "Greenlander", "Icelander", "Sami",
)
#: Person nouns for nationalities (a Brit, two Swedes, an Englishman).
DEMONYM_NOUNS = (
    "Brit", "Briton", "Scot", "Swede", "Dane", "Pole", "Turk", "Spaniard", "Englishman",
    "Englishwoman", "Frenchman", "Frenchwoman", "Irishman", "Irishwoman", "Welshman",
    "Dutchman", "Scotsman", "Scotswoman", "Icelander", "Finlander", "Kiwi",
)
#: Demonyms that are also common words or names: matched only when capitalised.
AMBIGUOUS_DEMONYMS = ("Polish", "Pole", "Swede", "Dane", "Turk", "Kiwi", "Scot", "Roma", "Lao")
#: Words before a language name that make it a language, not a group ("answer in Korean").
LANGUAGE_USE_BEFORE = (
    "in", "into", "speak", "speaks", "speaking", "spoke", "spoken", "learn", "learns",
    "learning", "learned", "study", "studies", "studying", "translate", "translates",
    "translated", "translating", "fluent", "teach", "teaches", "teaching", "write",
    "writes", "writing", "reply", "replies", "respond", "responds", "answer", "answers",
    "read", "reads", "understand", "understands", "prefer", "prefers", "from",
)
#: Words after a language name that make it a language ("English translation").
LANGUAGE_USE_AFTER = (
    "translation", "translations", "version", "subtitle", "subtitles", "language",
    "languages", "speaker", "speakers", "speaking", "lesson", "lessons", "class",
    "classes", "course", "courses", "grammar", "text", "word", "words", "keyboard",
    "locale", "dictionary", "teacher", "tutor", "literature",
)
RELIGIOUS_GROUPS = (
    "Muslim", "Moslem", "Christian", "Catholic", "Protestant", "Jew", "Jewish", "Hindu",
    "Buddhist", "Sikh", "Shia", "Shiite", "Shi'ite", "Shii", "Sunni", "Mormon",
    "Evangelical", "Baptist", "Methodist", "Lutheran", "Anglican", "Presbyterian",
    "Pentecostal", "Quaker", "Amish", "Taoist", "Zoroastrian", "Rastafarian",
    "Orthodox Christian", "Orthodox Jew", "Jehovah's Witness", "Bahai", "Baha'i",
)
POLITICAL_GROUPS = (
    "Democrat", "Republican", "Socialist", "Communist", "Marxist", "Maoist", "Leninist",
    "Trotskyist", "Libertarian", "Tory", "Tories", "Labourite", "Nazi", "Neo-Nazi",
    "Fascist", "Anarchist", "Liberal Democrat", "Social Democrat", "Christian Democrat",
)
#: Group words that are also first names: not matched before another capitalised word.
NAME_LIKE_GROUPS = ("Christian", "Shia")
#: Korean country names that take -인 (person), -계 (descent) or 국적 (nationality).
KO_NRP_COUNTRIES = (
    "한국", "미국", "일본", "중국", "북한", "대만", "베트남", "필리핀", "태국", "러시아",
    "몽골", "우즈베키스탄", "카자흐스탄", "인도네시아", "캄보디아", "네팔", "미얀마",
    "스리랑카", "방글라데시", "파키스탄", "인도", "영국", "프랑스", "독일", "캐나다", "호주",
    "이탈리아", "스페인", "멕시코", "브라질", "터키", "튀르키예", "이란", "이라크", "시리아",
    "아프가니스탄", "나이지리아", "이집트", "라오스", "말레이시아", "싱가포르", "키르기스스탄",
    "아랍", "유대",
)
#: Korean words for a national, ethnic, religious or political group.
KO_NRP_WORDS = (
    "조선족", "고려인", "탈북민", "탈북자", "새터민", "재일교포", "재미교포", "교포",
    "무슬림", "기독교인", "기독교도", "천주교인", "천주교도", "불교도", "불교신자",
    "개신교인", "유대인", "힌두교도", "이슬람교도",
)
# fmt: on
