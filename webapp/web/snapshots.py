"""A finished answer drawn from the snapshot its turn left, not folded from its events again.

When a turn ends (done, stopped, failed), `snapshot_answer` folds its events once and keeps
what the page draws of the answer: the answer's HTML with its inline citations, its account
choosers, and the `Sources · N` bar and sheet (rows, icons, where each opens). A chat page
reads its answers' snapshots in one query (`draw_answers`). An answer without one (written
before revision 0011, or whose turn ended where no web layer ran), with one of another
`VERSION`, or with one that can't be read, is folded from its events as before; one that
can't be folded either is the plain placeholder. A page never fails on a stored row.

The HTML keeps the app's URLs as they were spelled when the turn ended (`links.page_href`,
the icons' routes), and account names as they were then. A change to what is kept here, or to
how it is drawn, takes a new `VERSION`: older snapshots are then ignored, and their answers
folded again.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flask import Flask
from markupsafe import Markup
from sqlalchemy.engine import Engine

from ..chat.records import MessageRow
from ..chat.snapshots import Snapshot, finished_events, load_snapshots, save_snapshot
from ..packets.destinations import (
    AccountPage,
    AppPage,
    FilePage,
    LibraryPage,
    MarketPage,
    PortfolioPage,
    WebPage,
)
from .answer_body import AnswerText, AnswerView
from .answers import AnswerRenderer, AnswerViews, answer_packets
from .openers import ChooserLink, Opener, OpenKind
from .sheet import Section, SourceRow, SourcesView

log = logging.getLogger(__name__)

# The format of what is kept; change it with what is kept or how a page draws it.
VERSION = 1
_KINDS: tuple[OpenKind, ...] = ("browser", "page", "chooser", "file", "none")


class Unreadable(ValueError):
    """A snapshot this version of the app can't draw from."""


@dataclass(frozen=True, slots=True)
class DrawnText(AnswerText):
    """A finished answer's text, drawn when its turn ended: its HTML is kept, not rendered."""

    drawn: Markup = Markup()

    def html(self, start: int = 0, end: int | None = None) -> Markup:
        """Return the kept HTML for the whole answer (a part is rendered, as `AnswerText`)."""
        if start == 0 and end is None:
            return self.drawn
        return AnswerText.html(self, start, end)


def _target(target: WebPage | AppPage | None) -> dict[str, Any] | None:
    match target:
        case None:
            return None
        case WebPage(url=url, cite=cite):
            return {"page": "web", "url": url, "cite": cite}
        case AccountPage(account_id=account_id):
            return {"page": "account", "account_id": account_id}
        case PortfolioPage():
            return {"page": "portfolio"}
        case MarketPage(ticker=ticker):
            return {"page": "market", "ticker": ticker}
        case FilePage(file_id=file_id, rows=rows):
            return {"page": "file_preview", "file_id": file_id, "rows": list(rows)}
        case LibraryPage(corpus=corpus, path=path, cite=cite, url=url):
            return {"page": "library", "corpus": corpus, "path": path, "cite": cite, "url": url}
    raise TypeError(f"no snapshot of a {type(target).__name__}")


def _opener(opener: Opener) -> dict[str, Any]:
    return {
        "kind": opener.kind,
        "target": _target(opener.target),
        "options": [[o.label, o.page.account_id] for o in opener.options],
        "dom_id": opener.dom_id,
        "original": opener.original,
    }


def snapshot_of(views: AnswerViews) -> dict[str, Any]:
    """Return what a page draws of a finished answer, as JSON values."""
    answer, sources = views.answer, views.sources
    return {
        "answer": {
            "html": str(answer.body),
            "error": answer.error,
            "stopped": answer.stopped,
            "choosers": [_opener(o) for o in answer.choosers],
        },
        "sources": {
            "visible": sources.visible,
            "count": sources.count,
            "icons": list(sources.icons),
            "sections": [
                {
                    "heading": section.heading,
                    "rows": [
                        {
                            "title": row.title,
                            "meta": row.meta,
                            "snippet": str(row.snippet),
                            "icon": row.icon,
                            "opener": _opener(row.opener),
                        }
                        for row in section.rows
                    ],
                }
                for section in sources.sections
            ],
        },
    }


def _get(data: Any, key: str, kind: type | tuple[type, ...]) -> Any:
    value = data.get(key) if isinstance(data, dict) else None
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise Unreadable(f"`{key}` is missing or of the wrong type")
    return value


def _text(data: Any, key: str) -> str:
    return str(_get(data, key, str))


def _maybe(data: Any, key: str) -> str | None:
    value = _get(data, key, (str, type(None)))
    return None if value is None else str(value)


def _list(data: Any, key: str) -> list[Any]:
    return list(_get(data, key, list))


def _read_target(data: Any) -> WebPage | AppPage | None:
    if data is None:
        return None
    match _text(data, "page"):
        case "web":
            return WebPage(_text(data, "url"), _maybe(data, "cite"))
        case "account":
            return AccountPage(_text(data, "account_id"))
        case "portfolio":
            return PortfolioPage()
        case "market":
            return MarketPage(_text(data, "ticker"))
        case "file_preview":
            rows = _list(data, "rows")
            if not all(isinstance(r, str) for r in rows):
                raise Unreadable("a file page's rows are not text")
            return FilePage(_text(data, "file_id"), tuple(rows))
        case "library":
            return LibraryPage(
                _text(data, "corpus"),
                _text(data, "path"),
                _maybe(data, "cite"),
                _maybe(data, "url"),
            )
    raise Unreadable("an unknown kind of page")


def _read_opener(data: Any) -> Opener:
    kind = _text(data, "kind")
    if kind not in _KINDS:
        raise Unreadable("an unknown way to open")
    options = []
    for option in _list(data, "options"):
        if not (
            isinstance(option, list)
            and len(option) == 2
            and all(isinstance(o, str) for o in option)
        ):
            raise Unreadable("a chooser's option is not a label and an account id")
        options.append(ChooserLink(option[0], AccountPage(option[1])))
    return Opener(
        kind,
        _read_target(_get(data, "target", (dict, type(None)))),
        tuple(options),
        _text(data, "dom_id"),
        _maybe(data, "original"),
    )


def _read_row(data: Any) -> SourceRow:
    return SourceRow(
        _text(data, "title"),
        _text(data, "meta"),
        Markup(_text(data, "snippet")),
        _text(data, "icon"),
        _read_opener(_get(data, "opener", dict)),
    )


def views_from(message_id: str, snapshot: Snapshot) -> AnswerViews:
    """Return the answer as its snapshot keeps it; Unreadable if this version can't draw it."""
    if snapshot.version != VERSION:
        raise Unreadable(f"a snapshot of version {snapshot.version}, not {VERSION}")
    try:
        data = json.loads(snapshot.data)
    except ValueError:
        raise Unreadable("not JSON") from None
    answer, sources = _get(data, "answer", dict), _get(data, "sources", dict)
    text = DrawnText("", drawn=Markup(_text(answer, "html")))
    choosers = tuple(_read_opener(o) for o in _list(answer, "choosers"))
    stopped = _get(answer, "stopped", bool)
    drawn = AnswerView(message_id, text, choosers, False, _maybe(answer, "error"), stopped)
    icons = _list(sources, "icons")
    if not all(isinstance(i, str) for i in icons):
        raise Unreadable("an icon is not a URL")
    sections = tuple(
        Section(_text(s, "heading"), tuple(_read_row(r) for r in _list(s, "rows")))
        for s in _list(sources, "sections")
    )
    visible = _get(sources, "visible", bool)
    bar = SourcesView(message_id, visible, _get(sources, "count", int), tuple(icons), sections)
    return AnswerViews(drawn, bar)


def draw_answers(
    renderer: AnswerRenderer, messages: Sequence[MessageRow]
) -> dict[str, AnswerViews]:
    """Return each answer among `messages` as the page draws it, by id.

    Finished answers come from their snapshots, read in one query; the rest are folded from
    their events; one that can't be folded is the placeholder.
    """
    answers = [m for m in messages if m.role == "assistant"]
    finished = [m.id for m in answers if m.status != "running"]
    try:
        kept = load_snapshots(renderer.engine, renderer.user_id, finished)
    except Exception:  # a row the driver can't read: every answer is folded instead
        log.exception("could not read the answers' snapshots")
        kept = {}
    drawn: dict[str, AnswerViews] = {}
    for message in answers:
        snapshot = kept.get(message.id)
        if snapshot is not None:
            try:
                drawn[message.id] = views_from(message.id, snapshot)
                continue
            except Unreadable as exc:
                log.warning("an answer's snapshot can't be read (%s); folding it again", exc)
        try:
            drawn[message.id] = renderer.stored(message)
        except Exception:  # one answer that can't be drawn must not close the whole chat
            log.exception("could not draw a stored answer")
            drawn[message.id] = renderer.placeholder(message.id)
    return drawn


def snapshot_answer(app: Flask, engine: Engine, message_id: str) -> bool:
    """Keep what a page draws of a finished answer (ChatService's `on_ended`); False if not.

    Drawn as a request to the app's root would draw it, so the app's own URLs are spelled
    as its pages spell them.
    """
    found = finished_events(engine, message_id)
    if found is None:
        return False
    packets = answer_packets(found.events)
    with app.test_request_context():
        renderer = AnswerRenderer(engine, found.user_id)
        data = snapshot_of(renderer.folded(message_id, found.status, found.error, packets))
    return save_snapshot(engine, message_id, VERSION, json.dumps(data, separators=(",", ":")))
