"""Hostile and odd paths for the library readers: decoded, normalised, kept inside the corpus."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from webapp.tools.readers import (
    MAX_PATH_CHARS,
    DocumentRead,
    FolderListing,
    ReaderError,
    normalise_path,
    read_document,
)

TOOL = "read_tax_authority"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A corpora folder with one small tax corpus and a secret just outside it."""
    corpus = tmp_path / "corpora" / "tax-authority"
    (corpus / "irs").mkdir(parents=True)
    (corpus / "irs" / "p1.md").write_text("# Pub 1\n\nSome text.\n")
    (corpus / "irs" / "p1.md.meta.json").write_text(
        json.dumps({"title": "Publication 1", "source_url": "https://www.irs.gov/p1"})
    )
    (corpus / "irs" / "bare.txt").write_text("No heading here.\n")
    (corpus / "irs" / "broken.md").write_text("# Broken sidecar\n")
    (corpus / "irs" / "broken.md.meta.json").write_text("{not json")
    (corpus / "irs" / "badurl.md").write_text("# Bad URL\n")
    (corpus / "irs" / "badurl.md.meta.json").write_text(
        json.dumps({"title": "Bad", "source_url": "javascript:alert(1)", "section": 121})
    )
    (corpus / ".hidden.md").write_text("hidden")
    (tmp_path / "corpora" / "secret.md").write_text("SECRET")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "x.md").write_text("SECRET")
    return tmp_path / "corpora"


REFUSED = [
    ("/etc/passwd", "Absolute"),
    ("//etc/passwd", "Absolute"),
    ("~/notes.md", "Absolute"),
    ("C:/Windows/win.ini", "Absolute"),
    ("../secret.md", "'..'"),
    ("irs/../../secret.md", "'..'"),
    ("irs/..", "'..'"),
    ("%2e%2e/secret.md", "'..'"),
    ("%2E%2E%2Fsecret.md", "'..'"),
    ("%252e%252e/secret.md", "'..'"),
    ("%25252e%25252e/secret.md", "'..'"),
    ("%2f%2fetc%2fpasswd", "Absolute"),
    ("..%2fsecret.md", "'..'"),
    ("irs\\..\\..\\secret.md", "backslash"),
    ("irs%5c..%5csecret.md", "backslash"),
    ("irs/p1.md\x00.txt", "NUL"),
    ("irs/p1.md%00", "NUL"),
    ("irs/\x1bp1.md", "control"),
    ("%ff%fe", "UTF-8"),
    ("a" * (MAX_PATH_CHARS + 1), "too long"),
    ("/".join(["a"] * 40), "too long"),
    ("x" * 300, "too long"),
    (".hidden.md", "Hidden"),
    ("irs/.git/config", "Hidden"),
    ("irs/p1.md.meta.json", "sidecar"),
    ("irs/missing.md", "No document"),
]


@pytest.mark.parametrize(("path", "message"), REFUSED, ids=[repr(p[:40]) for p, _ in REFUSED])
def test_refused_paths_raise_a_clear_reader_error(root: Path, path: str, message: str) -> None:
    with pytest.raises(ReaderError, match=message) as info:
        read_document(TOOL, path, root=root)
    assert "Traceback" not in str(info.value)
    assert "SECRET" not in str(info.value)


@pytest.mark.parametrize(
    "path", [None, 3, b"irs/p1.md", ["irs"]], ids=["none", "int", "bytes", "list"]
)
def test_a_path_that_is_not_text_is_refused(root: Path, path: object) -> None:
    with pytest.raises(ReaderError, match="string"):
        read_document(TOOL, path, root=root)


@pytest.mark.parametrize(
    "tool", ["read_everything", "", "execute_sql"], ids=["made-up", "empty", "other"]
)
def test_an_unknown_tool_is_refused(root: Path, tool: str) -> None:
    with pytest.raises(ReaderError, match="Unknown reader tool"):
        read_document(tool, "irs/p1.md", root=root)


NORMALISED = [
    ("irs/p1.md", "irs/p1.md"),
    ("./irs//p1.md", "irs/p1.md"),
    ("  irs/p1.md  ", "irs/p1.md"),
    ("irs/./p1.md", "irs/p1.md"),
    ("irs%2Fp1.md", "irs/p1.md"),
    ("irs/", "irs"),
    ("", ""),
    ("/", ""),
    (".", ""),
]


@pytest.mark.parametrize(("raw", "clean"), NORMALISED, ids=[repr(r) for r, _ in NORMALISED])
def test_paths_are_normalised_to_relative_posix(raw: str, clean: str) -> None:
    assert normalise_path(raw) == clean


def test_a_document_reads_with_its_sidecar(root: Path) -> None:
    doc = read_document(TOOL, "./irs//p1.md", root=root)
    assert isinstance(doc, DocumentRead)
    assert (doc.path, doc.title, doc.source_url) == (
        "irs/p1.md",
        "Publication 1",
        "https://www.irs.gov/p1",
    )
    assert doc.text.startswith("# Pub 1")
    with pytest.raises(TypeError):
        doc.meta["title"] = "changed"


@pytest.mark.parametrize(
    ("path", "title", "url", "section"),
    [
        ("irs/bare.txt", "bare.txt", None, None),
        ("irs/broken.md", "Broken sidecar", None, None),
        ("irs/badurl.md", "Bad", None, None),
    ],
    ids=["no-sidecar", "broken-sidecar", "bad-url"],
)
def test_missing_or_bad_metadata_degrades_to_safe_values(
    root: Path, path: str, title: str, url: str | None, section: str | None
) -> None:
    doc = read_document(TOOL, path, root=root)
    assert isinstance(doc, DocumentRead)
    assert (doc.title, doc.source_url, doc.section) == (title, url, section)


def test_a_listing_hides_sidecars_and_hidden_files(root: Path) -> None:
    listing = read_document(TOOL, "irs", root=root)
    assert isinstance(listing, FolderListing)
    assert [e.name for e in listing.entries] == ["badurl.md", "bare.txt", "broken.md", "p1.md"]
    top = read_document(TOOL, "", root=root)
    assert isinstance(top, FolderListing)
    assert [e.name for e in top.entries] == ["irs"]


def test_symlinks_out_of_the_corpus_are_refused_and_not_listed(root: Path) -> None:
    corpus = root / "tax-authority"
    os.symlink(root.parent / "outside" / "x.md", corpus / "irs" / "link-out.md")
    os.symlink(root.parent / "outside", corpus / "outdir")
    os.symlink("/etc/passwd", corpus / "passwd")
    os.symlink(corpus / "irs" / "p1.md", corpus / "irs" / "link-in.md")
    for path in ("irs/link-out.md", "outdir", "outdir/x.md", "passwd"):
        with pytest.raises(ReaderError, match="No document"):
            read_document(TOOL, path, root=root)
    inside = read_document(TOOL, "irs/link-in.md", root=root)
    assert isinstance(inside, DocumentRead) and inside.text.startswith("# Pub 1")
    listing = read_document(TOOL, "", root=root)
    assert isinstance(listing, FolderListing)
    assert [e.name for e in listing.entries] == ["irs"]
    names = [e.name for e in read_document(TOOL, "irs", root=root).entries]
    assert "link-in.md" in names and "link-out.md" not in names


def test_a_symlink_loop_is_refused(root: Path) -> None:
    corpus = root / "tax-authority"
    os.symlink(corpus / "loop-b", corpus / "loop-a")
    os.symlink(corpus / "loop-a", corpus / "loop-b")
    with pytest.raises(ReaderError, match="No document"):
        read_document(TOOL, "loop-a", root=root)


def test_a_fifo_is_neither_document_nor_folder(root: Path) -> None:
    os.mkfifo(root / "tax-authority" / "irs" / "pipe.md")
    with pytest.raises(ReaderError, match="neither"):
        read_document(TOOL, "irs/pipe.md", root=root)
    listing = read_document(TOOL, "irs", root=root)
    assert isinstance(listing, FolderListing)
    assert "pipe.md" not in [e.name for e in listing.entries]


def test_a_corpus_cannot_reach_a_sibling_corpus(root: Path) -> None:
    other = root / "mortgage-code"
    other.mkdir()
    (other / "m.md").write_text("# Mortgage\n")
    with pytest.raises(ReaderError):
        read_document(TOOL, "../mortgage-code/m.md", root=root)
    doc = read_document("read_mortgage_authority", "m.md", root=root)
    assert isinstance(doc, DocumentRead) and doc.corpus == "mortgage-code"
