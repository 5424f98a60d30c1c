"""The app's own pages: the core names them by what they show, the web layer alone spells
their URLs (`webapp/web/links.py`, through `url_for`)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from flask import Flask, request

from webapp.packets.destinations import (
    AccountPage,
    AppPage,
    LibraryPage,
    MarketPage,
    PortfolioPage,
    WebPage,
)
from webapp.packets.documents import SearchDoc
from webapp.web.answers import icon_for
from webapp.web.links import page_href
from webapp.web.openers import Opener, target_opener

CARD = "AtVPgKt5aF8ZFKGcCMHn2zgT"
CORE = Path(__file__).resolve().parent.parent / "webapp" / "packets"
# The app's routes a link could be built for by hand.
ROUTES = ("/accounts", "/markets", "/library", "/portfolio", "/favicon")


@pytest.mark.parametrize(
    ("page", "url"),
    [
        (AccountPage(CARD), f"/accounts/{CARD}"),
        # As encodeURIComponent spells it: nothing in an id becomes structure of the path.
        (AccountPage("acct_with_+/=?charsxxxx"), "/accounts/acct_with_%2B%2F%3D%3Fcharsxxxx"),
        (AccountPage("../../etc/passwd"), "/accounts/..%2F..%2Fetc%2Fpasswd"),
        (AccountPage("a b:c@d#e"), "/accounts/a%20b%3Ac%40d%23e"),
        (MarketPage("AAPL"), "/markets/AAPL"),
        (MarketPage("BRK.B"), "/markets/BRK.B"),
        (MarketPage("^GSPC"), "/markets/%5EGSPC"),
        (MarketPage("A/B?C"), "/markets/A%2FB%3FC"),
        (PortfolioPage(), "/portfolio"),
        (
            LibraryPage("tax-authority", "guides/recordkeeping.md", "a & b"),
            "/library/tax-authority/guides/recordkeeping.md?cite=a+%26+b#cited",
        ),
        (
            LibraryPage("mortgage-code", "guides/escrow-basics.md", None, "https://m.example/"),
            "/library/mortgage-code/guides/escrow-basics.md",
        ),
    ],
    ids=[
        "account",
        "account-odd-chars",
        "account-dot-dot",
        "account-space-colon-at-hash",
        "market",
        "market-dot",
        "market-caret",
        "market-slash-query",
        "portfolio",
        "library-cited",
        "library-bare",
    ],
)
def test_each_page_has_its_url(app: Flask, page: AppPage, url: str) -> None:
    with app.test_request_context():
        assert page_href(page) == url


@pytest.mark.parametrize(
    ("page", "endpoint", "args"),
    [
        (AccountPage(CARD), "accounts.show", {"account_id": CARD}),
        (AccountPage("x/y+z=?%"), "accounts.show", {"account_id": "x/y+z=?%"}),
        (MarketPage("A/B?C"), "accounts.market", {"ticker": "A/B?C"}),
        (PortfolioPage(), "accounts.portfolio", {}),
        (
            LibraryPage("tax-authority", "irs/publication-526.md", "Keep it"),
            "library.read",
            {"corpus": "tax-authority", "path": "irs/publication-526.md"},
        ),
    ],
    ids=["account", "account-odd-chars", "market-slash-query", "portfolio", "library"],
)
def test_each_url_routes_back_to_its_page(
    app: Flask, page: AppPage, endpoint: str, args: dict[str, str]
) -> None:
    with app.test_request_context():
        url = page_href(page)
    # The URL as a browser would send it: percent-escapes decoded, then matched.
    with app.test_request_context(url):
        assert request.url_rule is not None and request.url_rule.endpoint == endpoint
        assert request.view_args == args


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        " javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "//evil.example/x",
        "/accounts/x",
        "https://evil.example\\@good.example",
        "https://good.example/\ud800",
    ],
    ids=[
        "javascript",
        "javascript-space",
        "data",
        "vbscript",
        "protocol-relative",
        "app-path",
        "backslash",
        "surrogate",
    ],
)
def test_a_hostile_web_target_gives_no_link(url: str) -> None:
    # The core never makes one; a WebPage made by hand is checked again as it is drawn.
    assert target_opener(WebPage(url), "d") == Opener("none")


def test_a_web_target_opens_its_own_url() -> None:
    url = "https://www.irs.gov/publications/p17#part"
    opener = target_opener(WebPage(url), "d")
    assert (opener.kind, opener.href) == ("browser", url)


@pytest.mark.parametrize(
    ("link", "icon"),
    [
        ("https://www.irs.gov/pub/p17", "/favicon/irs.gov"),
        ("http://user@news.example:81/", "/favicon/news.example"),
        ("javascript:alert(1)", "/static/icons/generic.svg"),
        (None, "/static/icons/generic.svg"),
    ],
    ids=["plain", "userinfo-port", "javascript", "none"],
)
def test_a_web_sources_icon_is_the_apps_own_route(app: Flask, link: str | None, icon: str) -> None:
    with app.test_request_context():
        assert icon_for(SearchDoc("d", link=link)) == icon


def route_literals(source: str) -> list[str]:
    """Return the string literals of `source` (docstrings aside) that name an app route."""
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and any(route in node.value for route in ROUTES)
    ]


def test_the_core_spells_no_url_of_the_apps_pages() -> None:
    modules = sorted(CORE.glob("*.py"))
    assert CORE / "destinations.py" in modules
    found = {m.name: hits for m in modules if (hits := route_literals(m.read_text()))}
    assert found == {}


def test_the_route_check_would_notice_a_hand_built_url() -> None:
    source = '"""Docs may name /accounts/<id>."""\n\ndef f(t: str) -> str:\n'
    source += '    return f"/markets/{t}" + "/portfolio"\n'
    assert sorted(route_literals(source)) == ["/markets/", "/portfolio"]
