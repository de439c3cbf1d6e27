"""Data for :mod:`auditor.detectors.special_categories`: patterns per category and language.

GDPR article 9 special categories (health, religion or belief, political opinion, sexual
orientation and sex life, racial or ethnic origin, trade-union membership, genetic and
biometric data) and article 10 criminal records, in English and Korean.

Rows, all plain data compiled once by the detector:

* :data:`PATTERNS`: ``(category, language, pattern id, regex, score)``. English regexes are
  compiled case-insensitively (``(?-i:...)`` marks the parts where case matters); a pattern
  says something *about a person* ("diagnosed with", "votes Labour", "goes to church"),
  not merely a topic word ("party", "religion", "healthy").
* :data:`EXCLUSIONS`: ``(category, exclusion id, regex, scope)``: benign look-alikes.
  ``overlap``: a hit overlapping the exclusion's match is dropped ("the Great Depression",
  "European Union"); ``sentence``: a hit in the same sentence as the exclusion is dropped
  ("SSH key fingerprint", "probation period at the new job").
* :data:`ANCHORS`: lower-case literals per category; a category's patterns run only when
  the text contains one of them (every pattern's match contains an anchor; the tests keep
  this honest).

Scores: 0.85 an explicit statement (diagnosis, membership, conviction), 0.75 a strong
indicator (a medication, a practice), 0.6 a weaker one (an observance, a sick leave).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from auditor.vocab import SPECIAL_CATEGORIES

__all__ = [
    "ANCHORS",
    "CATEGORIES",
    "DESCRIPTION_CUES",
    "EXPERIENCERS",
    "EXCLUSIONS",
    "PATTERNS",
    "PERSON_CUES_EN",
    "PERSON_CUES_KO",
    "TOPIC_PENALTY",
    "TOPIC_PRONE",
]

CATEGORIES = SPECIAL_CATEGORIES

# Shared fragments (English).
_RELIGION_ADJ = (
    r"christian|catholic|roman catholic|protestant|muslim|moslem|jewish|jew|hindu|buddhist"
    r"|sikh|mormon|evangelical|baptist|methodist|lutheran|anglican|episcopalian|presbyterian"
    r"|pentecostal|quaker|amish|jain|taoist|shinto|zoroastrian|rastafarian|pagan|wiccan"
    r"|atheist|agnostic|shia|shiite|shi'ite|sunni|orthodox christian|greek orthodox"
    r"|russian orthodox|jehovah'?s witness|scientologist|unitarian|seventh-day adventist"
    r"|adventist|coptic|druze|baha'?i|bahá'í"
)
_RELIGION_NOUN = (
    r"christianity|catholicism|protestantism|islam|judaism|hinduism|buddhism|sikhism"
    r"|mormonism|jainism|taoism|shinto|shintoism|zoroastrianism|paganism|wicca|atheism"
    r"|agnosticism|scientology|orthodoxy"
)
_PARTY_NAMES = (
    r"(?-i:Democrats?|Democratic Party|Republicans?|Republican Party|GOP|Labour|Labour Party"
    r"|Conservatives?|Conservative Party|Tor(?:y|ies)|Lib Dems?|Liberal Democrats?|Liberals?"
    r"|Liberal Party|Greens|Green Party|SNP|Plaid Cymru|UKIP|Reform UK|Brexit Party"
    r"|Libertarians?|Libertarian Party|Socialists?|Socialist Party|Communists?"
    r"|Communist Party|AfD|CDU|CSU|SPD|FDP|Die Linke|Front National|Rassemblement National"
    r"|Podemos|PSOE|Likud|BJP|NDP|Bloc Québécois|Sinn Féin|Fianna Fáil|Fine Gael|DUP|MAGA"
    r"|Trump|Biden|Harris)"
)
_POLITICAL_LEANING = (
    r"conservative|liberal|progressive|socialist|communist|libertarian|marxist|anarchist"
    r"|fascist|nationalist|white nationalist|centrist|leftist|right-winger|left-winger"
    r"|social democrat|democratic socialist|feminist|monarchist|republican|democrat|tory"
)
_QUALIFIER = (
    r"(?:(?:devout|practi[cs]ing|observant|non-practi[cs]ing|lapsed|born-again|strict"
    r"|committed|staunch|lifelong|registered|proud|card-carrying|die-hard|moderate"
    r"|first-generation|second-generation)\s+)?"
)
_BE = r"(?:is|am|'m|are|'re|was|were|became|becomes|identif(?:y|ies|ied) as|raised(?: as)?)"
_CRIMES = (
    r"assault|theft|fraud|murder|manslaughter|robbery|burglary|dui|dwi|drunk driving"
    r"|possession|harassment|stalking|rape|trafficking|embezzlement|shoplifting|vandalism"
    r"|arson|kidnapping|homicide|a crime|an? (?:criminal )?offen[cs]e|a felony"
    r"|a misdemeanou?r|domestic violence|money laundering|tax evasion|perjury|bribery"
)
_MEDICATIONS = (
    r"insulin|metformin|prozac|zoloft|sertraline|fluoxetine|citalopram|escitalopram|lexapro"
    r"|paxil|paroxetine|wellbutrin|bupropion|xanax|alprazolam|valium|diazepam|lorazepam"
    r"|ativan|klonopin|clonazepam|adderall|ritalin|methylphenidate|vyvanse|methadone"
    r"|suboxone|buprenorphine|naltrexone|truvada|antiretrovirals?|antidepressants?"
    r"|antipsychotics?|mood stabili[sz]ers?|warfarin|levothyroxine|prednisone|ozempic"
    r"|semaglutide|wegovy|mounjaro|tirzepatide|oxycodone|oxycontin|chemotherapy|lithium"
)
_CONDITIONS = (
    r"diabetes|type [12] diabetic|diabetic|leuka?emia|lymphoma|melanoma|carcinoma|tumou?r"
    r"|chemotherapy|radiotherapy|hepatitis [abc]|hepatitis|tuberculosis|asthma|epilepsy"
    r"|epileptic|seizures|dementia|alzheimer'?s|parkinson'?s|multiple sclerosis"
    r"|arthritis|hypertension|high blood pressure|heart disease|heart failure"
    r"|heart condition|copd|cystic fibrosis|c[oe]eliac disease|crohn'?s|ulcerative colitis"
    r"|lupus|fibromyalgia|migraines|endometriosis|pcos|infertility|infertile"
    r"|eating disorder|anorexia|bulimia|autism|autistic|adhd|ocd|ptsd|bipolar"
    r"|schizophrenia|schizophrenic|clinical depression|major depressive disorder"
    r"|postpartum depression|anxiety disorder|generali[sz]ed anxiety|social anxiety"
    r"|panic attacks?|panic disorder|sleep apnea|insomnia|alcoholism|opioid addiction"
    r"|drug addiction|alcohol addiction|gambling addiction|substance abuse|chronic pain"
    r"|long covid|dyslexia|tourette'?s|celiac|hiv-positive|hiv positive|(?-i:HIV|AIDS)"
    r"|herpes|chlamydia|syphilis|gonorrh?o?ea|(?-i:HPV|STDs?|STIs?)|mental illness"
    r"|cancer|pregnant|pregnancy|miscarriage|ivf"
)
#: Conditions also said loosely ("exam anxiety", "a bit of depression"): a weaker score alone.
_CONDITIONS_LOOSE = r"depression|anxiety|insomnia|migraines?|burnout"

# fmt: off
PATTERNS: tuple[tuple[str, str, str, str, float], ...] = (
    # -- health, English ---------------------------------------------------------------------
    ("health", "en", "diagnosis",
     r"\b(?:diagnosed with|diagnosis of|suffers? from|suffering from|living with|battling"
     r"|being treated for|treated for|recovering from|in remission from|history of)\s+"
     r"(?:\w+\s+){0,3}?(?:" + _CONDITIONS + r"|" + _CONDITIONS_LOOSE + r")\b", 0.85),
    ("health", "en", "diagnosed", r"\b(?:was|been|got|is|were|recently) diagnosed\b", 0.8),
    ("health", "en", "condition", r"\b(?:" + _CONDITIONS + r")\b", 0.75),
    ("health", "en", "condition_loose", r"\b(?:" + _CONDITIONS_LOOSE + r")\b", 0.6),
    ("health", "en", "medication", r"\b(?:" + _MEDICATIONS + r")\b", 0.75),
    ("health", "en", "takes_medication",
     r"\b(?:takes?|taking|took|on|prescribed|started|stopped|quit)\s+(?:\w+\s+){0,2}?"
     r"(?:medication|meds|pills|inhaler)\b(?:\s+for\b)?", 0.7),
    ("health", "en", "prescription", r"\b(?:prescribed|prescription for)\b", 0.7),
    ("health", "en", "mental_health_care",
     r"\b(?:(?:sees?|seeing|saw|seen|visits?|visiting) (?:a|an|his|her|their|my) "
     r"(?:therapist|psychiatrist|psychologist|counsell?or)|in therapy"
     r"|therapy sessions?|(?:his|her|their|my) (?:therapist|psychiatrist|psychologist)"
     r"|psychiatric (?:care|treatment|ward|hospital|medication)|mental health "
     r"(?:condition|issues?|problems?|crisis|diagnosis|treatment|leave|days?)"
     r"|suicidal|suicide attempt|attempted suicide|self-harm|self harm|in rehab|went to rehab"
     r"|rehab (?:center|centre|facility|program))\b", 0.8),
    ("health", "en", "addiction",
     r"\baddicted to (?:drugs|alcohol|opioids|heroin|cocaine|meth|painkillers|gambling"
     r"|nicotine|pills)\b|\b(?:recovering|former) (?:alcoholic|addict)\b", 0.8),
    ("health", "en", "disability",
     r"\b(?:disability|disabilities|wheelchair user|uses a wheelchair|in a wheelchair"
     r"|hearing aids?|hearing loss|hard of hearing|visually impaired|legally blind"
     r"|partially sighted|(?:is|went|born|partially|colou?r) blind|(?:is|born|profoundly"
     r"|partially) deaf|amputee|paraplegic|quadriplegic|paraly[sz]ed)\b", 0.75),
    ("health", "en", "acute_event",
     r"\b(?:had|suffered|survived|recovering from) a (?:mild |minor |major |massive )?"
     r"(?:stroke|heart attack|seizure|concussion|nervous breakdown)\b"
     r"(?! of (?:luck|genius|inspiration|brilliance|fortune))|\bheart attack\b", 0.75),
    ("health", "en", "hospital",
     r"\b(?:hospitali[sz]ed|admitted to (?:the )?hospital|discharged from (?:the )?hospital"
     r"|in (?:the )?(?:icu|intensive care))\b", 0.7),
    ("health", "en", "surgery",
     r"\b(?:had|having|has|underwent|undergoing|scheduled for|recovering from|after|before)"
     r"\s+(?:a\s+|an\s+|his\s+|her\s+|my\s+|their\s+)?(?:\w+\s+){0,2}?surgery\b", 0.7),
    ("health", "en", "allergy", r"\b(?:allergic to|allergy to|allergies|allergy)\b", 0.65),
    ("health", "en", "pregnancy_related",
     r"\b(?:expecting a baby|expecting twins|maternity leave|fertility treatment"
     r"|had an abortion|weeks pregnant)\b", 0.8),
    ("health", "en", "covid",
     r"\b(?:had|has|tested positive for|caught|got|recovering from)\s+(?:covid|covid-19"
     r"|coronavirus|the flu|pneumonia|sepsis)\b", 0.7),
    ("health", "en", "blood_type", r"\bblood type (?:is )?(?:AB|A|B|O)\s?[+-]", 0.75),
    ("health", "en", "sick_leave", r"\b(?:on sick leave|sick leave|medical leave|sick note)\b",
     0.6),
    ("health", "en", "vaccination",
     r"\b(?:(?:is|am|are|not|fully|got) vaccinated|unvaccinated|vaccination status)\b", 0.6),
    ("health", "en", "depressed", r"\b(?:feels?|feeling|been|am|clinically) depressed\b",
     0.6),
    # -- health, Korean ----------------------------------------------------------------------
    ("health", "ko", "condition",
     r"당뇨|고혈압|(?:위|폐|간|대장|유방|갑상선|췌장|전립선|자궁경부|피부|혈액|난소|방광|신장|식도|뇌)암"
     r"|(?<![가-힣])암\s?(?:진단|투병|환자|수술|치료|판정|4기|3기|2기|1기|말기)|항암|백혈병|림프종"
     r"|우울증|우울장애|조울증|양극성\s?장애|불안\s?장애|공황\s?장애|공황\s?발작|조현병|강박증"
     r"|외상\s?후\s?스트레스|ADHD|자폐|치매|알츠하이머|파킨슨|뇌졸중|뇌경색|뇌출혈|중풍|심근경색"
     r"|협심증|심장병|부정맥|천식|아토피|간염|간경화|결핵|에이즈|HIV|성병|갑상선\s?(?:기능|질환)"
     r"|(?:허리|목)\s?디스크|관절염|류마티스|섭식\s?장애|거식증|폭식증|불면증|수면\s?무호흡"
     r"|난임|불임|임신|입덧|자궁내막증|다낭성\s?난소|알레르기|알러지|뇌전증", 0.8),
    ("health", "ko", "medication",
     r"(?:약|약물|처방약|수면제|진통제|항우울제|신경안정제|항불안제|혈압약|당뇨약|인슐린|스테로이드)"
     r"(?:을|를)?\s?(?:복용|먹고|처방)|복용\s?(?:중|하고|한다|함|했)|항우울제|신경안정제|인슐린"
     r"|투석", 0.75),
    ("health", "ko", "care",
     r"진단(?:을)?\s?받|입원(?:했|중|해|하|함|치료)|수술(?:을)?\s?받"
     r"|수술\s?(?:후|예정|했)|정신과|정신건강의학과|심리\s?(?:상담|치료)|상담\s?치료"
     r"|재활\s?(?:치료|병원)|항암\s?치료|(?:유산|낙태)(?:했|을 했|됐|되었|을 겪|\s?수술)"
     r"|시험관\s?(?:시술|아기)|출산\s?휴가|병가", 0.75),
    ("health", "ko", "disability",
     r"장애인|장애\s?(?:등급|판정|\d급)|(?:시각|청각|지체|지적|발달|언어|정신|뇌병변)\s?장애"
     r"|휠체어|보청기", 0.75),
    ("health", "ko", "mental_crisis",
     r"자해|자살\s?(?:시도|충동|생각|위험)|(?:알코올|알콜|도박|마약|약물|게임)\s?중독", 0.85),
    ("health", "ko", "covid",
     r"(?:코로나|독감|폐렴)(?:에)?\s?(?:확진|양성|걸렸|걸려|감염)", 0.7),
    ("health", "ko", "blood_type", r"혈액형(?:은|이|:)?\s?(?:AB|A|B|O)형", 0.75),
    # -- religion ----------------------------------------------------------------------------
    ("religion", "en", "affiliation",
     r"\b" + _BE + r"\s+(?:an?\s+)?" + _QUALIFIER + r"(?:" + _RELIGION_ADJ + r")\b"
     r"(?!\s+(?-i:[A-Z][a-z]))", 0.85),
    ("religion", "en", "religion_is",
     r"\b(?:religion|faith|religious (?:affiliation|belief|beliefs|background|identity))"
     r"\s*(?:is|:|=|-)\s*(?:" + _RELIGION_NOUN + r"|" + _RELIGION_ADJ + r")\b", 0.85),
    ("religion", "en", "conversion",
     r"\bconvert(?:ed|ing|s)? to (?:" + _RELIGION_NOUN + r"|" + _RELIGION_ADJ + r")\b", 0.85),
    ("religion", "en", "worship",
     r"\b(?:goes|go|going|went|attends?|attending|attended)\s+(?:to\s+)?(?:the\s+)?"
     r"(?:church|mass|mosque|synagogue|temple|gurdwara|sunday service|friday prayers?"
     r"|bible study|shabbat services?)\b(?!\s+(?-i:[A-Z][a-z]))", 0.75),
    ("religion", "en", "observance",
     r"\b(?:observes?|observing|celebrates?|fasts?|fasting|keeps?|keeping)\s+(?:for\s+"
     r"|during\s+|the\s+)?(?:ramadan|lent|yom kippur|shabbat|sabbath|passover|diwali|vesak)\b"
     r"|\b(?:keeps?|keeping|eats? only|only eats?) (?:kosher|halal)\b", 0.7),
    ("religion", "en", "prayer",
     r"\bprays?\s+(?:five times|daily|every day|every morning|every night|to (?:god|allah"
     r"|jesus))\b|\breads? the (?:bible|quran|koran|torah) (?:daily|every)", 0.7),
    ("religion", "en", "clergy",
     r"\b" + _BE + r"\s+(?:an?\s+)?(?:pastor|priest|imam|rabbi|monk|nun|deacon|minister of"
     r" the church)\b", 0.75),
    ("religion", "en", "nonbelief",
     r"\b(?:does ?n[o']t|do ?n[o']t|does not|do not) believe in god\b|\b(?:is|am|'m) not"
     r" religious\b|\bnon-religious\b", 0.7),
    ("religion", "ko", "affiliation",
     r"(?:기독교|개신교|천주교|가톨릭|불교|이슬람교?|힌두교|유대교|원불교|몰몬교|모르몬교|통일교"
     r"|신천지|여호와의\s?증인)\s?(?:신자|교인|교도|신도|신앙|를 믿|을 믿|를 믿는|을 믿는)"
     r"|(?:기독교인|기독교도|크리스천|천주교인|천주교도|불교도|불자|무슬림|힌두교도|개신교인)"
     r"|종교(?:는|가|:)\s?(?:기독교|개신교|천주교|가톨릭|불교|이슬람|힌두교|유대교|원불교|없|무교)"
     r"|(?<![가-힣])무교(?!동)(?:이다|예요|이에요|임|라서|입니다|이고)", 0.85),
    ("religion", "ko", "worship",
     r"(?:교회|성당|사찰|모스크|회당)(?:에|를|을)?\s?(?:다니|다닌|다님|다녀|나가|나간|나감|나갑)|절에\s?(?:다니|다닌|다님|다녀)"
     r"|(?:예배|미사|법회)(?:를|에)?\s?(?:드리|참석|보러|본다|봐)|세례(?:를)?\s?받"
     r"|(?:목사|스님|수녀|랍비|이맘)(?:이다|님이다|로 일|입니다|이에요)", 0.75),
    # -- political opinion -------------------------------------------------------------------
    ("political_opinion", "en", "vote",
     r"\bvot(?:e|es|ed|ing)\s+(?:for\s+)?(?:the\s+)?" + _PARTY_NAMES + r"\b", 0.85),
    ("political_opinion", "en", "membership",
     r"\b(?:member|members|supporter|supporters|donor|activist|volunteer|canvasser"
     r"|campaigner|candidate)\s+(?:of|for)\s+(?:the\s+)?(?:(?-i:[A-Z][\w'.-]*)\s+){1,3}"
     r"(?:Party|party)\b|\b(?:joined|joins|left|quit)\s+the\s+(?:(?-i:[A-Z][\w'.-]*)\s+)"
     r"{1,3}(?:Party|party)\b", 0.85),
    ("political_opinion", "en", "support",
     r"\b(?:supports?|supported|supporting|donat(?:es|ed|ing) to|campaign(?:s|ed|ing) for"
     r"|canvass(?:es|ed|ing) for|volunteer(?:s|ed|ing) for|member of)\s+(?:the\s+)?"
     + _PARTY_NAMES + r"\b", 0.8),
    ("political_opinion", "en", "leaning",
     r"\b" + _BE + r"\s+(?:an?\s+)" + _QUALIFIER + r"(?:" + _POLITICAL_LEANING + r")\b"
     r"(?!\s+(?:arts?|estimates?|amounts?|use|interpretation|dose|approach|reading"
     r"|translation|sprinkling|helping|web|enhancement|rock|jackpot|lens|lenses|disease"
     r"|tax|policy|design|choice|guess|view of))"
     r"|\b" + _BE + r"\s+" + _QUALIFIER + r"(?-i:Democrat|Republican|Tory|Labour voter"
     r"|Labour supporter|Trump supporter|MAGA)\b"
     r"|\bpolitically (?:left|right|conservative|liberal|progressive|centrist)\b"
     r"|\b(?:left|right)-(?:wing|leaning) (?:views|politics|voter|activist)\b", 0.8),
    ("political_opinion", "en", "stance",
     r"\b(?:is|am|'m|are) (?:pro-life|pro-choice|anti-abortion|a brexiteer|a remainer)\b"
     r"|\b(?:voted|votes) (?:leave|remain) in the\b", 0.75),
    ("political_opinion", "en", "protest",
     r"\b(?:attended|joined|marched in|went to|takes part in|took part in)\s+(?:a\s+|the\s+)?"
     r"(?:\w+\s+){0,2}?(?:protest|demonstration|picket)\b", 0.6),
    ("political_opinion", "ko", "party",
     r"(?:더불어민주당|민주당|국민의힘|정의당|진보당|조국혁신당|개혁신당|기본소득당|녹색당|새누리당"
     r"|자유한국당|미래통합당|국민의당|바른미래당|열린우리당|한나라당|노동당|사회민주당)"
     r"(?:을|를|의|에|에서)?\s?(?:지지|당원|투표|찍|가입|후원|소속|뽑)", 0.85),
    ("political_opinion", "ko", "leaning",
     r"(?:진보|보수|좌파|우파|중도)\s?(?:성향|지지자|쪽\s?지지|정당\s?지지)|정치\s?성향"
     r"|지지\s?정당|정당\s?(?:가입|활동|당원)|당원(?:이다|이며|으로|입니다|이에요)"
     r"|(?:촛불|태극기)\s?집회|집회에\s?참(?:석|여|가)|시위에\s?참(?:석|여|가)"
     r"|탄핵\s?(?:찬성|반대)", 0.7),
    # -- sexual orientation, sex life, gender identity ---------------------------------------
    ("sexual_orientation", "en", "orientation",
     r"\b(?:gay|lesbian|bisexual|bi-sexual|pansexual|asexual|homosexual|heterosexual|queer"
     r"|lgbtq?i?a?\+?)\b(?!-lussac)", 0.8),
    ("sexual_orientation", "en", "coming_out",
     r"\bc(?:ame|oming|omes) out (?:as|to (?:his|her|their|my) (?:parents|family|friends"
     r"|mother|father|mom|dad|colleagues))\b", 0.85),
    ("sexual_orientation", "en", "same_sex",
     r"\bsame-sex (?:partner|marriage|couple|relationship|spouse|wedding)\b", 0.75),
    ("sexual_orientation", "en", "gender_identity",
     r"\b(?:transgender|trans (?:woman|man|person|kid|teen)|non-binary|nonbinary"
     r"|genderqueer|gender dysphoria|gender transition|hormone replacement therapy"
     r"|transitioned (?:to|from) (?:male|female|being a (?:man|woman)|a (?:man|woman)))\b",
     0.8),
    ("sexual_orientation", "en", "sex_life",
     r"\b(?:sex life|sexual (?:partners?|history|orientation|preferences?|health)"
     r"|sexually active|polyamorous|swinger|bdsm)\b", 0.75),
    ("sexual_orientation", "ko", "orientation",
     r"동성애|게이(?![트밍지머])|레즈비언|양성애|범성애|무성애|성소수자|퀴어|트랜스젠더|성전환"
     r"|커밍아웃|동성\s?(?:연인|파트너|커플|배우자|결혼|혼인)|이성애자|성적\s?지향|성\s?정체성"
     r"|성생활|LGBT", 0.8),
    # -- racial or ethnic origin -------------------------------------------------------------
    ("ethnic_origin", "en", "ethnicity_is",
     r"\b(?:ethnicity|ethnic (?:origin|background|group|heritage|identity)|racial "
     r"(?:background|identity|origin))\b", 0.7),
    ("ethnic_origin", "en", "identity",
     r"\b" + _BE + r"\s+(?:an?\s+)?" + _QUALIFIER + r"(?:african[- ]american|asian[- ]american"
     r"|hispanic|latin[oax]|latine|caucasian|indigenous|native american|aboriginal"
     r"|first nations|pacific islander|m[aā]ori|biracial|multiracial|mixed[- ]race|romani"
     r"|inuit|m[ée]tis|(?-i:Black|Roma))\b", 0.8),
    ("ethnic_origin", "en", "race_noun",
     r"\b(?-i:Black|White|Asian|Hispanic) (?:woman|man|person|people|family|girl|boy"
     r"|teenager|student|employee|American|British|Canadian|Australian)\b", 0.7),
    ("ethnic_origin", "en", "ethnically",
     r"\bethnically\s+(?!diverse\b|mixed\s+(?:area|city|neighbou?rhood|school|team)\b)"
     r"[A-Za-z][\w-]+", 0.75),
    ("ethnic_origin", "en", "descent",
     r"\bof (?:\w+[- ])?\w+ (?:descent|ancestry)\b", 0.75),
    ("ethnic_origin", "en", "minority",
     r"\b(?:ethnic minority|racial minority|person of colou?r|people of colou?r|woman of"
     r" colou?r|man of colou?r|(?-i:BIPOC|POC))\b", 0.65),
    ("ethnic_origin", "ko", "origin",
     r"혼혈|다문화\s?(?:가정|가족)|조선족|고려인|탈북(?:민|자|했|한)|새터민|흑인|백인"
     r"|(?:동남아|아프리카|중동|중앙아시아)\s?출신|인종(?:은|이|:)|민족(?:은|이|:)"
     r"|이주\s?(?:노동자|민)|귀화(?:했|한|자)", 0.75),
    # -- trade-union membership ----------------------------------------------------------------
    ("trade_union", "en", "membership",
     r"\b(?:member|members|membership|rep|representative|steward|organi[sz]er|delegate"
     r"|official|officer|dues)\s+(?:of|in|for|at|to)\s+(?:the\s+|a\s+|my\s+|his\s+|her\s+"
     r"|their\s+)?(?:[\w.'-]+\s+){0,3}?(?:trade |labou?r )?union\b", 0.85),
    ("trade_union", "en", "union_terms",
     r"\b(?:union member|union membership|union dues|union rep(?:resentative)?"
     r"|shop steward|trade union(?:ist|s)?|labou?r union|unioni[sz]ed|joined (?:the|a)"
     r" (?:\w+ )?union|union card)\b", 0.8),
    ("trade_union", "en", "strike",
     r"\b(?:picket line|went on strike|on strike|strike action|walked out in a strike)\b",
     0.6),
    ("trade_union", "en", "named_union",
     r"\b(?:member of|joined|belongs to|pays dues to)\s+(?:the\s+)?(?-i:Teamsters|AFL-CIO"
     r"|SEIU|UNISON|Unite|GMB|UAW|United Auto Workers|IBEW|CUPE|IG Metall|ver\.di|CGT|CFDT"
     r"|NEA|AFT|CWA|RMT|NEU|UCU)\b|\b(?-i:Teamsters|AFL-CIO)\b", 0.8),
    ("trade_union", "ko", "union",
     r"노조원|노동조합원|노조(?:에|를)?\s?(?:가입|탈퇴)|노동조합(?:에)?\s?(?:가입|탈퇴)"
     r"|노조\s?(?:위원장|간부|대의원|활동|지부장|전임자)|민주노총|한국노총|전교조|금속노조"
     r"|공무원노조|(?:파업|쟁의|단체행동)(?:에)?\s?참(?:여|가|석)", 0.8),
    # -- genetic data --------------------------------------------------------------------------
    ("genetic", "en", "genetic",
     r"\b(?:genetic (?:tests?|testing|results?|screening|disorder|condition|predisposition"
     r"|markers?|mutations?|counsell?ing|data|profile|variants?|risk)|genome (?:sequencing"
     r"|sequence)|whole[- ]genome|dna (?:tests?|testing|results?|samples?|kit|analysis"
     r"|profile)|23andme|ancestrydna|brca ?[12]?(?: gene| mutation| positive| carrier)?"
     r"|carrier of (?:the\s+)?(?:\w+\s+){0,2}gene|gene (?:mutation|variant)|hereditary "
     r"(?:condition|disease|disorder|cancer)|inherited (?:condition|disorder|disease)"
     r"|huntington'?s|sickle[- ]cell|down syndrome|trisomy \d+)\b", 0.8),
    ("genetic", "ko", "genetic",
     r"유전자\s?(?:검사|분석|정보|변이|돌연변이|진단)|유전\s?(?:질환|병|질병|적\s?소인|성\s?질환)"
     r"|유전체\s?(?:분석|검사|정보)|DNA\s?(?:검사|분석)|BRCA|가족력|염색체\s?(?:이상|검사)"
     r"|다운\s?증후군", 0.8),
    # -- biometric data ------------------------------------------------------------------------
    ("biometric", "en", "biometric",
     r"\b(?:fingerprints?|thumbprints?|facial (?:geometry|scans?|templates?|data|images? for"
     r" (?:recognition|verification))|face(?:print|prints| scans?| templates?)|iris (?:scans?"
     r"|patterns?|templates?|images?)|retina(?:l)? scans?|voice ?prints?|voice (?:samples?"
     r"|biometrics)|palm ?prints?|palm vein|vein (?:patterns?|scans?)|hand geometry"
     r"|gait (?:data|signature)|biometric (?:data|templates?|identifiers?|scans?"
     r"|information|ids?|records?|profile))\b", 0.75),
    ("biometric", "ko", "biometric",
     r"지문\s?(?:등록|정보|데이터|스캔|채취)|홍채\s?(?:정보|스캔|데이터|등록)"
     r"|(?:안면|얼굴)\s?(?:인식\s?)?(?:정보|데이터|등록)|정맥\s?(?:정보|등록)"
     r"|생체\s?(?:정보|데이터)|성문\s?(?:정보|등록)", 0.75),
    # a stored template is someone's biometrics, not a topic: no person cue needed
    ("biometric", "ko", "template",
     r"(?:지문|홍채|정맥|성문)\s?템플릿|(?:안면|얼굴)\s?(?:특징\s?(?:점|벡터)|템플릿)", 0.75),
    ("biometric", "en", "template",
     r"\b(?:fingerprint|iris|face|facial|voice|palm|vein)\s+templates?\b", 0.75),
    # -- criminal records (GDPR art. 10) -----------------------------------------------------
    ("criminal_record", "en", "record",
     r"\b(?:criminal (?:record|history|conviction|charges?|background|past)|convicted (?:of"
     r"|for)|conviction for|was convicted|prior convictions?|felony|felon|misdemeanou?r"
     r"|served time|(?:prison|jail) (?:sentence|term|time)|sentenced to|(?:in|out of"
     r"|released from|got out of) (?:prison|jail)|on parole|parolee|ex-con(?:vict)?"
     r"|arrested (?:for|on)|was arrested|pleaded guilty|pled guilty|found guilty"
     r"|sex offender|restraining order against|suspended sentence|(?-i:DUI|DWI)"
     r"|drunk[- ]driving (?:conviction|charge|arrest|offen[cs]e))\b", 0.85),
    ("criminal_record", "en", "charged",
     r"\bcharged with (?:\w+ ){0,2}?(?:" + _CRIMES + r")\b", 0.85),
    ("criminal_record", "en", "probation", r"\bon probation\b", 0.6),
    ("criminal_record", "ko", "record",
     r"(?<![가-힣])전과(?:자|가\s?있|\s?기록|\s?\d+범)|범죄\s?(?:경력|기록|이력)|징역|집행유예"
     r"|실형|벌금형|유죄\s?(?:판결|선고)|구속(?:됐|되었|기소|영장)|체포(?:됐|되었|된)"
     r"|수감(?:됐|되었|중|생활)|복역|출소|가석방|보호관찰|성범죄(?:자|\s?전력)|전자발찌"
     r"|기소(?:됐|되었|유예)|입건(?:됐|되었)|음주운전(?:으로|\s?(?:적발|처벌|전과|단속))", 0.85),
)

EXCLUSIONS: tuple[tuple[str, str, str, str], ...] = (
    ("health", "economic_depression",
     r"\b(?:great|economic|tropical|the) depression\b|\bdepression (?:era|of the \d)", "overlap"),
    ("health", "zodiac",
     r"\b(?:zodiac|star sign|horoscope|astrolog\w*)\b|\b(?:i'?m|is|am|a|an)\s+(?:a\s+)?"
     r"(?-i:Cancer)\b", "sentence"),
    ("health", "heart_attack_idiom",
     r"\b(?:gave|give|gives|giving) (?:me|him|her|them|us|you) a heart attack\b", "overlap"),
    ("health", "lithium_battery", r"\blithium[- ](?:ion|batter\w*|polymer|mine|mining)\b",
     "overlap"),
    ("health", "tumor_software", r"\btumou?r (?:detection|segmentation) (?:model|dataset)\b",
     "overlap"),
    ("health", "allergy_joke",
     r"\ballergic to (?:mornings|meetings|work|mondays|bugs|bad code|nonsense)\b", "overlap"),
    ("health", "anxiety_colloquial", r"\b(?:separation|performance|exam|test) anxiety\b",
     "overlap"),
    ("health", "surgery_metaphor", r"\b(?:code|refactor\w*|database|repo\w*)\b.{0,30}surgery"
     r"|surgery (?:on|to) (?:the )?(?:code|codebase|database|repo\w*)\b", "overlap"),
    ("health", "covid_era", r"\b(?:during|before|after|since) (?:the )?(?:covid|pandemic)\b",
     "overlap"),
    ("health", "ko_server", r"(?:서버|시스템|네트워크|서비스|통신|전산)\s?장애", "overlap"),
    ("health", "ko_diagnostics",
     r"(?:차|자동차|차량|컴퓨터|시스템|보안|서버|네트워크|자가)\s?진단", "overlap"),
    ("religion", "temple_names", r"\b(?:temple|church|mosque) (?-i:[A-Z][a-z]+)", "overlap"),
    ("political_opinion", "social_party",
     r"\b(?:birthday|dinner|tea|pool|house|office|launch|christmas|holiday|garden|surprise"
     r"|bachelor|bachelorette|costume|search|third|working) party\b", "overlap"),
    ("sexual_orientation", "gay_lussac", r"\bgay[- ]lussac\b", "overlap"),
    ("ethnic_origin", "descent_gradient",
     r"\b(?:gradient|steepest|coordinate|stochastic|mirror)\s+descent\b", "sentence"),
    ("ethnic_origin", "word_origin",
     r"\b(?:word|term|name|phrase|dish|recipe|wine|cheese|breed|style)\b.{0,40}\bof \w+ "
     r"(?:descent|ancestry|heritage|origin)\b", "overlap"),
    ("trade_union", "other_unions",
     r"\b(?:european|soviet|african|credit|student|students'?|postal|customs|monetary"
     r"|banking|rugby|football|civil liberties|american civil liberties|economic) union\b"
     r"|\bunion (?:station|square|street|st|jack|type|find|all)\b|\bstate of the union\b",
     "overlap"),
    ("trade_union", "strike_other",
     r"\b(?:lightning|air|hunger|bowling|first|preemptive|pre-emptive) strike\b", "overlap"),
    ("genetic", "genetic_algorithm",
     r"\bgenetic (?:algorithms?|programming|operators?|search)\b"
     r"|\bdna of (?:the|our|this|a|their) (?:company|brand|team|product|game|city)\b"
     r"|유전(?:자)?\s?알고리즘", "overlap"),
    ("biometric", "technical_fingerprint",
     r"\b(?:ssh|gpg|pgp|rsa|ed25519|host|public|key|certificate|cert|tls|ssl|browser|device"
     r"|canvas|digital|audio|font|network|tcp|server|file|document|code) fingerprint(?:s|ing)?"
     r"|\bfingerprint(?:s|ing)? (?:of|for) (?:the |this |a |each |every )?(?:key|certificate"
     r"|cert|file|build|commit|config|schema|server|host|document|request|browser|device)\b"
     r"|\bfingerprint(?:ing)? (?:hash|algorithm|id|string|value|mismatch)\b", "overlap"),
    ("biometric", "technical_context",
     r"\b(?:ssh|gpg|pgp|sha-?\d+|md5|x\.509|known_hosts|tls|ssl|openssl)\b", "sentence"),
    ("biometric", "physical_traces",
     r"\bfingerprints? (?:all over|on the (?:glass|window|screen|door|mirror|lens))\b",
     "overlap"),
    ("criminal_record", "job_probation",
     r"\b(?:probation(?:ary)? period|at work|new job|employment|employee|trial period"
     r"|academic probation|on probation at)\b", "sentence"),
    ("criminal_record", "games_and_media",
     r"\b(?:get out of jail free|jail ?break\w*|monopoly|prison break|orange is the new"
     r" black|escape room)\b", "sentence"),
)

#: Patterns that also fit a text *about a topic* ("advances in cancer treatment", "insulin
#: is a hormone"): without a person cue in the sentence their score drops by
#: :data:`TOPIC_PENALTY` (below the default threshold).
TOPIC_PRONE: frozenset[tuple[str, str, str]] = frozenset({
    ("health", "en", "condition"), ("health", "en", "condition_loose"),
    ("health", "en", "medication"), ("health", "en", "prescription"),
    ("health", "en", "allergy"), ("health", "en", "disability"),
    ("health", "ko", "condition"), ("health", "ko", "disability"),
    ("sexual_orientation", "en", "orientation"), ("sexual_orientation", "en", "same_sex"),
    ("sexual_orientation", "en", "sex_life"), ("sexual_orientation", "en", "gender_identity"),
    ("sexual_orientation", "ko", "orientation"),
    ("ethnic_origin", "en", "ethnicity_is"), ("ethnic_origin", "en", "minority"),
    ("ethnic_origin", "ko", "origin"),
    ("trade_union", "en", "union_terms"), ("trade_union", "en", "strike"),
    ("trade_union", "ko", "union"),
    ("genetic", "en", "genetic"), ("genetic", "ko", "genetic"),
    ("biometric", "en", "biometric"), ("biometric", "ko", "biometric"),
})
TOPIC_PENALTY = 0.35
#: Words that make a sentence about a person (the subject, a relative, someone named), or a
#: sentence that opens with a verb (memory facts often drop the subject: "Takes insulin").
PERSON_CUES_EN = (
    r"\b(?:i|i'm|i've|i'd|me|my|mine|myself|we|our|us|he|she|him|her|his|hers|they|them"
    r"|their|user|user's|users|patient|client|customer|wife|husband|son|daughter|mother"
    r"|father|mom|mum|dad|brother|sister|partner|spouse|friend|boss|colleague|coworker"
    r"|child|kid|baby|grandmother|grandfather|aunt|uncle|cousin|girlfriend|boyfriend"
    r"|fianc[ée]e?|roommate|neighbou?r|employee|tenant|member)\b"
    r"|(?-i:\b[A-Z][a-z]+ (?:has|had|is|was|takes|took|uses|needs|suffers|lives|gets))\b"
    r"|^\W*(?:has|had|have|takes|took|is|was|uses|used|needs|needed|suffers|suffered|lives"
    r"|lived|gets|got|attends|goes|went|recently|currently|diagnosed|allergic|pregnant"
    r"|registered|enrolled|identifies|came|comes|joined|did)\b"
)
PERSON_CUES_KO = (
    r"사용자|유저|저는|제가|저의|저도|나는|내가|나의|그는|그가|그녀|아내|남편|엄마|아빠|어머니"
    r"|아버지|아들|딸|동생|형|누나|언니|오빠|친구|고객|환자|부모|할머니|할아버지|씨는|씨가|님은"
    r"|님이|앓|있다|있음|있어|걸렸|걸려|진단|투병|복용|치료\s?중|받고|겪|등록했|등록함"
    r"|가입했|가입함|이다|이에요|입니다|출신"
)

#: Lower-case literals, one of which every match of the category contains (prefilter).
ANCHORS: dict[str, tuple[str, ...]] = {
    "health": (
        "diagnos", "suffer", "living with", "battling", "treated", "recovering", "remission",
        "history of", "diabet", "leuk", "lymphoma", "melanoma", "carcinoma", "tumo",
        "chemo", "radiotherapy", "hepatitis", "tuberculosis", "asthma", "epilep", "seizure",
        "dementia", "alzheimer", "parkinson", "sclerosis", "arthritis", "hypertension",
        "blood pressure", "heart", "copd", "cystic", "celiac", "coeliac", "crohn", "colitis",
        "lupus", "fibromyalgia", "migraine", "endometriosis", "pcos", "infertil", "eating",
        "anorexia", "bulimia", "autis", "adhd", "ocd", "ptsd", "bipolar", "schizo",
        "depress", "anxiety", "panic", "apnea", "insomnia", "alcohol", "addict", "abuse",
        "chronic", "covid", "dyslexia", "tourette", "hiv", "aids", "herpes", "chlamydia",
        "syphilis", "gonorr", "hpv", "std", "sti", "mental", "cancer", "pregnan",
        "miscarriage", "ivf", "insulin", "metformin", "prozac", "zoloft", "sertraline",
        "fluoxetine", "citalopram", "lexapro", "paxil", "paroxetine", "wellbutrin",
        "bupropion", "xanax", "alprazolam", "valium", "diazepam", "lorazepam", "ativan",
        "klonopin", "clonazepam", "adderall", "ritalin", "methylphenidate", "vyvanse",
        "methadone", "suboxone", "buprenorphine", "naltrexone", "truvada", "antiretrovir",
        "antidepressant", "antipsychotic", "stabili", "warfarin", "levothyroxine",
        "prednisone", "ozempic", "semaglutide", "wegovy", "mounjaro", "tirzepatide",
        "oxycodone", "oxycontin", "lithium", "medication", "meds", "pills", "tablets",
        "inhaler", "injection", "prescri", "therap", "psychiatr", "psycholog", "counsel",
        "suicid", "self-harm", "self harm", "rehab", "disabilit", "wheelchair", "hearing",
        "impaired", "blind", "sighted", "deaf", "amputee", "plegic", "paraly", "stroke",
        "concussion", "breakdown", "hospital", "icu", "intensive care", "surgery",
        "allerg", "expecting", "maternity", "due date", "fertility", "abortion", "flu",
        "pneumonia", "sepsis", "coronavirus", "blood type", "sick", "medical leave", "burnout",
        "vaccinat", "당뇨", "고혈압", "암", "백혈병", "림프종", "우울", "조울", "장애", "공황",
        "조현병", "강박", "스트레스", "adhd", "자폐", "치매", "알츠하이머", "파킨슨", "뇌", "중풍",
        "심근경색", "협심증", "심장", "부정맥", "천식", "아토피", "간염", "간경화", "결핵",
        "에이즈",
        "성병", "갑상선", "디스크", "관절염", "류마티스", "거식증", "폭식증", "불면증", "수면",
        "난임", "불임", "임신", "입덧", "자궁", "난소", "알레르기", "알러지", "간질", "복용", "약",
        "인슐린", "투석", "진단", "판정", "입원", "수술", "정신", "심리", "상담", "재활", "유산",
        "낙태", "시험관", "출산", "병가", "휠체어", "보청기", "자해", "자살", "중독", "코로나",
        "독감", "폐렴", "혈액형",
    ),
    "religion": (
        "christian", "catholic", "protestant", "muslim", "moslem", "jew", "hindu", "buddhis",
        "sikh", "mormon", "evangelical", "baptist", "methodist", "lutheran", "anglican",
        "episcopalian", "presbyterian", "pentecostal", "quaker", "amish", "jain", "taois",
        "shinto", "zoroastrian", "rastafarian", "pagan", "wicca", "atheis", "agnostic",
        "shia", "shiite", "shi'ite", "sunni", "orthodox", "witness", "scientolog",
        "unitarian", "adventist", "coptic", "druze", "baha", "islam", "judaism", "sikhism",
        "church", "mass", "mosque", "synagogue", "temple", "gurdwara", "service", "prayer",
        "bible", "ramadan", "lent", "yom kippur", "shabbat", "sabbath", "passover", "diwali",
        "vesak", "kosher", "halal", "pray", "pastor", "priest", "imam", "rabbi", "monk",
        "nun", "deacon", "minister", "god", "religious", "기독교", "개신교", "천주교",
        "가톨릭", "불교", "이슬람", "힌두교", "유대교", "원불교", "몰몬교", "모르몬교", "통일교",
        "신천지", "여호와", "크리스천", "불자", "무슬림", "종교", "무교", "교회", "성당", "사찰",
        "모스크", "회당", "절에", "예배", "미사", "법회", "세례", "목사", "스님", "수녀", "랍비",
        "이맘",
    ),
    "political_opinion": (
        "vot", "party", "member", "supporter", "donor", "activist", "volunteer", "canvass",
        "campaign", "candidate", "joined", "joins", "left", "quit", "support", "donat",
        "conservative", "liberal", "progressive", "socialist", "communist", "libertarian",
        "marxist", "anarchist", "fascist", "nationalist", "centrist", "leftist", "winger",
        "democrat", "feminist", "monarchist", "republican", "tory", "labour", "trump",
        "maga", "politically", "wing", "leaning", "pro-life", "pro-choice", "abortion",
        "brexiteer", "remainer", "leave", "remain", "protest", "demonstration", "picket",
        "더불어민주당", "민주당", "국민의힘", "정의당", "진보당", "조국혁신당", "개혁신당",
        "기본소득당", "녹색당", "새누리당", "자유한국당", "미래통합당", "국민의당", "바른미래당",
        "열린우리당", "한나라당", "노동당", "사회민주당", "진보", "보수", "좌파", "우파", "중도",
        "정치", "지지", "정당", "당원", "집회", "시위", "탄핵",
    ),
    "sexual_orientation": (
        "gay", "lesbian", "bisexual", "bi-sexual", "pansexual", "asexual", "homosexual",
        "heterosexual", "queer", "lgbt", "came out", "coming out", "comes out", "same-sex",
        "transgender", "trans ", "binary", "genderqueer", "dysphoria", "transition",
        "hormone", "sex life", "sexual", "sexually", "polyamor", "swinger", "bdsm", "kink",
        "동성", "게이", "레즈비언", "양성애", "범성애", "무성애", "성소수자", "퀴어", "트랜스젠더",
        "성전환", "커밍아웃", "이성애", "성적", "정체성", "성생활",
    ),
    "ethnic_origin": (
        "ethnic", "racial", "american", "hispanic", "latin", "caucasian", "indigenous",
        "aboriginal", "first nations", "islander", "maori", "māori", "biracial",
        "multiracial", "mixed", "romani", "inuit", "metis", "métis", "black", "roma",
        "white", "asian", "descent", "ancestry", "heritage", "minority", "colour", "color",
        "bipoc", "poc", "혼혈", "다문화", "조선족", "고려인", "탈북", "새터민", "흑인", "백인",
        "출신", "인종", "민족", "이주", "귀화",
    ),
    "trade_union": (
        "union", "steward", "picket", "strike", "teamsters", "afl-cio", "노조", "노동조합",
        "민주노총", "한국노총", "전교조", "파업", "쟁의", "단체행동",
    ),
    "genetic": (
        "genetic", "genome", "dna", "23andme", "brca", "gene", "hereditary", "inherited",
        "huntington", "sickle", "down syndrome", "trisomy", "유전", "brca", "가족력",
        "염색체", "다운",
    ),
    "biometric": (
        "fingerprint", "thumbprint", "facial", "face", "iris", "retina", "voice", "palm",
        "vein", "gait", "hand geometry", "biometric", "지문", "홍채", "안면", "얼굴", "정맥",
        "생체", "성문",
    ),
    "criminal_record": (
        "criminal", "convict", "felon", "misdemeano", "served time", "prison", "jail",
        "sentence", "parole", "ex-con", "arrested", "guilty", "offender", "restraining",
        "dui", "dwi", "drunk", "charged with", "probation", "전과", "범죄", "징역",
        "집행유예", "실형", "벌금형", "유죄", "구속", "체포", "수감", "복역", "출소", "가석방",
        "보호관찰", "성범죄", "전자발찌", "기소", "입건", "음주운전",
    ),
}
# fmt: on


# -- rows kept as data files (auditor/detectors/data/special_*.yaml) ---------------------------

_DATA_DIR = Path(__file__).with_name("data")


def _load_yaml(name: str) -> dict[str, Any]:
    loaded = yaml.safe_load((_DATA_DIR / name).read_text(encoding="utf-8"))
    if not isinstance(loaded, dict):
        raise ValueError(f"{name}: a mapping expected")
    return loaded


def _extra_patterns() -> tuple[
    tuple[tuple[str, str, str, str, float], ...],
    frozenset[tuple[str, str, str]],
    dict[str, tuple[str, ...]],
]:
    """Rows of ``data/special_patterns.yaml``: patterns, topic-prone ids, extra anchors."""
    rows: list[tuple[str, str, str, str, float]] = []
    prone: set[tuple[str, str, str]] = set()
    anchors: dict[str, list[str]] = {}
    for row in _load_yaml("special_patterns.yaml")["patterns"]:
        category, language, pattern_id = str(row["category"]), str(row["language"]), str(row["id"])
        if category not in CATEGORIES or language not in ("en", "ko"):
            raise ValueError(f"special_patterns.yaml: {pattern_id}: bad category or language")
        rows.append((category, language, pattern_id, str(row["regex"]), float(row["score"])))
        if row.get("topic_prone"):
            prone.add((category, language, pattern_id))
        anchors.setdefault(category, []).extend(str(a).lower() for a in row["anchors"])
    return tuple(rows), frozenset(prone), {c: tuple(a) for c, a in anchors.items()}


_EXTRA_ROWS, _EXTRA_PRONE, _EXTRA_ANCHORS = _extra_patterns()
PATTERNS = PATTERNS + _EXTRA_ROWS
TOPIC_PRONE = TOPIC_PRONE | _EXTRA_PRONE
ANCHORS = {c: ANCHORS[c] + _EXTRA_ANCHORS.get(c, ()) for c in ANCHORS}

_FRAMES = _load_yaml("special_frames.yaml")
#: Sentences that describe a thing (an app, a paper, a market) rather than a person's state.
DESCRIPTION_CUES: dict[str, str] = {k: str(v) for k, v in _FRAMES["description_cues"].items()}
#: Singular experiencers: with one in the sentence, a description cue does not cancel a hit.
EXPERIENCERS: dict[str, str] = {k: str(v) for k, v in _FRAMES["experiencers"].items()}
