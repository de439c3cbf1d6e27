"""A negated alternative that rules out what another memory states
(auditor.detectors.frame_denials) and the candidate pairs it adds.

Every fact here is written for these tests (no corpus text)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from auditor.detectors.base import MemoryView
from auditor.detectors.contradiction import ContradictionDetector
from auditor.detectors.frame_denials import (
    denied_alternative,
    denied_index_keys,
    on_occasion,
    skeleton_keys,
)
from auditor.detectors.frame_occasions import dated_past

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("older", "newer", "newer_denies"),
    [
        (
            "Yara's team keeps its designs in Figma.",
            "Yara's team works in Penpot, not Figma.",
            True,
        ),
        (
            "Orders groceries through Ocado, never Tesco.",
            "Gets the weekly groceries from Tesco.",
            False,
        ),
        ("Sends reports as PDF files.", "Sends reports as Word files rather than PDFs.", True),
        ("도윤은 일정을 구글 캘린더에 적는다.", "도윤은 일정을 캘린더 말고 아웃룩에 적는다.", True),
        (
            "Keeps her reading notes in Bear.",
            "Moved the notes to Logseq and no longer uses Bear.",
            True,
        ),
        (
            "Uses Slack for team chat.",
            "Stopped using Slack last month; the team is on Discord.",
            True,
        ),
        # a tool dropped (a capitalised name only)
        ("Vela uses Sentry for errors.", "The team dropped Sentry in March.", True),
        # a thing one is said not to have, against a memory that has it
        ("Rafael rides his bike to the studio.", "Rafael doesn't own a bike anymore.", True),
        ("하준이는 차가 없어서 지하철을 탄다.", "하준이의 차는 검은색 쏘렌토다.", False),
        ("하준이는 강아지가 없다.", "하준이는 작은 강아지를 키운다.", False),
    ],
)
def test_a_stated_value_ruled_out_as_an_alternative(
    older: str, newer: str, newer_denies: bool
) -> None:
    denial = denied_alternative(older, newer)
    assert denial is not None
    assert denial.newer_denies is newer_denies
    denying, stated = (newer, older) if newer_denies else (older, newer)
    said = stated[slice(*denial.stated_span)].lower()
    denied = denying[slice(*denial.denying_span)].lower()
    assert said.startswith(denied) or denied.startswith(
        said
    )  # "PDF" / "PDFs", "캘린더에" / "캘린더"


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Yara's team works in Penpot.", "Yara's team works in Penpot, not Figma."),  # detail
        ("Yara's brother keeps his designs in Figma.", "Yara works in Penpot, not Figma."),
        ("도윤은 아침에 커피 대신 보리차를 마신다.", "도윤은 아침마다 커피 대신 보리차를 마셔요."),
        ("Used to keep designs in Figma.", "Works in Penpot, not Figma."),  # a past state
        (  # the stating memory denies the phrase itself; the shared first word is not enough
            "The club was not called the Northern Rovers but the Southern Rovers.",
            "Its real name was the Southern Rovers, not the Northern Rovers.",
        ),
        ("Figma " * 80 + "is used.", "Works in Penpot, not Figma."),  # a long text is not read
        ("Uses Notion for notes.", "No longer uses Evernote."),  # given up, never stated
        ("Picks the kids up from school at 3.", "Dropped the kids at school early today."),
        # a relative's thing, and a lack of time against a "시간" that is no possession
        ("하준이는 차가 없다.", "하준이 아내의 차는 검은색 쏘렌토다."),
        ("하준이는 요즘 운동할 시간이 없다.", "하준이의 출근 시간은 오전 9시다."),
    ],
)
def test_no_denial(older: str, newer: str) -> None:
    assert denied_alternative(older, newer) is None


def test_index_keys_of_denied_words() -> None:
    assert denied_index_keys("Works in Penpot, not Figma.") == ["w:figma"]
    assert denied_index_keys("Works in Penpot.") == []
    assert denied_index_keys("Analysis in Python, never R.") == []  # one letter: no index key
    # a Korean noun one lacks, with the particles its index keys carry ("w:차는")
    keys = denied_index_keys("하준이는 차가 없다.")
    assert "w:차는" in keys and "w:차" in keys


def test_a_denier_meets_the_memory_that_states_the_word() -> None:
    """The two facts share no other content word, so only the denial makes them a pair."""
    facts = [
        "Sells her ceramics on Etsy.",
        "Lunch is usually soup.",
        "The shop runs on Shopify, not Etsy.",
    ]
    views = [
        MemoryView(
            f"m{i}", "user:t", f, "user", created_at=T0 + timedelta(days=i), content_hash=f"h{i}"
        )
        for i, f in enumerate(facts)
    ]
    det = ContradictionDetector()
    pairs = det.candidates(views, [det.keys(v) for v in views])
    assert (0, 2) in pairs


@pytest.mark.parametrize(
    ("text", "occasion"),
    [
        ("When it snows, Sam takes the bus.", True),
        ("Sam drives, but when it snows he takes the bus.", True),
        ("On rainy days Sam takes a taxi instead of the subway.", True),
        ("샘은 비 오는 날에는 지하철 대신 택시를 탄다.", True),
        ("Sam stopped cycling when he was 20.", False),  # a time, no exception
        ("Asks what happens if the server is down.", False),
        ("Sam takes the subway.", False),
    ],
)
def test_an_exception_on_an_occasion(text: str, occasion: bool) -> None:
    """A clause that opens with "when" / "if", "on rainy days", "비 오는 날에는": what the
    fact says holds on that occasion, so it denies nothing of the rule."""
    assert on_occasion(text) is occasion


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        (
            "Uses Trucker Path to find parking.",
            "Only uses another app now; she deleted Trucker Path.",
        ),
        ("장부는 엑셀 하나로 관리한다.", "장부는 엑셀은 안 쓰고 앱으로 관리한다."),
        ("Her invoices go out through QuickBooks.", "인보이스는 퀵북스 안 쓰고 엑셀로 만든다."),
        ("Avoids MATLAB completely.", "Runs all lab analysis in MATLAB."),  # "avoids"
        ("Keeps all client invoices in Notion.", "요즘은 Notion은 아예 열지도 않는다."),
    ],
)
def test_a_tool_not_used_against_the_same_tool_used(older: str, newer: str) -> None:
    assert denied_alternative(older, newer) is not None


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        # both rule commas out: the stated word is negated after it, in Korean
        ("쉼표를 사용하지 마시고 짧게 써 주세요.", "쉼표를 사용하지 않고 목록을 작성한다."),
        # a Korean word that only sounds like an English one is no loanword of it
        ("Priya maintains a budgeting app.", "프리야는 긴 문단 대신 짧은 목록을 원한다."),
        # a request ("사용하지 마세요") is no fact about the person
        ("단어 대 단어로 반복해 주세요.", "'past'라는 단어는 사용하지 마세요."),
    ],
)
def test_no_tool_denial(older: str, newer: str) -> None:
    assert denied_alternative(older, newer) is None


def test_a_korean_tool_not_used_meets_its_latin_name_as_a_candidate() -> None:
    keys = denied_index_keys("고객 사진은 픽시셋 안 쓰고 드라이브 링크로 보낸다.")
    assert set(skeleton_keys("w:pixieset")) & set(keys)
    assert not set(skeleton_keys("w:gallery")) & set(keys)
    # the index holds stems ("QuickBooks" as "quickbook"): the skeleton without its S meets it
    keys = denied_index_keys("인보이스는 퀵북스 안 쓰고 엑셀로 만든다.")
    assert set(skeleton_keys("w:quickbook")) & set(keys)


@pytest.mark.parametrize(
    ("text", "dated"),
    [
        ("Switched from Sketch to Figma back in 2021.", True),
        ("2019년에 서울로 이사했다.", True),
        ("Uses Figma for all design work.", False),
        ("Switched to Figma last year.", False),  # no year: not read as dated
    ],
)
def test_a_dated_past_event(text: str, dated: bool) -> None:
    """A fact that tells a past event with its year is history: a later denial of what
    it states is no conflict (auditor/detectors/frame_reading.py)."""
    assert dated_past(text) is dated
