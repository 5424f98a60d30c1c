"""The sheet's sections, the bar's icons, domains, icon routes and relative times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from webapp.citations.parse import parse_citation_target
from webapp.packets.documents import SearchDoc
from webapp.packets.links import display_title, domain_of, time_ago
from webapp.packets.models import MessageStart
from webapp.packets.select import icon_key, select_sources
from webapp.packets.state import PacketStream
from webapp.packets.wire import citation_packet, documents_packet, make_packet


def doc(document_id: str, link: str | None = None, file_id: str | None = None) -> SearchDoc:
    return SearchDoc(document_id, semantic_identifier=document_id, link=link, file_id=file_id)


def selected(docs: list[SearchDoc], cited: list[str], extra: tuple[Any, ...] = ()) -> Any:
    packets = [documents_packet(docs)]
    packets += [citation_packet(n, d) for n, d in enumerate(cited, start=1)]
    return select_sources(PacketStream(1, [*packets, *extra]).state)


def ids(docs: tuple[SearchDoc, ...]) -> list[str]:
    return [d.document_id for d in docs]


WEB_A = doc("a", "https://a.example/1")
WEB_B = doc("b", "https://b.example/1")
WEB_C = doc("c", "https://c.example/1")
WEB_D = doc("d", "https://d.example/1")
FILE = doc("f", file_id="file-1")
ACCOUNT = doc("acct")


@pytest.mark.parametrize(
    ("docs", "cited", "expected"),
    [
        ([WEB_A, WEB_B, WEB_C], ["c", "a"], (["c", "a"], ["b"], [])),
        ([WEB_A, FILE, WEB_B], ["f", "b"], (["b"], ["a"], ["f"])),
        ([WEB_A, FILE], [], ([], ["a"], ["f"])),
        ([WEB_A], ["a", "missing"], (["a"], [], [])),
        ([WEB_A, WEB_B], ["b", "b"], (["b"], ["a"], [])),
        ([], [], ([], [], [])),
        ([FILE, doc("g", file_id="file-2"), WEB_A], ["g"], ([], ["a"], ["g", "f"])),
    ],
    ids=[
        "cited-in-citation-order",
        "files-pulled-out",
        "nothing-cited",
        "missing-skipped",
        "deduped",
        "empty",
        "cited-files-first",
    ],
)
def test_sections(docs: list[SearchDoc], cited: list[str], expected: tuple[list[str], ...]) -> None:
    result = selected(docs, cited)
    assert (ids(result.cited), ids(result.more), ids(result.files)) == expected
    assert result.count == sum(len(section) for section in expected)


def test_final_documents_count_as_sources() -> None:
    final = make_packet(MessageStart((WEB_D,)), turn_index=1)
    result = selected([WEB_A], ["a"], (final,))
    assert ids(result.cited) == ["a"]
    assert ids(result.more) == ["d"]
    assert result.count == 2


@pytest.mark.parametrize(
    ("docs", "cited", "has_sources"),
    [
        ([], [], False),
        ([WEB_A], [], True),
        ([], ["ghost"], True),
    ],
    ids=["nothing", "documents-only", "citations-only"],
)
def test_has_sources(docs: list[SearchDoc], cited: list[str], has_sources: bool) -> None:
    assert selected(docs, cited).has_sources is has_sources


@pytest.mark.parametrize(
    ("docs", "cited", "icons"),
    [
        ([WEB_A, WEB_B, WEB_C, WEB_D], ["d", "c", "b", "a"], ["d", "c", "b"]),
        ([WEB_A, WEB_B, WEB_C], ["a"], ["a", "b", "c"]),
        ([WEB_A, WEB_B, WEB_C, WEB_D], [], ["a", "b", "c"]),
        ([FILE, doc("g", file_id="file-2")], [], ["f"]),
        ([WEB_A, doc("a2", "https://www.A.example/2"), WEB_B], [], ["a", "b"]),
        ([ACCOUNT, doc("other"), WEB_A], ["acct", "other", "a"], ["acct", "a"]),
        ([], [], []),
    ],
    ids=[
        "first-three-cited",
        "cited-then-more",
        "more-when-nothing-cited",
        "files-last",
        "one-per-host",
        "one-generic-icon",
        "none",
    ],
)
def test_icon_docs(docs: list[SearchDoc], cited: list[str], icons: list[str]) -> None:
    assert ids(selected(docs, cited).icon_docs) == icons


@pytest.mark.parametrize(
    ("link", "domain"),
    [
        ("https://www.Example.com/path?q=1", "example.com"),
        ("http://user:secret@Docs.Example.com:8443/x", "docs.example.com"),
        ("https://example.com.", "example.com"),
        ("https://www2.example.com", "www2.example.com"),
        ("https://[2001:db8::1]/", "2001:db8::1"),
        ("https://bücher.example/", "bücher.example"),
        ("ftp://example.com/file", None),
        ("javascript:alert(1)", None),
        ("//example.com/x", None),
        ("/relative/path", None),
        ("example.com", None),
        (" https://example.com", None),
        ("https://exa\tmple.com", None),
        ("https://", None),
        ("https://example.com:notaport/", None),
        ("", None),
        (None, None),
        (42, None),
        ("https://\ud800.example/", None),
    ],
    ids=[
        "www-and-case",
        "userinfo-and-port",
        "trailing-dot",
        "www2-kept",
        "ipv6",
        "unicode",
        "ftp",
        "javascript",
        "protocol-relative",
        "relative",
        "no-scheme",
        "leading-space",
        "tab",
        "no-host",
        "bad-port",
        "empty",
        "none",
        "number",
        "surrogate",
    ],
)
def test_domain_of(link: object, domain: str | None) -> None:
    assert domain_of(link) == domain


NOW = datetime(2024, 5, 10, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("updated_at", "now", "expected"),
    [
        ("2024-05-07T12:00:00Z", NOW, "3 days ago"),
        ("2024-05-07T12:00:00+00:00", NOW, "3 days ago"),
        ("2024-05-07T12:00:00", NOW, "3 days ago"),
        ("2024-05-07T12:00:00Z", NOW.replace(tzinfo=None), "3 days ago"),
        ("2024-05-10T13:00:00+02:00", NOW, "an hour ago"),
        ("2024-05-10T11:59:30Z", NOW.astimezone(timezone(timedelta(hours=-5))), "30 seconds ago"),
        ("2024-05-10", NOW, "12 hours ago"),
        ("2023-05-11T12:00:00Z", NOW, "a year ago"),
        ("2024-05-12T12:00:00Z", NOW, "2 days from now"),
        ("yesterday", NOW, None),
        ("2024-13-40", NOW, None),
        ("", NOW, None),
        (None, NOW, None),
        (1715000000, NOW, None),
        ("0001-01-01T00:00:00+01:00", NOW, None),
        ("9999-12-31T23:59:59-01:00", NOW, None),
        ("2024-05-07\ud800", NOW, None),
    ],
    ids=[
        "zulu",
        "offset",
        "naive-value",
        "naive-now",
        "other-offset",
        "now-in-other-zone",
        "date-only",
        "a-year",
        "future",
        "words",
        "bad-date",
        "empty",
        "none",
        "number",
        "before-year-one",
        "after-year-9999",
        "surrogate",
    ],
)
def test_time_ago(updated_at: object, now: datetime, expected: str | None) -> None:
    assert time_ago(updated_at, now) == expected


def test_time_ago_defaults_to_the_current_time() -> None:
    recent = (datetime.now(UTC) - timedelta(days=2)).isoformat()
    assert time_ago(recent) == "2 days ago"


@pytest.mark.parametrize(
    ("updated_at", "expected"),
    [
        ("9999-12-30T00:00:00Z", "on 9999-12-30"),
        ("9999-12-31T23:59:59+01:00", "on 9999-12-31"),
        ("2031-05-01", "on 2031-05-01"),
        ("2024-05-18T12:00:01Z", "on 2024-05-18"),
        ("2024-05-17T12:00:00Z", "7 days from now"),
        ("2024-05-12T12:00:00Z", "2 days from now"),
        ("1950-01-01T00:00:00Z", "74 years ago"),
        ("1900-01-01T00:00:00Z", "on 1900-01-01"),
        ("0001-01-01T00:00:00Z", "on 0001-01-01"),
    ],
    ids=[
        "year-9999",
        "year-9999-offset",
        "years-ahead",
        "just-past-the-horizon",
        "at-the-horizon",
        "days-ahead",
        "decades-ago",
        "past-a-century",
        "year-one",
    ],
)
def test_time_ago_reads_as_a_date_past_a_sane_horizon(updated_at: str, expected: str) -> None:
    # Issue 10: "7,978 years from now" said nothing a date would not say better.
    assert time_ago(updated_at, NOW) == expected


@pytest.mark.parametrize(
    ("title", "shown"),
    [
        ("plain", "plain"),
        ("a\u202eb", "ab"),
        ("\u2067x\u2069 \u200fy\u200e", "x y"),
        ("\u061c", ""),
        ("tab\there\x00", "tab here"),
        ("  kept  inner  ", "kept  inner"),
        ("zero\u200bwidth", "zero\u200bwidth"),
    ],
    ids=[
        "plain",
        "override",
        "isolates-and-marks",
        "arabic-letter-mark",
        "controls",
        "spaces",
        "other-format-characters-kept",
    ],
)
def test_display_title_takes_out_bidi_controls(title: str, shown: str) -> None:
    assert display_title(title) == shown


@pytest.mark.parametrize(
    ("document", "key"),
    [
        (
            SearchDoc(
                "s",
                target=parse_citation_target(
                    {
                        "kind": "account",
                        "accountId": "AcctAmex0000000000000001",
                        "provider": "plaid",
                    }
                ),
            ),
            "account",
        ),
        (
            SearchDoc(
                "s",
                target=parse_citation_target(
                    {
                        "kind": "accounts",
                        "accounts": [
                            {"accountId": "AcctAmex0000000000000001", "provider": None},
                            {"accountId": "AcctCiti0000000000000002", "provider": None},
                        ],
                    }
                ),
            ),
            "accounts",
        ),
        (SearchDoc("s", target=parse_citation_target({"kind": "portfolio"})), "portfolio"),
        (
            SearchDoc("s", target=parse_citation_target({"kind": "market_data", "ticker": "AAPL"})),
            "market",
        ),
        (
            SearchDoc(
                "s",
                link="https://www.irs.gov/p523",
                target=parse_citation_target(
                    {"kind": "tax_reference", "url": "https://www.irs.gov/p523"}
                ),
            ),
            "tax",
        ),
        (
            SearchDoc("s", target=parse_citation_target({"kind": "card_document", "url": None})),
            "card",
        ),
        (
            SearchDoc(
                "s", target=parse_citation_target({"kind": "mortgage_reference", "url": None})
            ),
            "mortgage",
        ),
        (SearchDoc("s", link="https://www.Example.com/x"), "web:example.com"),
        (SearchDoc("s", file_id="file-1"), "file"),
        (SearchDoc("s"), "generic"),
    ],
    ids=[
        "account",
        "accounts",
        "portfolio",
        "market",
        "tax",
        "card",
        "mortgage",
        "web",
        "file",
        "generic",
    ],
)
def test_each_kind_of_source_has_its_own_icon(document: SearchDoc, key: str) -> None:
    assert icon_key(document) == key


def test_the_bar_draws_icons_from_cited_then_more_then_files() -> None:
    docs = [doc("f", file_id="file-1"), WEB_B, WEB_A]
    assert ids(selected(docs, ["a"]).icon_docs) == ["a", "b", "f"]
