"""`marker_safe_link`: a link an answer's `[[n]](link)` marker can carry as it is."""

from __future__ import annotations

import pytest

from webapp.citations.urls import marker_safe_link
from webapp.packets.links import browser_url, domain_of


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://www.irs.gov/p17?x=1&y=[2]#top", "https://www.irs.gov/p17?x=1&y=[2]#top"),
        ("https://example.com/a<b>c", "https://example.com/a%3Cb%3Ec"),
        ("https://example.com/a b\tc", "https://example.com/a%20b%09c"),
        (
            "https://en.wikipedia.org/wiki/Roth_(IRA)",
            "https://en.wikipedia.org/wiki/Roth_%28IRA%29",
        ),
        ("https://example.com/x)y", "https://example.com/x%29y"),
        ('https://example.com/"q"\\`{|}^', "https://example.com/%22q%22%5C%60%7B%7C%7D%5E"),
        ("https://example.com/\u202eevil\u200f", "https://example.com/%E2%80%AEevil%E2%80%8F"),
        ("https://example.com/\u00a0nbsp\u2028", "https://example.com/%C2%A0nbsp%E2%80%A8"),
        ("https://example.com/caf\u00e9/%20ok", "https://example.com/caf\u00e9/%20ok"),
        ("https://example.com/\ud800", "https://example.com/%ED%A0%80"),
    ],
    ids=[
        "plain",
        "angle-brackets",
        "whitespace",
        "balanced-parens",
        "unbalanced-paren",
        "quote-backslash-and-co",
        "bidi-controls",
        "unicode-spaces",
        "letters-and-escapes-kept",
        "lone-surrogate",
    ],
)
def test_what_breaks_a_link_is_percent_encoded(url: str, expected: str) -> None:
    assert marker_safe_link(url) == expected


def test_the_encoded_link_still_opens_the_same_host() -> None:
    link = marker_safe_link("https://www.Example.com/a <b>")
    assert browser_url(link) == link and domain_of(link) == "example.com"
