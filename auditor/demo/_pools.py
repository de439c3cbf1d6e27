"""Content pools for the demo generator (personas, sentence templates, long pages).

Everything here is synthetic. Names, handles, numbers and addresses are invented; e-mail
addresses use reserved example domains and phone numbers use fictional ranges.

Template placeholders are ``{attr}`` or, for Korean particles, ``{attr|을/를}`` (the
particle is chosen from the final syllable of the value). ``{date}`` is the session date of
the record being generated.
"""

from __future__ import annotations

# ---------------------------------------------------------------------------------------
# personas
# ---------------------------------------------------------------------------------------

# (handle, given name, nickname or None)
EN_PERSONAS = [
    ("dana.whitfield", "Daniela", "Dana"),
    ("mkowalski", "Michał", "Mike"),
    ("priya_r", "Priya", None),
    ("jt_oconnor", "James", "JT"),
    ("sam.okafor", "Samuel", "Sam"),
    ("lena.hoffmann", "Helena", "Lena"),
    ("diego.m", "Diego", None),
    ("aisha.k", "Aisha", None),
    ("tom.brennan", "Thomas", "Tom"),
    ("nora.lind", "Nora", None),
    ("raj.patel", "Rajesh", "Raj"),
    ("emily.chen", "Emily", None),
    ("ben.cho", "Benjamin", "Ben"),
    ("grace.h", "Grace", None),
    ("marcus.bell", "Marcus", None),
    ("olivia.w", "Olivia", "Liv"),
    ("kenji.sato", "Kenji", None),
    ("zoe.martin", "Zoé", "Zoe"),
    ("u_48213", None, None),
    ("hamid.n", "Hamid", None),
]

KO_PERSONAS = [
    ("fjvbn2003", "지훈", None),
    ("minji.park", "민지", None),
    ("jhkim", "재현", None),
    ("seoyeon_lee", "서연", None),
    ("dohyun.choi", "도현", None),
    ("hana.jung", "하나", None),
    ("u_77105", None, None),
    ("jiwoo.kang", "지우", None),
    ("taeyang.yoon", "태양", None),
    ("soojin.han", "수진", None),
    ("eunbi.shin", "은비", None),
    ("woojin.lim", "우진", None),
    ("yuna.oh", "유나", None),
]

# ---------------------------------------------------------------------------------------
# attribute pools (English)
# ---------------------------------------------------------------------------------------

EN_CITIES = [
    ("Portland, Oregon", "America/Los_Angeles"),
    ("Austin", "America/Chicago"),
    ("Toronto", "America/Toronto"),
    ("Manchester", "Europe/London"),
    ("Berlin", "Europe/Berlin"),
    ("Lisbon", "Europe/Lisbon"),
    ("Melbourne", "Australia/Melbourne"),
    ("Chicago", "America/Chicago"),
    ("Dublin", "Europe/Dublin"),
    ("Vancouver", "America/Vancouver"),
    ("Amsterdam", "Europe/Amsterdam"),
    ("Boston", "America/New_York"),
    ("Seattle", "America/Los_Angeles"),
    ("Edinburgh", "Europe/London"),
    ("Brooklyn", "America/New_York"),
    ("Minneapolis", "America/Chicago"),
    ("Wellington", "Pacific/Auckland"),
    ("Copenhagen", "Europe/Copenhagen"),
]

EN_JOBS = [
    "staff backend engineer",
    "frontend developer",
    "data scientist",
    "product manager",
    "site reliability engineer",
    "iOS developer",
    "machine-learning engineer",
    "technical writer",
    "engineering manager",
    "security analyst",
    "full-stack developer",
    "developer advocate",
    "QA automation engineer",
    "platform engineer",
]
EN_COMPANIES = [
    "fintech startup",
    "logistics company",
    "mid-sized SaaS company",
    "university lab",
    "game studio",
    "public broadcaster",
    "climate-tech startup",
    "small consultancy",
    "e-commerce company",
    "open-source foundation",
    "insurance company",
    "design agency",
]
EN_EDITORS = [
    "VS Code",
    "Neovim",
    "IntelliJ IDEA",
    "PyCharm",
    "Zed",
    "Emacs",
    "Helix",
    "Sublime Text",
]
EN_PMS = ["pnpm", "npm", "yarn", "bun"]
LANG_STACK = {
    "TypeScript": (["Next.js", "NestJS", "Remix", "SvelteKit"], ["Vitest", "Jest", "Playwright"]),
    "Python": (["FastAPI", "Django", "Flask"], ["pytest"]),
    "Go": (["chi", "Gin", "the standard net/http package"], ["go test with testify"]),
    "Rust": (["Axum", "Actix Web"], ["cargo nextest"]),
    "Kotlin": (["Ktor", "Spring Boot"], ["JUnit 5 and Kotest"]),
    "Ruby": (["Rails", "Sinatra"], ["RSpec"]),
    "Elixir": (["Phoenix"], ["ExUnit"]),
    "C#": (["ASP.NET Core"], ["xUnit"]),
}
LINT_CMD = {
    "Python": "ruff check . && mypy src",
    "Go": "golangci-lint run",
    "Rust": "cargo clippy -- -D warnings",
    "Kotlin": "./gradlew ktlintCheck",
    "Ruby": "bundle exec rubocop",
    "Elixir": "mix credo --strict",
    "C#": "dotnet format --verify-no-changes",
}
EN_DBS = ["PostgreSQL", "SQLite", "MySQL", "DynamoDB", "MongoDB", "ClickHouse"]
EN_CLOUDS = [
    "AWS ECS Fargate",
    "Google Cloud Run",
    "Fly.io",
    "a Hetzner VPS",
    "Azure App Service",
    "Vercel",
    "a small Kubernetes cluster on DigitalOcean",
]
EN_PROJECTS = [
    ("Atlas", "an internal tool for tracking warehouse inventory"),
    ("Tidepool", "a mobile app for logging surf sessions"),
    ("Ledgerly", "a budgeting app for freelancers"),
    ("Quill", "a static-site generator for technical docs"),
    ("Beacon", "an alerting dashboard for IoT sensors"),
    ("Marmot", "a CLI that syncs dotfiles across machines"),
    ("Orchard", "a marketplace for local farm produce"),
    ("Signalbox", "a Slack bot that summarises incident channels"),
    ("Paperplane", "a newsletter platform for small publishers"),
    ("Kestrel", "a load-testing tool"),
    ("Lumen", "a photo-tagging service that runs models on-device"),
    ("Cartographer", "a route planner for cycling clubs"),
    ("Fernweh", "a travel-journal web app"),
    ("Stackwise", "a dependency-upgrade bot for monorepos"),
    ("Gristmill", "an ETL pipeline for municipal open data"),
    ("Foghorn", "a status-page service for small teams"),
    ("Bramble", "a recipe manager with shopping-list export"),
    ("Tessera", "a tile-map editor for indie games"),
    ("Driftwood", "a podcast-hosting side business"),
    ("Heron", "a grading assistant for university courses"),
    ("Spindle", "a knitting-pattern marketplace"),
]
EN_SIDE_PROJECTS = [
    "a Rust port of a Markdown linter",
    "a browser extension that hides engagement counts",
    "a tiny Lisp interpreter",
    "a Home Assistant integration for their heat pump",
    "a Discord bot for a book club",
    "a typing-speed game",
    "a plugin for Obsidian",
    "a Raycast extension for time tracking",
    "a weather widget for e-ink displays",
    "a static blog about mechanical keyboards",
]
EN_COFFEE = [
    "a flat white",
    "oat-milk lattes",
    "pour-over coffee",
    "cold brew",
    "a double espresso",
    "matcha lattes",
    "chai",
]
EN_CUISINES = [
    "Thai",
    "Ethiopian",
    "Japanese",
    "Lebanese",
    "Mexican",
    "Georgian",
    "Vietnamese",
    "Sichuan",
    "Peruvian",
    "Neapolitan",
]
EN_SEATS = ["aisle", "window"]
EN_AIRLINES = [
    "Delta",
    "Air Canada",
    "KLM",
    "Qantas",
    "United",
    "British Airways",
    "Alaska Airlines",
    "TAP Air Portugal",
    "SAS",
]
EN_MUSIC = [
    "lo-fi hip hop",
    "film scores",
    "jazz",
    "synthwave",
    "classical piano",
    "Afrobeat",
    "ambient electronica",
]
EN_BOOKS = [
    ("science fiction", "The Left Hand of Darkness"),
    ("narrative non-fiction", "The Soul of a New Machine"),
    ("fantasy", "The Name of the Wind"),
    ("crime novels", "The Big Sleep"),
    ("popular science", "Entangled Life"),
    ("history", "SPQR"),
    ("literary fiction", "Klara and the Sun"),
    ("essays", "Consider the Lobster"),
]
EN_HOBBIES = [
    "bouldering at the local gym",
    "restoring old film cameras",
    "trail running",
    "baking sourdough",
    "playing five-a-side football",
    "birdwatching",
    "building mechanical keyboards",
    "sketching in cafés",
    "sea kayaking",
    "playing chess online",
]
EN_PETS = [
    ("dog", ["Biscuit", "Miso", "Pepper", "Juniper"]),
    ("cat", ["Tofu", "Olive", "Pixel", "Mochi"]),
    ("rabbit", ["Clover"]),
]
EN_LEARN = ["Japanese", "Spanish", "Korean", "Portuguese", "German", "Italian"]
EN_MEET = ["10:00", "11:00", "13:00", "14:00"]
EN_BUDGET = ["$180", "€150", "£140", "CA$220", "$250"]
EN_BROWSERS = ["Safari 16", "Firefox ESR", "Chrome on older Android tablets", "Samsung Internet"]
EN_LAPTOPS = [
    "M3 MacBook Air",
    "ThinkPad X1 Carbon running Fedora",
    "Framework 13 with Arch Linux",
    "Surface Laptop running Windows 11",
    "M2 MacBook Pro",
]
EN_DESTS = [
    "Lisbon",
    "Kyoto",
    "Mexico City",
    "Reykjavík",
    "Seoul",
    "Cape Town",
    "Vienna",
    "Hanoi",
    "Marrakesh",
    "Oaxaca",
    "Tbilisi",
]
EN_WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday"]

# ---------------------------------------------------------------------------------------
# attribute pools (Korean)
# ---------------------------------------------------------------------------------------

KO_CITIES = [
    "서울 마포구",
    "서울 송파구",
    "성남 분당",
    "인천 송도",
    "대전 유성구",
    "광주 서구",
    "수원 영통",
    "제주시",
    "고양 일산",
    "부천",
    "용인 수지",
    "청주",
]
KO_JOBS = [
    "백엔드 개발자",
    "데이터 분석가",
    "프로덕트 디자이너",
    "iOS 개발자",
    "프론트엔드 개발자",
    "고등학교 수학 교사",
    "스타트업 PM",
    "ML 엔지니어",
    "QA 엔지니어",
    "번역가",
    "인프라 엔지니어",
]
KO_COMPANIES = [
    "핀테크 스타트업",
    "게임 회사",
    "SI 회사",
    "물류 플랫폼 회사",
    "교육 스타트업",
    "커머스 회사",
    "공공기관",
    "헬스케어 플랫폼 회사",
    "보안 컨설팅 회사",
]
KO_CLOUDS = ["AWS", "GCP", "네이버 클라우드", "사내 쿠버네티스 클러스터", "집에 있는 미니 PC"]
KO_PROJECTS = [
    ("모아", "동네 소모임을 연결하는 앱"),
    ("하루노트", "일기를 요약해 주는 서비스"),
    ("빠른정산", "프리랜서용 정산 도구"),
    ("온새미로", "한국어 맞춤법 검사기"),
    ("숲길", "등산로 추천 서비스"),
    ("스터디로그", "사내 스터디 기록용 위키"),
    ("바로예약", "미용실 예약 시스템"),
    ("한입레시피", "냉장고 재료로 레시피를 추천하는 봇"),
    ("책갈피", "독서 모임 관리 앱"),
    ("마실", "동네 카페 지도 서비스"),
    ("새벽시장", "농산물 직거래 플랫폼"),
    ("다온", "어린이집 알림장 앱"),
    ("길잡이", "사내 온보딩 챗봇"),
    ("솔바람", "캠핑장 예약 알림 서비스"),
]
KO_FOODS = [
    "평양냉면",
    "마라탕",
    "초밥",
    "쌀국수",
    "순두부찌개",
    "떡볶이",
    "칼국수",
    "타코",
    "비빔밥",
    "팟타이",
]
KO_COFFEE = [
    "아이스 아메리카노",
    "오트 라떼",
    "콜드브루",
    "디카페인 라떼",
    "핸드드립 커피",
    "보리차",
]
KO_HOBBIES = [
    "클라이밍",
    "등산",
    "보드게임",
    "베이킹",
    "필름 카메라 사진",
    "테니스",
    "수영",
    "뜨개질",
    "캠핑",
    "자전거 여행",
]
KO_PETS = [("고양이", ["보리", "치즈", "두부"]), ("강아지", ["콩이", "호두", "망고"])]
KO_SEATS = ["창가", "통로"]
KO_AIRLINES = ["대한항공", "아시아나항공", "제주항공", "티웨이항공", "진에어"]
KO_DESTS = ["오사카", "다낭", "타이베이", "후쿠오카", "치앙마이", "강릉", "여수", "삿포로", "경주"]
KO_LEARN = ["일본어", "스페인어", "영어 회화", "독일어", "중국어", "프랑스어"]
KO_BOOKS = [
    ("소설", "아몬드"),
    ("소설", "불편한 편의점"),
    ("판타지 소설", "달러구트 꿈 백화점"),
    ("SF", "지구 끝의 온실"),
    ("과학", "코스모스"),
    ("에세이", "아무튼, 달리기"),
    ("경제경영", "돈의 속성"),
]
KO_MEET = ["1", "2", "3", "4"]

# ---------------------------------------------------------------------------------------
# templates
# ---------------------------------------------------------------------------------------
# Each template: id, kind, category, namespace, src (user | inferred | tool | system | ext),
# variants (one is chosen per subject; a template is used at most once per subject).

EN_TEMPLATES = [
    dict(
        id="editor",
        kind="semantic",
        cat="preference",
        ns="coding-agent",
        src="user",
        variants=[
            "Writes code in {editor} with vim keybindings turned on.",
            "Prefers {editor} for day-to-day coding; suggest extensions for it rather than other IDEs.",
            "Main editor is {editor}, with a light theme during the day.",
        ],
    ),
    dict(
        id="pm",
        kind="semantic",
        cat="preference",
        ns="coding-agent",
        src="user",
        variants=[
            "Uses {pm} for JavaScript projects and expects install commands to match.",
            "Their front-end repos are standardised on {pm}.",
        ],
    ),
    dict(
        id="style",
        kind="semantic",
        cat="preference",
        ns="assistant-web",
        src="user",
        variants=[
            "Likes replies that start with a one-line summary, then the details.",
            "Wants bullet points rather than long paragraphs.",
            "Prefers thorough explanations with links to the official documentation.",
            "Dislikes emoji in replies; keep the tone plain and direct.",
            "Appreciates when trade-offs are laid out as pros and cons before a recommendation.",
        ],
    ),
    dict(
        id="coffee",
        kind="semantic",
        cat="preference",
        ns="assistant-web",
        src="user",
        variants=[
            "Morning drink of choice: {coffee}.",
            "Usually orders {coffee} when meeting people at cafés.",
        ],
    ),
    dict(
        id="cuisine",
        kind="semantic",
        cat="preference",
        ns="assistant-web",
        src="user",
        variants=[
            "Favourite cuisine is {cuisine}.",
            "Enjoys {cuisine} food and likes restaurant suggestions in that direction.",
        ],
    ),
    dict(
        id="seat",
        kind="semantic",
        cat="preference",
        ns="travel-bot",
        src="user",
        variants=[
            "Books {seat} seats on long flights.",
            "Asks for {seat} seats whenever a flight is longer than three hours.",
        ],
    ),
    dict(
        id="airline",
        kind="semantic",
        cat="preference",
        ns="travel-bot",
        src="user",
        variants=[
            "Collects miles with {airline}, so check their fares first.",
            "Flies {airline} when the price difference is small.",
        ],
    ),
    dict(
        id="hotel",
        kind="semantic",
        cat="preference",
        ns="travel-bot",
        src="user",
        variants=[
            "Likes small boutique hotels more than big chains.",
            "Picks hotels within walking distance of a metro station.",
            "Wants a desk and reliable Wi-Fi in any hotel room; often works while travelling.",
        ],
    ),
    dict(
        id="music",
        kind="semantic",
        cat="preference",
        ns="assistant-web",
        src="inferred",
        variants=[
            "Listens to {music} while working; asked for playlist ideas twice.",
            "Seems to enjoy {music}, judging by the playlists they share.",
        ],
    ),
    dict(
        id="meeting",
        kind="semantic",
        cat="preference",
        ns="calendar-agent",
        src="user",
        variants=[
            "Prefers meetings after {meet} local time; mornings are for focused work.",
            "Keeps Fridays free of meetings.",
            "Wants a five-minute buffer between back-to-back calls.",
        ],
    ),
    dict(
        id="units",
        kind="semantic",
        cat="preference",
        ns="assistant-web",
        src="user",
        variants=[
            "Uses metric units, even in recipes.",
            "Wants temperatures in Fahrenheit and distances in miles.",
            "Writes dates as YYYY-MM-DD and wants the same in generated documents.",
        ],
    ),
    dict(
        id="commits",
        kind="semantic",
        cat="preference",
        ns="coding-agent",
        src="user",
        variants=[
            "Writes commit messages in Conventional Commits style (feat:, fix:, chore:).",
            "Squash-merges pull requests and keeps a linear history on main.",
            "Likes small, reviewable pull requests of under 400 changed lines.",
        ],
    ),
    dict(
        id="reading",
        kind="semantic",
        cat="preference",
        ns="assistant-web",
        src="user",
        variants=[
            "Reads mostly {genre}; recently finished {book}.",
            "Mentioned {book} as a favourite and asked for more {genre} in the same vein.",
        ],
    ),
    dict(
        id="hobby",
        kind="semantic",
        cat="preference",
        ns="assistant-web",
        src="user",
        variants=[
            "Spends most weekends {hobby}.",
            "Took up {hobby} this year and likes talking about it.",
        ],
    ),
    dict(
        id="pet",
        kind="semantic",
        cat="identity",
        ns="assistant-web",
        src="user",
        variants=[
            "Has a {pet} named {pet_name}.",
            "{pet_name}, their {pet}, often shows up in video calls.",
        ],
    ),
    dict(
        id="learn",
        kind="semantic",
        cat="preference",
        ns="assistant-web",
        src="user",
        variants=[
            "Is learning {learn} and enjoys the occasional vocabulary tip in replies.",
            "Practises {learn} on the commute; happy to get short example sentences.",
        ],
    ),
    dict(
        id="job",
        kind="semantic",
        cat="identity",
        ns="assistant-web",
        src="user",
        variants=[
            "Works as {job_a} at {company_a}.",
            "Is {job_a}; has been in the field for about {years} years.",
        ],
    ),
    dict(
        id="city",
        kind="semantic",
        cat="identity",
        ns="assistant-web",
        src="user",
        variants=[
            "Lives in {city}.",
            "Based in {city} (time zone {tz}).",
        ],
    ),
    dict(
        id="nickname",
        kind="semantic",
        cat="identity",
        ns="assistant-web",
        src="user",
        variants=[
            "Goes by {nickname} rather than {name}.",
        ],
    ),
    dict(
        id="team",
        kind="semantic",
        cat="identity",
        ns="coding-agent",
        src="inferred",
        variants=[
            "Leads a team of {team_size} engineers.",
            "Appears to be the only {plang} developer on a small team.",
        ],
    ),
    dict(
        id="project",
        kind="semantic",
        cat="project",
        ns="coding-agent",
        src="user",
        variants=[
            "Is building {project}, {project_desc}.",
            "Current main project: {project} — {project_desc}.",
        ],
    ),
    dict(
        id="stack",
        kind="semantic",
        cat="project",
        ns="coding-agent",
        src="user",
        variants=[
            "{project} is written in {plang} with {framework}.",
            "The {project} backend uses {plang}, {framework} and {db}.",
        ],
    ),
    dict(
        id="deploy",
        kind="semantic",
        cat="project",
        ns="coding-agent",
        src="inferred",
        variants=[
            "{project} deploys to {cloud}.",
            "{project} runs on {cloud}, with separate staging and production environments.",
        ],
    ),
    dict(
        id="tests",
        kind="semantic",
        cat="project",
        ns="coding-agent",
        src="user",
        variants=[
            "Tests for {project} use {test_tool}; CI has to stay under ten minutes.",
            "Wants new {project} features to come with {test_tool} tests in the same pull request.",
        ],
    ),
    dict(
        id="side",
        kind="semantic",
        cat="project",
        ns="coding-agent",
        src="user",
        variants=[
            "Maintains {side_project} as a weekend project.",
            "Side project: {side_project}; no deadlines, just for fun.",
        ],
    ),
    dict(
        id="licence",
        kind="semantic",
        cat="constraint",
        ns="coding-agent",
        src="user",
        variants=[
            "Cannot use GPL-licensed dependencies in work projects.",
            "Company policy only allows the approved assistant to see work source code.",
            "Every new dependency at work needs a licence review first.",
        ],
    ),
    dict(
        id="budget",
        kind="semantic",
        cat="constraint",
        ns="travel-bot",
        src="user",
        variants=[
            "Hotel budget is roughly {budget} per night.",
            "Keeps trips under {budget} a night for accommodation unless it is a work trip.",
        ],
    ),
    dict(
        id="browser",
        kind="semantic",
        cat="constraint",
        ns="coding-agent",
        src="user",
        variants=[
            "{project} must keep working on {browser} because of existing customers.",
        ],
    ),
    dict(
        id="laptop",
        kind="semantic",
        cat="constraint",
        ns="coding-agent",
        src="inferred",
        variants=[
            "Works on a {laptop}; avoid tools that only run on other platforms.",
            "Dev machine is a {laptop}.",
        ],
    ),
    dict(
        id="lint",
        kind="procedural",
        cat="workflow",
        ns="coding-agent",
        src="user",
        variants=[
            "Before committing in {project}, run `{lint_cmd}` and the unit tests.",
            "The pre-push routine for {project} is `{lint_cmd}` followed by the fast test suite.",
        ],
    ),
    dict(
        id="prflow",
        kind="procedural",
        cat="workflow",
        ns="coding-agent",
        src="user",
        variants=[
            "Open pull requests as drafts first and ask for review once CI is green.",
            "For {project}, every pull request needs one approval from the platform team before merge.",
        ],
    ),
    dict(
        id="release",
        kind="procedural",
        cat="workflow",
        ns="coding-agent",
        src="user",
        variants=[
            "To release {project}: bump the version, update CHANGELOG.md, tag vX.Y.Z and let CI publish.",
            "Releases of {project} go out on Tuesdays; never deploy on a Friday afternoon.",
        ],
    ),
    dict(
        id="migrations",
        kind="procedural",
        cat="workflow",
        ns="coding-agent",
        src="user",
        variants=[
            "Schema changes in {project} always go through migrations; nobody edits the {db} schema by hand.",
        ],
    ),
    dict(
        id="mailproc",
        kind="procedural",
        cat="workflow",
        ns="mail-assistant",
        src="user",
        variants=[
            "When summarising e-mail, list action items first and quote deadlines word for word.",
            "Draft replies in a friendly but brief tone; the user edits and sends them personally.",
        ],
    ),
    dict(
        id="tripproc",
        kind="procedural",
        cat="workflow",
        ns="travel-bot",
        src="user",
        variants=[
            "For trip plans, give a day-by-day itinerary with transit times between stops.",
            "Compare at least three hotel options in a table with price, distance and rating.",
        ],
    ),
    dict(
        id="traces",
        kind="procedural",
        cat="workflow",
        ns="coding-agent",
        src="inferred",
        variants=[
            "When the user pastes a stack trace, ask which {plang} version they run before proposing a fix.",
        ],
    ),
    dict(
        id="cal",
        kind="semantic",
        cat="schedule",
        ns="calendar-agent",
        src="tool",
        variants=[
            "Calendar sync: recurring one-to-one with their manager every {weekday} at {meet}.",
            "Calendar sync: team retro every other {weekday} afternoon.",
        ],
    ),
    dict(
        id="onboard",
        kind="semantic",
        cat="account",
        ns="assistant-web",
        src="system",
        variants=[
            "Account created through the web onboarding flow; interface language en-US, time zone {tz}.",
        ],
    ),
    dict(
        id="flightmail",
        kind="episodic",
        cat="travel",
        ns="mail-assistant",
        src="ext",
        variants=[
            "From a booking confirmation e-mail: flight to {dest} with {airline} in the autumn.",
            "Hotel confirmation e-mail for a conference trip to {dest}; check-in after 15:00.",
        ],
    ),
]

# episodic events; a persona gets one to three distinct ones
EN_EVENTS = [
    "helped debug a flaky {test_tool} test in {project}; the cause was a timezone-dependent assertion",
    "set up a CI matrix for {project} across two {plang} versions",
    "profiled a slow endpoint in {project} and added a missing index on orders.created_at",
    "drafted a polite reply declining a recruiter's offer",
    "planned a five-day trip to {dest} with a rough budget",
    "reviewed the onboarding copy for {project} and cut it roughly in half",
    "compared three note-taking apps; the user stayed with their current setup",
    "wrote a migration plan for moving {project} off a deprecated payments API",
    "summarised a 40-page vendor contract into a one-page brief",
    "prepared talking points for an upcoming performance review",
    "translated a product announcement into Spanish and checked the tone",
    "refactored the config loading in {project} into a single module",
    "walked through setting up read replicas of {db} for {project}",
    "brainstormed names for {side_project}",
    "outlined a conference talk about lessons learned building {project}",
    "turned meeting notes into a list of tickets for the next sprint",
]
EN_EVENT_FORMS = [
    "Session on {date}: {event}.",
    "{date} — {event}.",
    "On {date} the assistant {event}.",
]

KO_TEMPLATES = [
    dict(
        id="editor",
        kind="semantic",
        cat="preference",
        ns="coding-agent",
        src="user",
        variants=[
            "주 에디터는 {editor}이고 단축키는 기본 설정 그대로 씀",
            "코딩할 때는 {editor|을/를} 쓰고, 테마는 거의 바꾸지 않음",
        ],
    ),
    dict(
        id="pm",
        kind="semantic",
        cat="preference",
        ns="coding-agent",
        src="user",
        variants=[
            "JS 프로젝트에서는 패키지 매니저로 {pm}만 씀",
            "팀 전체가 {pm} 기준으로 lockfile을 관리함",
        ],
    ),
    dict(
        id="style",
        kind="semantic",
        cat="preference",
        ns="assistant-web",
        src="user",
        variants=[
            "답변은 결론부터 말해 주길 원함",
            "비교 설명은 표로 정리해 주면 좋다고 함",
            "전문 용어는 영어 원문을 괄호 안에 같이 적어 달라고 함",
            "예시 코드에는 주석을 한국어로 달아 주길 원함",
        ],
    ),
    dict(
        id="coffee",
        kind="semantic",
        cat="preference",
        ns="assistant-web",
        src="user",
        variants=[
            "아침마다 {coffee} 한 잔으로 하루를 시작함",
            "카페에 가면 거의 항상 {coffee|을/를} 주문함",
        ],
    ),
    dict(
        id="food",
        kind="semantic",
        cat="preference",
        ns="assistant-web",
        src="user",
        variants=[
            "{food|을/를} 좋아해서 점심 메뉴 추천을 자주 부탁함",
            "제일 좋아하는 음식은 {food}",
        ],
    ),
    dict(
        id="seat",
        kind="semantic",
        cat="preference",
        ns="travel-bot",
        src="user",
        variants=[
            "비행기는 {seat} 좌석을 선호함",
            "장거리 비행 때는 꼭 {seat} 쪽 자리를 요청함",
        ],
    ),
    dict(
        id="airline",
        kind="semantic",
        cat="preference",
        ns="travel-bot",
        src="user",
        variants=[
            "마일리지 때문에 가능하면 {airline|을/를} 이용함",
        ],
    ),
    dict(
        id="hobby",
        kind="semantic",
        cat="preference",
        ns="assistant-web",
        src="user",
        variants=[
            "주말에는 주로 {hobby|을/를} 즐김",
            "요즘 {hobby}에 푹 빠져 있다고 함",
        ],
    ),
    dict(
        id="pet",
        kind="semantic",
        cat="identity",
        ns="assistant-web",
        src="user",
        variants=[
            "{pet_name|이라는/라는} 이름의 {pet|을/를} 키움",
            "{pet} {pet_name|이/가} 화상 회의 때 자주 등장함",
        ],
    ),
    dict(
        id="city",
        kind="semantic",
        cat="identity",
        ns="assistant-web",
        src="user",
        variants=[
            "{city}에 살고 있음",
            "{city}에서 주로 재택근무를 함",
        ],
    ),
    dict(
        id="job",
        kind="semantic",
        cat="identity",
        ns="assistant-web",
        src="user",
        variants=[
            "{company}에서 {job|으로/로} 일하고 있음",
            "직업은 {job}, 경력은 {years}년 차",
        ],
    ),
    dict(
        id="project",
        kind="semantic",
        cat="project",
        ns="coding-agent",
        src="user",
        variants=[
            "요즘 {project|이라는/라는} 사이드 프로젝트를 진행 중 — {project_desc}",
            "현재 주력 프로젝트는 {project}({project_desc})",
        ],
    ),
    dict(
        id="stack",
        kind="semantic",
        cat="project",
        ns="coding-agent",
        src="user",
        variants=[
            "{project} 백엔드 스택: {plang} + {framework}, DB는 {db}",
            "{project}의 서버는 {plang|으로/로} 작성되어 있고 프레임워크는 {framework}",
        ],
    ),
    dict(
        id="deploy",
        kind="semantic",
        cat="project",
        ns="coding-agent",
        src="inferred",
        variants=[
            "{project|은/는} {cloud}에 배포함",
            "{project} 운영 환경은 {cloud}, 스테이징은 따로 둠",
        ],
    ),
    dict(
        id="tests",
        kind="semantic",
        cat="project",
        ns="coding-agent",
        src="user",
        variants=[
            "{project} 테스트 도구는 {test_tool}, CI 시간은 10분 이내로 유지하고 싶어 함",
        ],
    ),
    dict(
        id="constraint",
        kind="semantic",
        cat="constraint",
        ns="coding-agent",
        src="user",
        variants=[
            "회사 보안 정책상 외부 서비스에 소스 코드를 올릴 수 없음",
            "GPL 라이선스 라이브러리는 사내 프로젝트에 쓸 수 없음",
            "새 라이브러리를 도입할 때는 팀 리뷰를 먼저 거쳐야 함",
        ],
    ),
    dict(
        id="offhours",
        kind="semantic",
        cat="constraint",
        ns="calendar-agent",
        src="user",
        variants=[
            "오후 7시 이후에는 업무 연락을 받지 않음",
            "점심시간(12시~13시)에는 회의를 잡지 말아 달라고 함",
        ],
    ),
    dict(
        id="meeting",
        kind="semantic",
        cat="preference",
        ns="calendar-agent",
        src="user",
        variants=[
            "회의는 오후 {meet}시 이후로 잡아 달라고 함",
            "화요일과 목요일 오전은 집중 근무 시간이라 회의 불가",
        ],
    ),
    dict(
        id="lint",
        kind="procedural",
        cat="workflow",
        ns="coding-agent",
        src="user",
        variants=[
            "{project} 커밋 전에는 반드시 린트와 단위 테스트를 돌림",
            "PR은 초안으로 먼저 올리고, 리뷰어 두 명이 승인하면 머지함",
        ],
    ),
    dict(
        id="release",
        kind="procedural",
        cat="workflow",
        ns="coding-agent",
        src="user",
        variants=[
            "금요일에는 배포하지 않는 것이 팀 규칙",
            "배포 전에 CHANGELOG를 먼저 갱신하고 태그를 붙임",
        ],
    ),
    dict(
        id="mailproc",
        kind="procedural",
        cat="workflow",
        ns="mail-assistant",
        src="user",
        variants=[
            "메일 요약은 할 일 목록을 맨 위에 두고 마감일은 원문 그대로 인용할 것",
            "답장 초안은 짧고 정중하게, 최종 발송은 본인이 직접 함",
        ],
    ),
    dict(
        id="tripproc",
        kind="procedural",
        cat="workflow",
        ns="travel-bot",
        src="user",
        variants=[
            "여행 일정은 하루 단위로 나누고 이동 시간을 함께 적어 줄 것",
            "숙소는 세 곳 이상을 가격·거리·평점 기준으로 표로 비교해 달라고 함",
        ],
    ),
    dict(
        id="learn",
        kind="semantic",
        cat="preference",
        ns="assistant-web",
        src="user",
        variants=[
            "{learn} 공부 중이라 가끔 관련 표현을 알려 주면 좋아함",
            "출퇴근길에 {learn|을/를} 연습한다고 함",
        ],
    ),
    dict(
        id="reading",
        kind="semantic",
        cat="preference",
        ns="assistant-web",
        src="user",
        variants=[
            "요즘 {genre} 책을 주로 읽음, 최근에 {book_q|을/를} 읽었음",
            "좋아하는 책으로 {book_q|을/를} 꼽음",
        ],
    ),
    dict(
        id="music",
        kind="semantic",
        cat="preference",
        ns="assistant-web",
        src="inferred",
        variants=[
            "작업할 때 잔잔한 피아노 음악을 듣는 것 같음",
            "공유하는 플레이리스트를 보면 인디 밴드 음악을 즐겨 듣는 듯함",
        ],
    ),
    dict(
        id="cal",
        kind="semantic",
        cat="schedule",
        ns="calendar-agent",
        src="tool",
        variants=[
            "캘린더 동기화: 매주 월요일 오전 10시 팀 주간회의",
            "캘린더 동기화: 격주 수요일 오후 4시 1:1 면담",
        ],
    ),
    dict(
        id="onboard",
        kind="semantic",
        cat="account",
        ns="assistant-web",
        src="system",
        variants=[
            "웹 온보딩으로 계정 생성, 언어 설정 ko-KR, 시간대 Asia/Seoul",
        ],
    ),
    dict(
        id="flightmail",
        kind="episodic",
        cat="travel",
        ns="mail-assistant",
        src="ext",
        variants=[
            "예약 확인 메일 기준: {airline} {dest}행 항공권 예약 완료",
            "숙소 예약 확인 메일: {dest} 게스트하우스, 체크인은 오후 3시 이후",
        ],
    ),
]

KO_EVENTS = [
    "{project} 로그인 버그 원인을 찾음 — 세션 만료 시간이 UTC 기준으로 계산되고 있었음",
    "{dest} 3박 4일 여행 일정 초안을 함께 짬",
    "이직용 포트폴리오 README 문장을 다듬음",
    "사내 발표 자료 목차를 같이 정리함",
    "납기 연장을 요청하는 영어 이메일 초안을 작성함",
    "{project} 쿼리 성능 개선 — 인덱스 추가로 응답 시간이 1.2초에서 180ms로 줄어듦",
    "가족 여행 숙소 후보 세 곳을 비교함",
    "RAG 평가 관련 논문 세 편을 요약함",
    "{project} 배포 스크립트의 환경 변수 누락 문제를 해결함",
    "팀 회고 내용을 액션 아이템 다섯 개로 정리함",
    "{learn} 연습용 예문 20개를 만들어 줌",
    "부모님 생신 선물 후보를 예산별로 정리함",
]
KO_EVENT_FORMS = [
    "{date} 세션: {event}",
    "{date} — {event}",
]
