"""Word lists and value sets of the contradiction detector (data, not logic).

Everything language-specific the contradiction detector knows lives here, as plain tables an
operator can read and extend (a rule's ``params`` may add slots, traits and cue words; see
:mod:`auditor.detectors.contradiction`). English and Korean at least.

* :data:`SLOTS`: exclusive value sets ("one value at a time"): package managers, export
  formats, the city someone lives in, editors, operating systems, reply languages, seats,
  themes, ... Each slot lists its values (canonical name -> aliases), optional *cue* words
  that must stand near a value for it to count (a city only fills ``city_of_residence``
  next to "lives in" / "살고"), and whether two memories must also share context words.
* :data:`TRAITS`: pairs of traits that exclude each other (vegetarian vs. loves steak).
* Cue words: negation, transitions ("switched from X to Y"), scope ("for personal
  projects", "at work"), universals ("all", "always", "only"), hedges ("in an alternate
  universe"), approximations ("about").
* Numbers and dates: number words (English and Korean), month names, Korean counters, and
  the date attributes that hold one value per person or thing (birthday, anniversary,
  release date ...).
"""

from __future__ import annotations

from typing import Final, TypedDict

__all__ = [
    "APPROX_WORDS",
    "CLAUSE_BREAK_WORDS",
    "COMPARATIVES",
    "EN_STOPWORDS",
    "EVENT_WORDS",
    "HEDGE_PHRASES",
    "KO_COUNTERS",
    "KO_NEGATION_PATTERN",
    "KO_NUMBER_WORDS",
    "KO_PARTICLES",
    "LIGHT_VERBS",
    "MONTHS",
    "NEGATION_WORDS",
    "NEGATION_PHRASES",
    "NUMBER_WORDS",
    "ONCE_DATE_KEYS",
    "QA_ANSWER_MARKERS",
    "QA_QUESTION_MARKERS",
    "SCOPE_PATTERNS",
    "SLOTS",
    "SlotSpec",
    "TIME_RELATIONS",
    "TRAITS",
    "TRANSITION_PATTERNS",
    "TraitSpec",
    "TYPE_SETS",
    "UNIVERSAL_WORDS",
    "WH_NUMERIC",
]


def _w(words: str) -> list[str]:
    """A word list written as one string (white-space separated)."""
    return words.split()


def _lines(patterns: str) -> list[str]:
    """A pattern list written one pattern per line (blank lines ignored)."""
    return [line.strip() for line in patterns.splitlines() if line.strip()]


class SlotSpec(TypedDict, total=False):
    """One exclusive slot.

    Keys:
        title: a human name for reasons ("package manager").
        values: canonical value -> aliases (matched as whole words, case-insensitive;
            Hangul aliases may be followed by particles).
        cues: words one of which must stand within ``window`` tokens of a value for the
            value to fill this slot (empty: any mention counts).
        window: how many tokens around a value a cue may stand (default 4).
        shared_context: both memories must also share a content word besides the values
            (the *thing* the value is about, e.g. "report" for an export format).
    """

    title: str
    values: dict[str, list[str]]
    cues: list[str]
    window: int
    shared_context: bool


class TraitSpec(TypedDict):
    """Two traits that exclude each other: a memory with ``a`` vs. a memory with ``b``.

    Keys:
        title: a human name ("diet").
        a: regular expressions (case-insensitive) of the first trait.
        b: regular expressions of the second trait.
        b_cues: words that must appear in the clause for ``b`` to count (liking, eating ...);
            empty: ``b`` counts alone.
        reason: why they cannot both hold.
    """

    title: str
    a: list[str]
    b: list[str]
    b_cues: list[str]
    reason: str


#: Exclusive slots; see :class:`SlotSpec`.
SLOTS: Final[dict[str, SlotSpec]] = {
    "js_package_manager": {
        "title": "JavaScript package manager",
        "values": {
            "npm": ["npm"],
            "pnpm": ["pnpm"],
            "yarn": ["yarn"],
            "bun": ["bun"],
        },
        "cues": [],
        "shared_context": False,
    },
    "python_package_manager": {
        "title": "Python package manager",
        "values": {
            "pip": ["pip"],
            "poetry": ["poetry"],
            "uv": ["uv"],
            "pipenv": ["pipenv"],
            "conda": ["conda"],
        },
        "cues": _w("python package packages dependencies install uses use manager 파이썬 패키지"),
        "window": 6,
        "shared_context": False,
    },
    "file_format": {
        "title": "file format",
        "values": {
            "json": ["json"],
            "csv": ["csv"],
            "xml": ["xml"],
            "yaml": ["yaml", "yml"],
            "excel": ["excel", "xlsx", "xls", "엑셀"],
            "pdf": ["pdf"],
            "markdown": ["markdown"],
            "html": ["html"],
            "parquet": ["parquet"],
        },
        "cues": _w(
            """
            export exports exported report reports output outputs file files format formats
            download downloads save saved send sent as
            내보내기 보고서 리포트 형식 포맷 파일 저장 출력
            """
        ),
        "window": 4,
        "shared_context": True,
    },
    "city_of_residence": {
        "title": "city of residence",
        "values": {
            "seoul": ["seoul", "서울", "서울시", "서울특별시"],
            "busan": ["busan", "부산", "부산시", "부산광역시"],
            "incheon": ["incheon", "인천"],
            "daegu": ["daegu", "대구"],
            "daejeon": ["daejeon", "대전"],
            "gwangju": ["gwangju", "광주"],
            "ulsan": ["ulsan", "울산"],
            "suwon": ["suwon", "수원"],
            "jeju": ["jeju", "제주", "제주시"],
            "seongnam": ["seongnam", "성남", "판교"],
            "new_york": ["new york", "nyc", "brooklyn", "manhattan", "뉴욕"],
            "san_francisco": ["san francisco", "sf bay area"],
            "los_angeles": ["los angeles"],
            "seattle": ["seattle"],
            "chicago": ["chicago"],
            "boston": ["boston"],
            "austin": ["austin"],
            "denver": ["denver"],
            "portland": ["portland"],
            "toronto": ["toronto"],
            "vancouver": ["vancouver"],
            "london": ["london", "런던"],
            "paris": ["paris", "파리"],
            "berlin": ["berlin", "베를린"],
            "munich": ["munich", "münchen"],
            "amsterdam": ["amsterdam"],
            "dublin": ["dublin"],
            "lisbon": ["lisbon", "lisboa"],
            "madrid": ["madrid"],
            "barcelona": ["barcelona"],
            "rome": ["rome"],
            "milan": ["milan"],
            "vienna": ["vienna"],
            "zurich": ["zurich", "zürich"],
            "stockholm": ["stockholm"],
            "copenhagen": ["copenhagen"],
            "oslo": ["oslo"],
            "helsinki": ["helsinki"],
            "warsaw": ["warsaw"],
            "prague": ["prague"],
            "tokyo": ["tokyo", "도쿄"],
            "osaka": ["osaka", "오사카"],
            "kyoto": ["kyoto", "교토"],
            "beijing": ["beijing", "베이징"],
            "shanghai": ["shanghai", "상하이"],
            "hong_kong": ["hong kong", "홍콩"],
            "singapore": ["singapore", "싱가포르"],
            "taipei": ["taipei", "타이베이"],
            "bangkok": ["bangkok", "방콕"],
            "sydney": ["sydney", "시드니"],
            "melbourne": ["melbourne", "멜버른"],
            "auckland": ["auckland"],
            "cape_town": ["cape town"],
            "dubai": ["dubai"],
            "mumbai": ["mumbai"],
            "bangalore": ["bangalore", "bengaluru"],
            "sao_paulo": ["são paulo", "sao paulo"],
            "mexico_city": ["mexico city"],
        },
        "cues": _w(
            """
            live lives living lived based resides reside resident moved relocated home
            살고 살아 산다
            살며 사는 살음 거주 거주함 거주하고 이사 이사함 이사했 이사를 집은 집이
            """
        ),
        "window": 4,
        "shared_context": False,
    },
    "editor": {
        "title": "code editor",
        "values": {
            "vscode": ["vs code", "vscode", "visual studio code"],
            "vim": ["vim"],
            "neovim": ["neovim", "nvim"],
            "emacs": ["emacs"],
            "zed": ["zed"],
            "sublime": ["sublime text", "sublime"],
            "intellij": ["intellij idea", "intellij"],
            "pycharm": ["pycharm"],
            "webstorm": ["webstorm"],
            "cursor": ["cursor editor"],
            "xcode": ["xcode"],
            "eclipse": ["eclipse ide"],
        },
        "cues": _w(
            """
            editor ide coding code codes writes uses use prefers switched
            에디터 편집기 코딩 쓰고 씀 사용
            """
        ),
        "window": 6,
        "shared_context": False,
    },
    "operating_system": {
        "title": "operating system of the main machine",
        "values": {
            "windows": ["windows 11", "windows 10", "windows"],
            "macos": ["macos", "mac os", "os x"],
            "linux_fedora": ["fedora"],
            "linux_ubuntu": ["ubuntu"],
            "linux_arch": ["arch linux"],
            "linux_debian": ["debian"],
            "chromeos": ["chromeos", "chrome os"],
        },
        "cues": _w(
            """
            machine laptop desktop computer workstation pc running runs daily driver 노트북 컴퓨터
            데스크톱 운영체제
            """
        ),
        "window": 6,
        "shared_context": False,
    },
    "reply_language": {
        "title": "language of replies",
        "values": {
            "english": ["english", "영어"],
            "korean": ["korean", "한국어", "한글"],
            "japanese": ["japanese", "일본어"],
            "chinese": ["chinese", "mandarin", "중국어"],
            "german": ["german", "독일어"],
            "french": ["french", "프랑스어"],
            "spanish": ["spanish", "스페인어"],
            "portuguese": ["portuguese", "포르투갈어"],
            "italian": ["italian", "이탈리아어"],
        },
        "cues": _w(
            """
            answer answers reply replies respond responses response answered
            답변 답변은 대답 응답 답장
            """
        ),
        "window": 3,
        "shared_context": False,
    },
    "flight_seat": {
        "title": "seat preference",
        "values": {
            "window": ["window", "창가", "창측"],
            "aisle": ["aisle", "통로"],
        },
        "cues": _w("seat seats 좌석 자리 쪽"),
        "window": 3,
        "shared_context": False,
    },
    "colour_theme": {
        "title": "colour theme",
        "values": {
            "dark": ["dark mode", "dark theme", "다크 모드", "다크모드", "다크 테마"],
            "light": ["light mode", "light theme", "라이트 모드", "라이트모드", "라이트 테마"],
        },
        "cues": [],
        "shared_context": False,
    },
    "indentation": {
        "title": "indentation",
        "values": {
            "tabs": ["tabs", "tab"],
            "spaces": ["spaces"],
        },
        "cues": _w("indent indents indentation indenting 들여쓰기"),
        "window": 4,
        "shared_context": False,
    },
    "python_formatter": {
        "title": "Python formatter",
        "values": {
            "black": ["black"],
            "ruff": ["ruff format", "ruff formatter", "ruff"],
            "yapf": ["yapf"],
            "autopep8": ["autopep8"],
        },
        "cues": _w("format formats formatter formatting 포매터 포맷터"),
        "window": 5,
        "shared_context": False,
    },
    "unit_system": {
        "title": "unit system",
        "values": {
            "metric": ["metric", "celsius", "kilometres", "kilometers", "섭씨"],
            "imperial": ["imperial", "fahrenheit", "miles", "화씨"],
        },
        "cues": _w("units unit temperatures temperature distances distance 단위 온도 거리"),
        "window": 4,
        "shared_context": False,
    },
    "marital_status": {
        "title": "marital status",
        "values": {
            "married": ["married", "기혼", "결혼했", "결혼함"],
            "single": ["single", "unmarried", "미혼", "싱글"],
            "divorced": ["divorced", "이혼"],
            "widowed": ["widowed", "widow", "widower", "사별"],
        },
        "cues": _w("is am was got currently status now 상태 현재"),
        "window": 1,
        "shared_context": False,
    },
}

#: Traits that exclude each other; see :class:`TraitSpec`.
TRAITS: Final[dict[str, TraitSpec]] = {
    "diet_meat": {
        "title": "diet",
        "a": _lines(
            r"""
            \bvegetarian\b
            \bvegan\b
            \bdoes(?:n't| not) eat meat\b
            채식
            비건
            고기를?\s*(?:안|못)\s*먹
            고기를?\s*먹지\s*않
            """
        ),
        "b": _lines(
            r"""
            \bsteaks?\b
            \bbeef\b
            \bpork\b
            \bbacon\b
            \bbrisket\b
            \blamb chops?\b
            \bribs\b
            \bbbq\b
            \bbarbecue\b
            \bburgers?\b
            \bfried chicken\b
            \bsteakhouses?\b
            스테이크
            소고기
            돼지고기
            삼겹살
            갈비
            불고기
            치킨
            고기
            곱창
            육회
            바비큐
            """
        ),
        "b_cues": _w(
            """
            love loves loved like likes enjoy enjoys favourite favorite eats ate eating craves
            orders fan grills 좋아 즐겨 즐김 맛집 먹 최애 자주 찾음 찾아
            """
        ),
        "reason": "a vegetarian or vegan diet excludes liking or eating meat dishes",
    },
    "alcohol": {
        "title": "alcohol",
        "a": _lines(
            r"""
            \bteetotal(?:er|ler)?\b
            \bdoes(?:n't| not) drink(?: alcohol)?\b
            \bnever drinks\b
            \bsober\b
            \bquit drinking\b
            술을?\s*(?:안|못|끊)
            술을?\s*마시지\s*않
            금주
            """
        ),
        "b": _lines(
            r"""
            \bwines?\b
            \bbeers?\b
            \bwhisk(?:e)?y\b
            \bcocktails?\b
            \bsake\b
            \bsoju\b
            \bbourbon\b
            와인
            맥주
            소주
            위스키
            칵테일
            막걸리
            """
        ),
        "b_cues": _w(
            """
            love loves like likes enjoy enjoys favourite favorite drinks drinking collects
            tasting fan orders 좋아 즐겨 즐김 마심 마시 모으 시음
            """
        ),
        "reason": "not drinking alcohol excludes enjoying alcoholic drinks",
    },
    "smoking": {
        "title": "smoking",
        "a": _lines(
            r"""
            \bnon-?smoker\b
            \bnever smoked\b
            \bdoes(?:n't| not) smoke\b
            \bquit smoking\b
            비흡연
            담배를?\s*(?:안|못|끊)
            금연
            """
        ),
        "b": _lines(
            r"""
            \bsmokes\b
            \bsmoker\b
            \bcigarettes?\b
            \bcigars?\b
            흡연자
            담배를?\s*(?:피움|피운다|핀다|피우고)
            """
        ),
        "b_cues": [],
        "reason": "a non-smoker does not smoke",
    },
}

#: English function words left out of similarity and context comparisons.
EN_STOPWORDS: Final[frozenset[str]] = frozenset(
    """a an the and or but if then else of in on at to for from by with without into onto
    over under about above below up down out off as is are was were be been being am do does
    did doing done have has had having it its it's this that these those there here their
    they them he him his she her hers we us our you your i me my mine who whom whose which
    what when where why how than so such too very can could should would will shall may
    might must also just only not no nor any all each every some most more many much other
    another same own both either neither per via while during before after again further
    once s t ll re ve d m one's get gets got""".split()
)

#: Verbs kept as context words next to a number ("has two kids").
LIGHT_VERBS: Final[frozenset[str]] = frozenset(
    {"has", "have", "had", "owns", "own", "is", "are", "was", "were", "am"}
)

#: Korean particles and copula endings stripped from the end of a token (longest first).
KO_PARTICLES: Final[tuple[str, ...]] = tuple(
    sorted(
        """은 는 이 가 을 를 에 에서 에게 께 으로 로 의 도 만 와 과 랑 이랑 하고 까지 부터 보다
        처럼 이라 라 이라서 라서 이라고 라고 이며 며 이고 고 이다 다 으로는 로는 에는 에서는
        이란 란 이면 면 이나 나 께서 한테""".split(),
        key=len,
        reverse=True,
    )
)

#: English negation words (a value right after one is negated).
NEGATION_WORDS: Final[frozenset[str]] = frozenset(
    {
        "not",
        "no",
        "never",
        "n't",
        "without",
        "nobody",
        "none",
        "neither",
        "nor",
        "avoid",
        "avoids",
        "avoiding",
        "hates",
        "dislikes",
        "stopped",
        "quit",
        "unlike",
        "instead",
        "rather",
        "except",
        "nothing",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "doesn't",
        "don't",
        "didn't",
        "won't",
        "wouldn't",
        "can't",
        "cannot",
        "shouldn't",
        "hasn't",
        "haven't",
        "failed",
        "fails",
        "lacks",
        "lacked",
        "refused",
        "refuses",
        "declined",
    }
)

#: Multi-word negations (matched before single words).
NEGATION_PHRASES: Final[tuple[str, ...]] = (
    "no longer",
    "not anymore",
    "any more",
    "instead of",
    "rather than",
    "other than",
    "as opposed to",
    "contrary to",
    "apart from",
    "stay away from",
)

#: Korean negation, as a regular expression over one token: a token that starts with a
#: negation word (안, 않음, 못, 없음, 말고, 아니, 대신 ...) or holds a negated verb ending
#: (먹지 않, 하지 말, 가지 못). A value followed by such a token in its clause is negated.
KO_NEGATION_PATTERN: Final[str] = (
    r"^(?:안|않|못|없|말고|말아|아니|아님|대신|싫|끊|그만|금지)"
    r"|(?:지\s*않|지않|지\s*말|지말|지\s*못|지못)"
)

#: Words that end a clause for negation scope (besides punctuation).
CLAUSE_BREAK_WORDS: Final[frozenset[str]] = frozenset(
    {"but", "however", "although", "though", "whereas", "while", "yet", "so", "because"}
)

#: Transitions: the value after "from" is the past one, the value after "to" the current one.
#: Each pattern has named groups ``old`` and ``new`` spanning free text (values are looked up
#: inside them).
TRANSITION_PATTERNS: Final[tuple[str, ...]] = (
    r"(?i)\b(?:switched|switching|moved|moving|migrated|migrating|changed|changing|went|"
    r"converted|upgraded|transitioned)\s+(?:\w+\s+){0,3}?from\s+(?P<old>[^.;,]{1,60}?)\s+"
    r"(?:to|over to|onto|for)\s+(?P<new>[^.;,]{1,60})",
    r"(?i)\breplaced\s+(?P<old>[^.;,]{1,60}?)\s+with\s+(?P<new>[^.;,]{1,60})",
    r"(?i)\bfrom\s+(?P<old>[^.;,]{1,40}?)\s+to\s+(?P<new>[^.;,]{1,40}?)\s+"
    r"(?:in|last|this|since)\b",
    r"(?P<old>[^\s.;,]{1,20}(?:\s[^\s.;,]{1,20})?)에서\s+(?P<new>[^.;,]{1,40}?)(?:으로|로)\s*"
    r"(?:바꿈|바꿨|바꾸|옮김|옮겼|이사|이전|갈아탐|갈아탔|전환|변경|넘어)",
)

#: Scope qualifiers: a statement that holds only in one context. Each pattern has a group
#: ``scope`` whose lower-cased text names the context.
SCOPE_PATTERNS: Final[tuple[str, ...]] = (
    r"(?i)\bfor (?:my |his |her |their |our )?(?P<scope>personal|side|hobby|weekend|private|"
    r"open[- ]source|work|school|client|legacy)\b",
    r"(?i)\b(?P<scope>at work|at home|at school|at the office|in the office|on weekends)\b",
    r"(?i)\b(?P<scope>legacy)\b",
    r"(?i)\b(?P<scope>side projects?|personal projects?|hobby projects?|work projects?)\b",
    r"\b(?:for|in|on)\s+(?:the\s+)?(?P<scope>[A-Z][a-z]+(?:[A-Z][a-z]+)?)\b(?!\s+(?:for|and))",
    r"(?P<scope>개인 프로젝트|사이드 프로젝트|회사에서|회사 프로젝트|업무용|업무에서|"
    r"집에서|학교에서|레거시)",
)

#: Words that make a statement universal ("for all projects", "always", "only").
UNIVERSAL_WORDS: Final[frozenset[str]] = frozenset(
    {
        "all",
        "every",
        "everything",
        "always",
        "only",
        "everywhere",
        "any",
        "whole",
        "entire",
        "모든",
        "항상",
        "전부",
        "모두",
        "전체",
        "언제나",
    }
)

#: Hedges that soften a statement: counterfactual, fictional or hearsay framing, in general
#: words (the phrases once copied from one corpus's passages, "alternate universe",
#: "this year only", "rare exception", were removed under issue 10).
HEDGE_PHRASES: Final[tuple[str, ...]] = (
    "hypothetical",
    "hypothetically",
    "imagine",
    "what if",
    "suppose ",
    "supposing",
    "in a world where",
    "fictional",
    "in fiction",
    "rumor",
    "rumour",
    "allegedly",
    "reportedly",
    "supposedly",
    "some say",
    "가정하면",
    "가상의",
    "소문",
    "만약",
)

#: Words of approximation ("about 7 years"): small numeric differences are not conflicts.
APPROX_WORDS: Final[frozenset[str]] = frozenset(
    {
        "about",
        "around",
        "roughly",
        "approximately",
        "approx",
        "nearly",
        "almost",
        "over",
        "under",
        "some",
        "circa",
        "~",
        "약",
        "대략",
        "정도",
        "쯤",
        "가량",
        "남짓",
    }
)

#: Closed word classes an answer may belong to: an answer "orange" is rivalled by another
#: colour in the statement, "right-hand" by "left-hand" (slot values are types too).
TYPE_SETS: Final[dict[str, frozenset[str]]] = {
    "colour": frozenset(
        """red orange yellow green blue purple violet pink brown black white grey gray gold
        silver beige navy teal maroon 빨강 빨간색 주황 주황색 노랑 노란색 초록 초록색 파랑
        파란색 보라 보라색 분홍 분홍색 갈색 검정 검은색 흰색 하얀색 회색""".split()
    ),
    "weekday": frozenset(
        """monday tuesday wednesday thursday friday saturday sunday 월요일 화요일 수요일 목요일
        금요일 토요일 일요일""".split()
    ),
    "side": frozenset(
        "left right left-hand right-hand left-handed right-handed 왼손 오른손".split()
    ),
    "direction": frozenset("north south east west northern southern eastern western".split()),
    "season": frozenset("spring summer autumn fall winter 봄 여름 가을 겨울".split()),
    "metal": frozenset("gold silver bronze copper iron steel platinum".split()),
}

#: English number words.
NUMBER_WORDS: Final[dict[str, int]] = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
    "hundred": 100,
    "thousand": 1000,
    "dozen": 12,
    "single": 1,
    "twice": 2,
    "once": 1,
    "couple": 2,
    "pair": 2,
}

#: Korean native and Sino-Korean number words (as counted: 두 명, 세 개, 아이가 셋).
KO_NUMBER_WORDS: Final[dict[str, int]] = {
    "한": 1,
    "하나": 1,
    "두": 2,
    "둘": 2,
    "세": 3,
    "셋": 3,
    "네": 4,
    "넷": 4,
    "다섯": 5,
    "여섯": 6,
    "일곱": 7,
    "여덟": 8,
    "아홉": 9,
    "열": 10,
    "일": 1,
    "이": 2,
    "삼": 3,
    "사": 4,
    "오": 5,
    "육": 6,
    "칠": 7,
    "팔": 8,
    "구": 9,
    "십": 10,
}

#: Korean counters that turn a number into a count of something (명 people, 개 things ...).
KO_COUNTERS: Final[tuple[str, ...]] = (
    "명",
    "개",
    "마리",
    "살",
    "세",
    "권",
    "대",
    "채",
    "번",
    "회",
    "년",
    "시즌",
    "편",
    "장",
    "잔",
    "곳",
    "개월",
    "주",
    "시간",
    "분",
)

#: English month names (and abbreviations) -> month number.
MONTHS: Final[dict[str, int]] = {
    "january": 1,
    "jan": 1,
    "february": 2,
    "feb": 2,
    "march": 3,
    "mar": 3,
    "april": 4,
    "apr": 4,
    "may": 5,
    "june": 6,
    "jun": 6,
    "july": 7,
    "jul": 7,
    "august": 8,
    "aug": 8,
    "september": 9,
    "sep": 9,
    "sept": 9,
    "october": 10,
    "oct": 10,
    "november": 11,
    "nov": 11,
    "december": 12,
    "dec": 12,
}

#: Date attributes that hold one value (two different dates for one of them conflict).
ONCE_DATE_KEYS: Final[frozenset[str]] = frozenset(
    {
        "birthday",
        "born",
        "birth",
        "birthdate",
        "anniversary",
        "wedding",
        "married",
        "released",
        "release",
        "published",
        "founded",
        "established",
        "launched",
        "premiered",
        "debuted",
        "died",
        "written",
        "signed",
        "opened",
        "built",
        "graduated",
        "came",
        "생일",
        "생년월일",
        "결혼기념일",
        "기념일",
        "결혼식",
        "입사일",
        "출생",
        "태어남",
        "태어났",
        "창립",
        "출시",
        "개봉",
        "발매",
        "졸업",
    }
)

#: Comparative words -> direction (+1 "more / later / higher", -1 "less / earlier / lower"):
#: a statement answering "which of X or Y is older?" by its first-named option.
COMPARATIVES: Final[dict[str, int]] = {
    "more": 1,
    "most": 1,
    "higher": 1,
    "highest": 1,
    "larger": 1,
    "largest": 1,
    "bigger": 1,
    "biggest": 1,
    "greater": 1,
    "greatest": 1,
    "better": 1,
    "best": 1,
    "older": 1,
    "oldest": 1,
    "taller": 1,
    "tallest": 1,
    "longer": 1,
    "longest": 1,
    "surpassed": 1,
    "surpasses": 1,
    "outranked": 1,
    "exceeds": 1,
    "exceeded": 1,
    "outnumbers": 1,
    "later": 1,
    "last": 1,
    "after": 1,
    "postdates": 1,
    "postdated": 1,
    "fewer": -1,
    "less": -1,
    "least": -1,
    "lower": -1,
    "lowest": -1,
    "smaller": -1,
    "smallest": -1,
    "worse": -1,
    "worst": -1,
    "younger": -1,
    "youngest": -1,
    "shorter": -1,
    "shortest": -1,
    "earlier": -1,
    "earliest": -1,
    "first": -1,
    "before": -1,
    "predates": -1,
    "predated": -1,
    "preceded": -1,
    "precedes": -1,
    "더": 1,
    "많은": 1,
    "높은": 1,
    "먼저": -1,
    "적은": -1,
    "낮은": -1,
    "나중에": 1,
}

#: Words that make a clock time a preference boundary ("meetings after 14:00", "오후 3시 이후"):
#: word -> relation. Times without one (events "at 10:00") are not compared.
TIME_RELATIONS: Final[dict[str, str]] = {
    "after": "after",
    "past": "after",
    "from": "after",
    "before": "before",
    "until": "before",
    "till": "before",
    "by": "before",
    "이후": "after",
    "이후로": "after",
    "이후에": "after",
    "후": "after",
    "후에": "after",
    "부터": "after",
    "이전": "before",
    "이전에": "before",
    "전": "before",
    "전에": "before",
    "까지": "before",
}

#: Words of dated events that recur (two sessions on two dates do not conflict).
EVENT_WORDS: Final[frozenset[str]] = frozenset(
    {
        "session",
        "meeting",
        "call",
        "trip",
        "visit",
        "flight",
        "appointment",
        "sync",
        "standup",
        "review",
        "talk",
        "세션",
        "회의",
        "통화",
        "출장",
        "여행",
        "방문",
        "미팅",
        "약속",
    }
)

#: Markers of a question / answer memory ("Q: ... A: ...").
QA_QUESTION_MARKERS: Final[tuple[str, ...]] = ("q", "question", "질문", "문")
QA_ANSWER_MARKERS: Final[tuple[str, ...]] = ("a", "answer", "답", "답변", "정답")

#: Question words whose answer is a number or a date.
WH_NUMERIC: Final[dict[str, str]] = {
    "how many": "count",
    "how much": "count",
    "how long": "count",
    "how old": "count",
    "how far": "count",
    "how tall": "count",
    "what year": "date",
    "which year": "date",
    "when": "date",
    "what date": "date",
    "몇": "count",
    "언제": "date",
    "몇 년": "date",
}
