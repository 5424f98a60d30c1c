"""Where a source opens: seed 001's browser / file / none, extended per target kind."""

from __future__ import annotations

from typing import Any

import pytest

from webapp.citations.targets import (
    AccountsTarget,
    AccountTarget,
    AnalysisTarget,
    CardDocumentTarget,
    CitationAccountRef,
    CitationTarget,
    MarketDataTarget,
    MortgageReferenceTarget,
    PortfolioTarget,
    TaxReferenceTarget,
    WebTarget,
)
from webapp.packets.destinations import (
    AccountChoice,
    AccountPage,
    AccountsPage,
    FileTarget,
    MarketPage,
    NoTarget,
    PortfolioPage,
    WebPage,
    document_target,
)
from webapp.packets.documents import SearchDoc, search_doc_from_json
from webapp.packets.links import browser_url

AMEX = "BxBXxLj1m4HMXBm9WZZmCWVbPjX16EHwv99vp"
CITI = "6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f"
ECFR_XML = (
    "https://www.ecfr.gov/api/versioner/v1/full/2024-03-01/title-12.xml?part=1026&section=1026.6"
)
ECFR_PAGE = "https://www.ecfr.gov/on/2024-03-01/title-12/section-1026.6"

HOSTILE = [
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "\x00javascript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "//evil.example/x",
    "/accounts/x",
    "relative/page",
    "https:evil.example",
    "https:/evil.example",
    "https:\\\\evil.example",
    "https://evil.example\\@good.example",
    "https://good.example/\n",
    " https://good.example/",
    "https://good.example/\u2028",
    "https://good.\u200bexample/",
    "https://",
    "https://good.example:99999/",
    "http://[::1",
    "mailto:me@example.com",
    "file:///etc/passwd",
    "https://good.example/\ud800",
]
HOSTILE_IDS = [
    "javascript",
    "javascript-case",
    "javascript-leading-space",
    "javascript-tab",
    "javascript-nul",
    "data",
    "vbscript",
    "protocol-relative",
    "absolute-path",
    "relative",
    "no-slashes",
    "one-slash",
    "backslashes",
    "backslash-userinfo",
    "trailing-newline",
    "leading-space",
    "line-separator",
    "zero-width-space",
    "no-host",
    "bad-port",
    "bad-ipv6",
    "mailto",
    "file-scheme",
    "surrogate",
]


def doc(**fields: Any) -> SearchDoc:
    return SearchDoc("d", semantic_identifier=fields.pop("title", "Source"), **fields)


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"link": "https://a.example/x"}, WebPage("https://a.example/x")),
        ({"link": "http://a.example"}, WebPage("http://a.example")),
        ({"link": "https://a.example", "file_id": "f1"}, WebPage("https://a.example")),
        ({"file_id": "f1"}, FileTarget("f1")),
        ({"link": "", "file_id": "f1"}, FileTarget("f1")),
        ({"link": "javascript:alert(1)", "file_id": "f1"}, FileTarget("f1")),
        ({"file_id": ""}, NoTarget()),
        ({}, NoTarget()),
        ({"link": ""}, NoTarget()),
    ],
    ids=[
        "link",
        "http-link",
        "link-beats-file",
        "file",
        "empty-link-file",
        "hostile-link-file",
        "empty-file-id",
        "nothing",
        "empty-link",
    ],
)
def test_seed_targets(fields: dict[str, Any], expected: object) -> None:
    assert document_target(doc(**fields)) == expected


@pytest.mark.parametrize("link", HOSTILE, ids=HOSTILE_IDS)
def test_hostile_links_open_nothing(link: str) -> None:
    assert browser_url(link) is None
    assert document_target(doc(link=link)) == NoTarget()
    assert document_target(doc(link=link, target=WebTarget(link))) == NoTarget()
    wire = search_doc_from_json({"document_id": "d", "target": {"kind": "web", "url": link}})
    assert wire is not None
    assert document_target(wire) == NoTarget()


@pytest.mark.parametrize(
    ("target", "fields", "expected"),
    [
        (WebTarget("https://w.example/a"), {}, WebPage("https://w.example/a")),
        (
            WebTarget("https://w.example/a"),
            {"link": "https://w.example/a"},
            WebPage("https://w.example/a"),
        ),
        (
            WebTarget("javascript:x"),
            {"link": "https://w.example"},
            WebPage("https://w.example"),
        ),
        (TaxReferenceTarget(ECFR_XML), {"link": ECFR_PAGE}, WebPage(ECFR_PAGE)),
        (TaxReferenceTarget(ECFR_XML), {}, WebPage(ECFR_PAGE)),
        (
            CardDocumentTarget("https://card.example/guide.pdf"),
            {},
            WebPage("https://card.example/guide.pdf"),
        ),
        (
            MortgageReferenceTarget("https://m.example/rule"),
            {"link": "https://m.example/rule"},
            WebPage("https://m.example/rule"),
        ),
        (TaxReferenceTarget(None), {}, NoTarget()),
        (TaxReferenceTarget(None), {"file_id": "f1"}, FileTarget("f1")),
        (
            CardDocumentTarget(None),
            {"link": "https://c.example"},
            WebPage("https://c.example"),
        ),
        (MortgageReferenceTarget("vbscript:x"), {}, NoTarget()),
        (AnalysisTarget(), {}, NoTarget()),
        (AnalysisTarget(), {"link": "https://n.example"}, WebPage("https://n.example")),
        (AccountTarget(AMEX, "plaid"), {}, AccountPage(AMEX)),
        (
            AccountTarget("acct_with_+/=?chars" + "x" * 4),
            {"link": "https://a.example"},
            AccountPage("acct_with_+/=?charsxxxx"),
        ),
        (AccountTarget("acct\ud800" + "x" * 12), {}, NoTarget()),
        (MarketDataTarget("AAPL"), {}, MarketPage("AAPL")),
        (MarketDataTarget("brk.b"), {}, MarketPage("BRK.B")),
        (MarketDataTarget("^GSPC"), {}, MarketPage("^GSPC")),
        (MarketDataTarget(" A/B?C "), {}, MarketPage("A/B?C")),
        (MarketDataTarget(" "), {}, NoTarget()),
        (MarketDataTarget("\ud800"), {}, NoTarget()),
        (PortfolioTarget(), {}, PortfolioPage()),
        (PortfolioTarget(), {"file_id": "f1"}, PortfolioPage()),
    ],
    ids=[
        "web",
        "web-with-link",
        "web-hostile-url-safe-link",
        "tax-link-is-readable-page",
        "tax-download-humanized",
        "card-document",
        "mortgage-reference",
        "tax-null-url",
        "tax-null-url-file",
        "card-null-url-link",
        "mortgage-hostile-url",
        "analysis",
        "analysis-with-link",
        "account",
        "account-odd-chars",
        "account-surrogate",
        "ticker",
        "ticker-upper",
        "ticker-caret",
        "ticker-slash-trimmed",
        "ticker-blank",
        "ticker-surrogate",
        "portfolio",
        "portfolio-beats-file",
    ],
)
def test_target_kinds(target: CitationTarget, fields: dict[str, Any], expected: object) -> None:
    assert document_target(doc(target=target, **fields)) == expected


TWO_CARDS = AccountsTarget((CitationAccountRef(AMEX, "plaid"), CitationAccountRef(CITI, None)))


def test_accounts_chooser() -> None:
    found = document_target(doc(title="Credit card", target=TWO_CARDS))
    assert found == AccountsPage(
        (
            AccountChoice("Credit card (1 of 2)", AMEX),
            AccountChoice("Credit card (2 of 2)", CITI),
        )
    )


def test_a_chooser_needs_every_account_spellable() -> None:
    # A lone surrogate (from decoded JSON) names no account page: no chooser, the link instead.
    odd = AccountsTarget((CitationAccountRef(AMEX, "plaid"), CitationAccountRef("x\ud800", None)))
    assert document_target(doc(target=odd)) == NoTarget()
    found = document_target(doc(target=odd, link="https://a.example/"))
    assert found == WebPage("https://a.example/")


@pytest.mark.parametrize(
    ("title", "names", "labels"),
    [
        ("Credit card", {AMEX: "Amex card", CITI: "Citi card"}, ["Amex card", "Citi card"]),
        ("Credit card", {AMEX: "Amex card"}, ["Amex card", "Credit card (2 of 2)"]),
        (
            "Credit card",
            {AMEX: "Plaid card", CITI: "via SnapTrade"},
            [
                "Credit card (1 of 2)",
                "Credit card (2 of 2)",
            ],
        ),
        ("Plaid accounts", {}, ["Account (1 of 2)", "Account (2 of 2)"]),
        ("", {CITI: "  "}, ["Account (1 of 2)", "Account (2 of 2)"]),
    ],
    ids=["named", "partly-named", "provider-in-name", "provider-in-title", "blank"],
)
def test_chooser_labels_never_show_a_provider(
    title: str, names: dict[str, str], labels: list[str]
) -> None:
    found = document_target(doc(title=title, target=TWO_CARDS), account_label=names.get)
    assert isinstance(found, AccountsPage)
    assert [label for label, _ in found.choices] == labels
    for label, _ in found.choices:
        assert "plaid" not in label.lower()
        assert "snaptrade" not in label.lower()


def test_targets_read_from_the_wire() -> None:
    wire = search_doc_from_json(
        {
            "document_id": "silvia://your-account/credit-card",
            "semantic_identifier": "Credit card",
            "link": None,
            "target": {
                "kind": "accounts",
                "accounts": [
                    {"accountId": AMEX, "provider": "plaid"},
                    {"accountId": CITI, "provider": "unknown-vendor"},
                ],
            },
        }
    )
    assert wire is not None
    found = document_target(wire)
    assert isinstance(found, AccountsPage)
    assert [account_id for _, account_id in found.choices] == [AMEX, CITI]
