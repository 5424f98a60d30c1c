"""A web source opens at the passage it was cited for: a text fragment (`#:~:text=`) made from
the cited words, added only where a link is drawn for the browser."""

from __future__ import annotations

from urllib.parse import unquote

import pytest

from webapp.citations.targets import WebTarget
from webapp.packets.destinations import WebPage, document_target
from webapp.packets.documents import SearchDoc
from webapp.packets.links import with_text_fragment
from webapp.web.openers import Opener, opener_for, target_opener

PAGE = "https://www.consumerfinance.gov/an-essential-guide-to-building-an-emergency-fund/"


@pytest.mark.parametrize(
    ("cited", "fragment"),
    [
        ("three to six months", "#:~:text=three%20to%20six%20months"),
        (
            "Aim to save three to six months of essential expenses in an account you can reach",
            "#:~:text=Aim%20to%20save%20three,account%20you%20can%20reach",
        ),
        ("pre-tax, after-tax & Roth", "#:~:text=pre%2Dtax%2C%20after%2Dtax%20%26%20Roth"),
        ("“six months…”", "#:~:text=six%20months"),
        ("keep **3** [months](https://x.example/m)", "#:~:text=keep%203%20months"),
    ],
    ids=[
        "short",
        "long-start-end",
        "delimiters-escaped",
        "quotes-and-ellipsis-trimmed",
        "markdown",
    ],
)
def test_the_cited_words_become_a_text_fragment(cited: str, fragment: str) -> None:
    assert with_text_fragment(PAGE, cited) == PAGE + fragment


def test_a_long_passage_is_named_by_words_that_are_in_it() -> None:
    cited = "one two three four five six seven eight nine ten"
    start, end = unquote(with_text_fragment(PAGE, cited).split("text=")[1]).split(",")
    assert cited.startswith(start) and cited.endswith(end)


def test_a_url_with_its_own_fragment_keeps_it() -> None:
    assert with_text_fragment("https://x.example/p#s2", "limit") == (
        "https://x.example/p#s2:~:text=limit"
    )


@pytest.mark.parametrize("cited", [None, "", "  … "])
def test_nothing_cited_leaves_the_url_alone(cited: str | None) -> None:
    assert with_text_fragment(PAGE, cited) == PAGE


def web_doc(highlights: tuple[str, ...], link: str = PAGE) -> SearchDoc:
    return SearchDoc(
        document_id=link,
        semantic_identifier="Emergency fund",
        link=link,
        blurb="How much to keep",
        source_type="web",
        is_internet=True,
        match_highlights=highlights,
        target=WebTarget(link),
    )


def test_a_cited_web_source_opens_at_its_passage() -> None:
    doc = web_doc(("<hi>three to six months</hi> of expenses",))
    assert document_target(doc) == WebPage(PAGE, "three to six months of expenses")
    opener = opener_for(doc, None, "d")
    assert opener.kind == "browser"
    assert opener.href == PAGE + "#:~:text=three%20to%20six%20months%20of%20expenses"


def test_an_uncited_web_source_opens_at_the_top() -> None:
    assert opener_for(web_doc(()), None, "d").href == PAGE


def test_cited_words_never_make_a_hostile_link() -> None:
    assert target_opener(WebPage("javascript:alert(1)", "three"), "d") == Opener("none")
