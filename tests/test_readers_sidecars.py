"""A document's `.meta.json` sidecar is read only from inside its own corpus.

Issue 10, item 10: a sidecar that is a symlink pointing out of the corpus was read, so a
link could make any JSON file on the host (its `title`, its `source_url`) part of a citation.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from webapp.tools.readers import MAX_SIDECAR_BYTES, DocumentRead, FolderListing, read_document

TOOL = "read_tax_authority"
OUTSIDE_META = {"title": "Outside title", "source_url": "https://evil.example/x"}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A tax corpus with documents, one honest sidecar, and a JSON file outside the corpus."""
    corpus = tmp_path / "corpora" / "tax-authority"
    (corpus / "irs").mkdir(parents=True)
    (corpus / "irs" / "p1.md").write_text("# Pub 1\n\nSome text.\n")
    (corpus / "irs" / "p1.md.meta.json").write_text(
        json.dumps({"title": "Publication 1", "source_url": "https://www.irs.gov/p1"})
    )
    (corpus / "irs" / "p2.md").write_text("# Pub 2\n\nMore text.\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "meta.json").write_text(json.dumps(OUTSIDE_META))
    # Another corpus beside this one is outside it too.
    (tmp_path / "corpora" / "credit-card-corpus").mkdir()
    (tmp_path / "corpora" / "credit-card-corpus" / "meta.json").write_text(json.dumps(OUTSIDE_META))
    return tmp_path / "corpora"


def _read(root: Path, path: str) -> DocumentRead:
    read = read_document(TOOL, path, root=root)
    assert isinstance(read, DocumentRead)
    return read


def _titles(root: Path, folder: str) -> dict[str, str | None]:
    listing = read_document(TOOL, folder, root=root)
    assert isinstance(listing, FolderListing)
    return {entry.name: entry.title for entry in listing.entries}


@pytest.mark.parametrize(
    "target",
    [
        lambda root: root.parent / "outside" / "meta.json",
        lambda root: root / "credit-card-corpus" / "meta.json",
        lambda root: Path("../../../outside/meta.json"),
    ],
    ids=["absolute-link-out", "link-into-another-corpus", "relative-link-out"],
)
def test_a_sidecar_linking_out_of_the_corpus_is_not_read(root: Path, target: object) -> None:
    sidecar = root / "tax-authority" / "irs" / "p2.md.meta.json"
    os.symlink(target(root), sidecar)  # type: ignore[operator]
    assert sidecar.resolve().read_text() == json.dumps(OUTSIDE_META)  # the link does work
    read = _read(root, "irs/p2.md")
    assert read.title == "Pub 2" and read.source_url is None and dict(read.meta) == {}
    assert _titles(root, "irs")["p2.md"] is None


def test_a_sidecar_linking_inside_the_corpus_is_read(root: Path) -> None:
    os.symlink(
        root / "tax-authority" / "irs" / "p1.md.meta.json",
        root / "tax-authority" / "irs" / "p2.md.meta.json",
    )
    read = _read(root, "irs/p2.md")
    assert read.title == "Publication 1" and read.source_url == "https://www.irs.gov/p1"
    assert _titles(root, "irs") == {"p1.md": "Publication 1", "p2.md": "Publication 1"}


def test_a_plain_sidecar_is_read(root: Path) -> None:
    read = _read(root, "irs/p1.md")
    assert read.title == "Publication 1" and read.source_url == "https://www.irs.gov/p1"


@pytest.mark.parametrize("kind", ["fifo", "folder", "too-large", "loop"])
def test_a_sidecar_that_is_not_a_small_file_is_ignored(root: Path, kind: str) -> None:
    sidecar = root / "tax-authority" / "irs" / "p2.md.meta.json"
    if kind == "fifo":
        os.mkfifo(sidecar)  # reading it would block the worker
    elif kind == "folder":
        sidecar.mkdir()
    elif kind == "too-large":
        sidecar.write_text(json.dumps({"title": "Big", "pad": "x" * MAX_SIDECAR_BYTES}))
    else:
        os.symlink(sidecar, sidecar)
    read = _read(root, "irs/p2.md")
    assert read.title == "Pub 2" and dict(read.meta) == {}
