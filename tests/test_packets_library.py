"""Library documents open in the app's reader: `document_target` returns a `LibraryPage`."""

from __future__ import annotations

import pytest

from webapp.citations.targets import (
    CardDocumentTarget,
    MortgageReferenceTarget,
    TaxReferenceTarget,
    WebTarget,
)
from webapp.packets.destinations import (
    MAX_CITE_CHARS,
    LibraryPage,
    NoTarget,
    WebPage,
    cite_words,
    document_target,
)
from webapp.packets.documents import SearchDoc

IRS_526 = "https://www.irs.gov/publications/p526"
SHELF = {("tax-authority", IRS_526): "irs/publication-526.md"}


def finder(corpus: str, url: str) -> str | None:
    return SHELF.get((corpus, url))


@pytest.mark.parametrize(
    ("source", "target", "corpus", "path"),
    [
        (
            "silvia://tax-authority/guides/recordkeeping.md",
            TaxReferenceTarget(None),
            "tax-authority",
            "guides/recordkeeping.md",
        ),
        (
            "silvia://credit-card-corpus/guides/disputing-a-card-charge.md",
            CardDocumentTarget(None),
            "credit-card-corpus",
            "guides/disputing-a-card-charge.md",
        ),
        (
            "silvia://mortgage-code/guides/escrow-basics.md",
            MortgageReferenceTarget(None),
            "mortgage-code",
            "guides/escrow-basics.md",
        ),
    ],
    ids=["tax", "card", "mortgage"],
)
def test_a_document_with_no_url_opens_in_the_reader(
    source: str,
    target: TaxReferenceTarget | CardDocumentTarget | MortgageReferenceTarget,
    corpus: str,
    path: str,
) -> None:
    doc = SearchDoc(source, "Guide", target=target, match_highlights=("Keep  it\n3 years.",))
    assert document_target(doc) == LibraryPage(corpus, path, "Keep it 3 years.", None)


def test_a_document_with_a_url_opens_in_the_reader_and_keeps_its_url() -> None:
    doc = SearchDoc(
        IRS_526,
        "Publication 526",
        link=IRS_526,
        target=TaxReferenceTarget(IRS_526),
        match_highlights=("", "You <hi>can</hi>"),
    )
    assert document_target(doc, library_path=finder) == LibraryPage(
        "tax-authority", "irs/publication-526.md", "You can", IRS_526
    )


def test_a_url_the_library_does_not_hold_still_opens_in_the_browser() -> None:
    url = "https://www.irs.gov/publications/p17"
    doc = SearchDoc(url, "Publication 17", link=url, target=TaxReferenceTarget(url))
    assert document_target(doc, library_path=finder) == WebPage(url)
    assert document_target(doc) == WebPage(url)


@pytest.mark.parametrize(
    ("source", "target"),
    [
        # Another corpus's path under a tax citation opens nothing of the library's.
        ("silvia://credit-card-corpus/guides/disputing-a-card-charge.md", TaxReferenceTarget(None)),
        (
            "silvia://tax-authority/../mortgage-code/guides/escrow-basics.md",
            TaxReferenceTarget(None),
        ),
        ("silvia://tax-authority/.hidden", TaxReferenceTarget(None)),
        ("silvia://tax-authority/", TaxReferenceTarget(None)),
        ("silvia://tax-authority/guides//recordkeeping.md", TaxReferenceTarget(None)),
        ("silvia://tax-authority/a\nb", TaxReferenceTarget(None)),
        ("silvia://tax-authority/guides/recordkeeping.md", WebTarget("https://x.example")),
    ],
    ids=["wrong-corpus", "dot-dot", "hidden", "no-path", "empty-segment", "control", "web"],
)
def test_a_library_link_never_names_a_path_outside_its_corpus(
    source: str,
    target: TaxReferenceTarget | WebTarget,
) -> None:
    assert not isinstance(document_target(SearchDoc(source, target=target)), LibraryPage)
    if not isinstance(target, WebTarget):
        assert document_target(SearchDoc(source, target=target)) == NoTarget()


def test_a_long_passage_is_cut_at_a_word() -> None:
    words = ("word " * 200).strip()
    cite = cite_words(words)
    assert cite is not None and len(cite) <= MAX_CITE_CHARS and words.startswith(cite)
    assert cite.endswith("word")
    assert cite_words("x" * 1000) == "x" * MAX_CITE_CHARS
    assert cite_words(" \n<hi></hi> ") is None
