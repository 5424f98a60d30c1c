"""Readable pages for the machine downloads that corpus sidecars point at (docs/specs.md, rule T7).

- eCFR versioner XML: https://www.ecfr.gov/api/versioner/v1/full/<date>/title-<N>.xml?part=P&section=S
  opens as https://www.ecfr.gov/on/<date>/title-N/section-S (`/current/` for a current
  download, `part-P` where no section is named).
- US Code release point ZIP: https://uscode.house.gov/download/releasepoints/.../xml_usc<NN>@....zip
  opens as the section's view.xhtml page, or the title's browse page without a section; the
  title loses its zero padding there (`usc05` is `title5`, `usc50a` is `title50A`).

And a link as an answer's `[[n]](link)` marker carries it (docs/specs.md, rule P18): what would
end or break a markdown link destination is percent-encoded (`marker_safe_link`).
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import parse_qs, urlsplit

_ECFR_PATH = re.compile(
    r"/api/versioner/v1/full/(?P<date>\d{4}-\d{2}-\d{2}|current)/title-(?P<title>\d{1,2})\.xml",
)
_USC_FILE = re.compile(
    r"(?:xml_)?usc(?P<number>\d{1,2})(?P<appendix>[Aa]?)(?:@[^/]*)?\.zip", re.ASCII
)
_SECTION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.\-]{0,31}", re.ASCII)
_SECTION_NOISE = re.compile(r"^(?:§+|sec(?:tion)?\.?)\s*", re.IGNORECASE)


def _clean_section(section: str | None) -> str | None:
    if not isinstance(section, str):
        return None
    value = section.strip()
    while True:
        stripped = _SECTION_NOISE.sub("", value).strip()
        if stripped == value:
            break
        value = stripped
    return value if _SECTION.fullmatch(value) else None


def _first(query: dict[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    return values[0] if values else None


def _ecfr_page(date: str, title: str, query: str, section: str | None) -> str:
    params = parse_qs(query)
    base = (
        "https://www.ecfr.gov/current" if date == "current" else f"https://www.ecfr.gov/on/{date}"
    )
    named = _clean_section(_first(params, "section")) or _clean_section(section)
    if named:
        return f"{base}/title-{title}/section-{named}"
    part = _clean_section(_first(params, "part"))
    return f"{base}/title-{title}/part-{part}" if part else f"{base}/title-{title}"


def _uscode_page(title: str, section: str | None) -> str:
    named = _clean_section(section)
    if named:
        return f"https://uscode.house.gov/view.xhtml?req=granuleid:USC-prelim-title{title}-section{named}"
    return f"https://uscode.house.gov/browse/prelim@title{title}&edition=prelim"


def humanize_citation_url(url: str, section: str | None = None) -> str:
    """Return the readable page for an eCFR or US Code download; any other URL unchanged."""
    if not isinstance(url, str):
        return url
    try:
        parts = urlsplit(url.strip())
        host = (parts.hostname or "").lower()
    except ValueError:
        return url
    if parts.scheme not in ("http", "https"):
        return url
    if host in ("www.ecfr.gov", "ecfr.gov"):
        match = _ECFR_PATH.fullmatch(parts.path)
        if match:
            return _ecfr_page(match["date"], match["title"], parts.query, section)
    if host == "uscode.house.gov" and parts.path.startswith("/download/releasepoints/"):
        match = _USC_FILE.fullmatch(parts.path.rsplit("/", 1)[-1])
        # Release points pad the title (`usc05`) but the site's pages do not (`title5`).
        if match and int(match["number"]) > 0:
            title = str(int(match["number"])) + match["appendix"].upper()
            return _uscode_page(title, section)
    return url


# Characters that end a markdown link destination or that markdown readers take apart
# (CommonMark 0.31, "link destination"), and ones no URL may hold as they are (RFC 3986).
_LINK_BREAKERS = frozenset(' <>()\\"`{}|^')
_UNSEEN = frozenset({"Cc", "Cf", "Cs", "Zs", "Zl", "Zp"})


def _breaks_links(char: str) -> bool:
    return char in _LINK_BREAKERS or unicodedata.category(char) in _UNSEEN


def marker_safe_link(url: str) -> str:
    """Return `url` with every character that would break a `[[n]](link)` marker (spaces,
    `<`, `>`, parentheses, controls, bidi controls, ...) percent-encoded as UTF-8."""
    if not any(_breaks_links(char) for char in url):
        return url
    return "".join(
        "".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
        if _breaks_links(char)
        else char
        for char in url
    )
