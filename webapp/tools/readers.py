"""The three library readers: one corpus each, a file with its `.meta.json` sidecar, or a folder.

docs/specs.md#tools-and-data: `read_tax_authority`, `read_credit_card_document` and
`read_mortgage_authority` share this reader. A path is the model's input, so it is treated
as hostile: it is decoded first and then checked, and whatever it names must resolve inside
its own corpus. So must its `.meta.json` sidecar: a sidecar that is a symlink out of the
corpus (or not a plain file, or larger than MAX_SIDECAR_BYTES) is not read, and the document
reads as if it had none.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from urllib.parse import unquote, urlsplit

from ..tool_registry import TOOLS, CorpusName

CORPORA_ROOT = Path(__file__).resolve().parent.parent / "data" / "corpora"
# Each library reader's corpus, from the registry of tools.
READER_TOOLS: Mapping[str, CorpusName] = MappingProxyType(
    {spec.name: spec.corpus for spec in TOOLS if spec.corpus is not None}
)
SIDECAR_SUFFIX = ".meta.json"
MAX_PATH_CHARS = 512
MAX_SEGMENTS = 16
MAX_DOCUMENT_BYTES = 1_000_000
MAX_SIDECAR_BYTES = 64 * 1024

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DRIVE = re.compile(r"^[A-Za-z]:")
_HEADING = re.compile(r"^#+\s+(.+?)\s*$", re.MULTILINE)


class ReaderError(ValueError):
    """A path the reader refuses or cannot find; the message is safe to show the model."""


@dataclass(frozen=True, slots=True)
class DocumentRead:
    """One corpus file with what its sidecar says about it."""

    tool: str
    corpus: CorpusName
    path: str
    title: str
    text: str
    source_url: str | None
    section: str | None
    meta: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class FolderEntry:
    """One file or folder inside a listed folder."""

    name: str
    is_folder: bool
    title: str | None


@dataclass(frozen=True, slots=True)
class FolderListing:
    """The documents and folders directly inside one corpus folder."""

    tool: str
    corpus: CorpusName
    path: str
    entries: tuple[FolderEntry, ...]


def _decoded(raw: str) -> str:
    # Decode until stable so that `%252e%252e` cannot slip past as `%2e%2e` and then `..`.
    value = raw
    for _ in range(4):
        decoded = unquote(value, errors="strict")
        if decoded == value:
            return value
        value = decoded
    raise ReaderError("The path is encoded too many times.")


def normalise_path(raw: object) -> str:
    """Return `raw` as a clean relative posix path ('' for the root), or raise ReaderError."""
    if not isinstance(raw, str):
        raise ReaderError("The path must be a string.")
    if len(raw) > MAX_PATH_CHARS:
        raise ReaderError(f"The path is too long (at most {MAX_PATH_CHARS} characters).")
    try:
        value = _decoded(raw).strip()
    except UnicodeDecodeError:
        raise ReaderError("The path is not valid percent-encoded UTF-8.") from None
    if "\x00" in value:
        raise ReaderError("The path contains a NUL byte.")
    if _CONTROL.search(value):
        raise ReaderError("The path contains control characters.")
    if "\\" in value:
        raise ReaderError("Use forward slashes: backslashes are not allowed in a path.")
    if value in ("", "/", "."):
        return ""
    if value.startswith(("/", "~")) or _DRIVE.match(value):
        raise ReaderError("Absolute paths are not allowed; give a path relative to the corpus.")
    segments = [part for part in value.split("/") if part not in ("", ".")]
    if any(part == ".." for part in segments):
        raise ReaderError("The path may not go up a folder ('..').")
    if any(part.startswith(".") for part in segments):
        raise ReaderError("Hidden files are not part of the corpus.")
    if len(segments) > MAX_SEGMENTS or any(len(part) > 255 for part in segments):
        raise ReaderError("The path is too long.")
    return "/".join(segments)


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve(strict=True).is_relative_to(root)
    except (OSError, RuntimeError):  # a missing file or a symlink loop
        return False


def _sidecar(path: Path, root: Path) -> dict[str, object]:
    sidecar = path.with_name(path.name + SIDECAR_SUFFIX)
    try:
        # Resolved first: whatever the sidecar's name points at must be a file in the corpus.
        resolved = sidecar.resolve(strict=True)
        if not resolved.is_relative_to(root):
            return {}
        # No link followed after the check, and never a FIFO or device to block on.
        fd = os.open(resolved, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                return {}
            raw = f.read(MAX_SIDECAR_BYTES + 1)
        if len(raw) > MAX_SIDECAR_BYTES:
            return {}
        data = json.loads(raw.decode("utf-8"))
    except (OSError, RuntimeError, ValueError):
        return {}  # no sidecar, or one we cannot read: the document still reads, untitled
    return data if isinstance(data, dict) else {}


def _text_field(meta: Mapping[str, object], name: str) -> str | None:
    value = meta.get(name)
    return value.strip() if isinstance(value, str) and value.strip() else None


def _source_url(meta: Mapping[str, object]) -> str | None:
    url = _text_field(meta, "source_url")
    if url is None:
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    return url if parts.scheme in ("http", "https") and parts.hostname else None


def _is_document(path: Path) -> bool:
    return not path.name.startswith(".") and not path.name.endswith(SIDECAR_SUFFIX)


def _list(tool: str, corpus: CorpusName, rel: str, folder: Path, root: Path) -> FolderListing:
    entries: list[FolderEntry] = []
    for child in folder.iterdir():
        if not _is_document(child) or not _inside(child, root):
            continue
        is_folder = child.is_dir()
        if not is_folder and not child.is_file():
            continue
        title = _text_field(_sidecar(child, root), "title")
        entries.append(FolderEntry(child.name, is_folder, title))
    entries.sort(key=lambda entry: (not entry.is_folder, entry.name))
    return FolderListing(tool, corpus, rel, tuple(entries))


def _read(tool: str, corpus: CorpusName, rel: str, path: Path, root: Path) -> DocumentRead:
    if path.stat().st_size > MAX_DOCUMENT_BYTES:
        raise ReaderError("The document is too large to read.")
    text = path.read_bytes().decode("utf-8", errors="replace")
    meta = _sidecar(path, root)
    heading = _HEADING.search(text)
    title = _text_field(meta, "title") or (heading.group(1) if heading else path.name)
    return DocumentRead(
        tool=tool,
        corpus=corpus,
        path=rel,
        title=title,
        text=text,
        source_url=_source_url(meta),
        section=_text_field(meta, "section"),
        meta=MappingProxyType(meta),
    )


def read_document(
    tool: str, path: object, *, root: Path | None = None
) -> DocumentRead | FolderListing:
    """Read a corpus file (with its sidecar) or list a folder for one of the reader tools."""
    corpus = READER_TOOLS.get(tool) if isinstance(tool, str) else None
    if corpus is None:
        raise ReaderError(f"Unknown reader tool; use one of {', '.join(sorted(READER_TOOLS))}.")
    rel = normalise_path(path)
    if rel.endswith(SIDECAR_SUFFIX):
        raise ReaderError("A .meta.json sidecar is read with its document, not on its own.")
    corpus_root = ((root or CORPORA_ROOT) / corpus).resolve()
    target = corpus_root / rel if rel else corpus_root
    if not _inside(target, corpus_root):
        raise ReaderError(f"No document or folder at '{rel}' in {corpus}.")
    try:
        if target.is_dir():
            return _list(tool, corpus, rel, target, corpus_root)
        if target.is_file():
            return _read(tool, corpus, rel, target, corpus_root)
    except OSError:
        raise ReaderError(f"'{rel}' in {corpus} could not be read.") from None
    raise ReaderError(f"'{rel}' in {corpus} is neither a document nor a folder.")
