"""The one place where the app's own pages become URLs: typed page targets in, `url_for` out.

The pure core (`webapp/packets/destinations.py`) says where a source opens by what the page
shows (`AppPage`); this module spells it through the routes' names, so a route can move
without the core knowing. An account id or a ticker travels as a single path segment,
escaped as `encodeURIComponent` escapes it (docs/specs.md, "Routes": `/accounts/<encoded
id>`), so a `/` or `..` inside an id never becomes structure of the path. The library
reader takes the cited words as `?cite=` and aims at the marked passage (`#cited`).
"""

from __future__ import annotations

from typing import assert_never

from flask import url_for
from flask.blueprints import BlueprintSetupState
from werkzeug.routing import PathConverter

from ..citations.account_ids import encode_uri_component
from ..packets.destinations import (
    AccountPage,
    AppPage,
    FilePage,
    LibraryPage,
    MarketPage,
    PortfolioPage,
)
from .library import ANCHOR

# The rule converter of a route whose argument is one encodeURIComponent-escaped segment.
COMPONENT = "component"


class ComponentConverter(PathConverter):
    """Match like `path` (a request's `%2F` arrives decoded, as `/`); build one escaped segment.

    Werkzeug's own converters leave `/`, `:`, `+` and the like as they are; the links the
    app has always drawn escape them, as a browser's `encodeURIComponent` does.
    """

    def to_url(self, value: object) -> str:
        return encode_uri_component(str(value))


def add_converter(state: BlueprintSetupState) -> None:
    """Make `<component:...>` known to the app (run as a blueprint registers, before its rules)."""
    state.app.url_map.converters.setdefault(COMPONENT, ComponentConverter)


def page_href(page: AppPage) -> str:
    """Return the URL of one of the app's own pages (needs an app or request context)."""
    match page:
        case AccountPage(account_id=account_id):
            return url_for("accounts.show", account_id=account_id)
        case MarketPage(ticker=ticker):
            return url_for("accounts.market", ticker=ticker)
        case PortfolioPage():
            return url_for("accounts.portfolio")
        case FilePage(file_id=file_id, rows=rows):
            return url_for(
                "files.show",
                file_id=file_id,
                rows=",".join(rows) or None,
                _anchor=ANCHOR if rows else None,
            )
        case LibraryPage(corpus=corpus, path=path, cite=cite):
            return url_for(
                "library.read",
                corpus=corpus,
                path=path,
                cite=cite,
                _anchor=ANCHOR if cite else None,
            )
    assert_never(page)
