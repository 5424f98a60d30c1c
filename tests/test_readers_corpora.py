"""The bundled corpora: every document reads, every sidecar's URL opens as a readable page."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from webapp.citations.sources import READER_CORPORA
from webapp.citations.urls import humanize_citation_url
from webapp.tools.readers import (
    CORPORA_ROOT,
    READER_TOOLS,
    SIDECAR_SUFFIX,
    DocumentRead,
    FolderListing,
    read_document,
)

DOCUMENTS = sorted(
    (tool, path.relative_to(CORPORA_ROOT / corpus).as_posix())
    for tool, corpus in READER_TOOLS.items()
    for path in (CORPORA_ROOT / corpus).rglob("*.md")
)
SIDECARS = sorted(CORPORA_ROOT.rglob(f"*{SIDECAR_SUFFIX}"))


def _read(tool: str, path: str) -> DocumentRead:
    result = read_document(tool, path)
    assert isinstance(result, DocumentRead)
    return result


def test_reader_tools_match_the_citation_layer() -> None:
    assert set(READER_TOOLS) == set(READER_CORPORA)
    for tool, corpus in READER_TOOLS.items():
        assert READER_CORPORA[tool][0] == f"silvia://{corpus}/"


@pytest.mark.parametrize(("tool", "path"), DOCUMENTS, ids=[f"{t}:{p}" for t, p in DOCUMENTS])
def test_every_document_reads_with_a_title_and_text(tool: str, path: str) -> None:
    doc = _read(tool, path)
    assert doc.path == path
    assert doc.corpus == READER_TOOLS[tool]
    assert doc.title and not doc.title.startswith("#")
    assert len(doc.text.split()) > 80  # a few paragraphs, not a stub


@pytest.mark.parametrize("sidecar", SIDECARS, ids=[s.name for s in SIDECARS])
def test_every_sidecar_is_an_object_whose_url_humanizes_to_https(sidecar: Path) -> None:
    meta = json.loads(sidecar.read_text(encoding="utf-8"))
    assert isinstance(meta, dict) and isinstance(meta.get("title"), str)
    url = meta.get("source_url")
    if url is None:
        return
    page = humanize_citation_url(url, meta.get("section"))
    parts = urlsplit(page)
    assert parts.scheme == "https" and parts.hostname
    assert "/api/" not in parts.path and not parts.path.endswith((".zip", ".xml"))


EXPECTED = [
    (
        "read_tax_authority",
        "usc/title-26/section-121.md",
        "https://uscode.house.gov/download/releasepoints/us/pl/119/36/xml_usc26@119-36.zip",
        "121",
        "https://uscode.house.gov/view.xhtml?req=granuleid:USC-prelim-title26-section121",
    ),
    (
        "read_tax_authority",
        "irs/publication-590-a.md",
        "https://www.irs.gov/publications/p590a",
        None,
        "https://www.irs.gov/publications/p590a",
    ),
    (
        "read_mortgage_authority",
        "regulation-z/1026.43.md",
        "https://www.ecfr.gov/api/versioner/v1/full/2025-01-01/title-12.xml"
        "?part=1026&section=1026.43",
        "1026.43",
        "https://www.ecfr.gov/on/2025-01-01/title-12/section-1026.43",
    ),
    (
        "read_mortgage_authority",
        "cfpb/loan-estimate-explained.md",
        "https://www.consumerfinance.gov/owning-a-home/loan-estimate/",
        None,
        "https://www.consumerfinance.gov/owning-a-home/loan-estimate/",
    ),
    (
        "read_credit_card_document",
        "issuers/chase-sapphire-preferred-benefits.md",
        "https://cardbenefits.chase.com/chase-sapphire-preferred",
        None,
        "https://cardbenefits.chase.com/chase-sapphire-preferred",
    ),
    (
        "read_credit_card_document",
        "regulation-z/1026.13.md",
        "https://www.ecfr.gov/api/versioner/v1/full/2025-01-01/title-12.xml?part=1026",
        "1026.13",
        "https://www.ecfr.gov/on/2025-01-01/title-12/section-1026.13",
    ),
    (
        "read_credit_card_document",
        "regulation-z/1026.12.md",
        "https://www.ecfr.gov/api/versioner/v1/full/2025-01-01/title-12.xml?part=1026",
        "1026.12",
        "https://www.ecfr.gov/on/2025-01-01/title-12/section-1026.12",
    ),
]


@pytest.mark.parametrize(
    ("tool", "path", "url", "section", "page"), EXPECTED, ids=[e[1] for e in EXPECTED]
)
def test_required_documents_carry_their_source(
    tool: str, path: str, url: str, section: str | None, page: str
) -> None:
    doc = _read(tool, path)
    assert doc.source_url == url
    assert doc.section == section
    assert doc.meta["source_url"] == url
    assert humanize_citation_url(doc.source_url, doc.section) == page


HOUSE_GUIDES = [
    (
        "read_credit_card_document",
        "guides/disputing-a-card-charge.md",
        "Disputing a credit card charge: a checklist",
    ),
    ("read_tax_authority", "guides/recordkeeping.md", "How long to keep tax records"),
    ("read_mortgage_authority", "guides/escrow-basics.md", "Mortgage escrow accounts: the basics"),
]


@pytest.mark.parametrize(("tool", "path", "title"), HOUSE_GUIDES, ids=[g[0] for g in HOUSE_GUIDES])
def test_each_corpus_has_a_house_guide_with_no_source_url(tool: str, path: str, title: str) -> None:
    doc = _read(tool, path)
    assert doc.source_url is None
    assert "source_url" not in doc.meta
    assert doc.title == title


def test_no_url_document_exists_in_some_corpus() -> None:
    assert any(_read(tool, path).source_url is None for tool, path in DOCUMENTS)


@pytest.mark.parametrize("tool", sorted(READER_TOOLS), ids=sorted(READER_TOOLS))
@pytest.mark.parametrize("root", ["", "/", "."], ids=["empty", "slash", "dot"])
def test_the_corpus_root_lists_folders_with_titles(tool: str, root: str) -> None:
    listing = read_document(tool, root)
    assert isinstance(listing, FolderListing)
    assert listing.path == ""
    assert listing.entries and all(entry.is_folder for entry in listing.entries)
    assert all(entry.title for entry in listing.entries)
    names = [entry.name for entry in listing.entries]
    assert names == sorted(names)


@pytest.mark.parametrize(("tool", "path"), DOCUMENTS, ids=[f"{t}:{p}" for t, p in DOCUMENTS])
def test_a_folder_lists_its_documents_but_not_their_sidecars(tool: str, path: str) -> None:
    folder, _, name = path.rpartition("/")
    listing = read_document(tool, folder + "/")
    assert isinstance(listing, FolderListing)
    assert listing.path == folder
    names = [entry.name for entry in listing.entries]
    assert name in names
    assert not any(n.endswith(SIDECAR_SUFFIX) for n in names)
    entry = next(entry for entry in listing.entries if entry.name == name)
    assert not entry.is_folder
    assert entry.title == _read(tool, path).title
