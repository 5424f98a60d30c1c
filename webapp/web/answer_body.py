"""Packets to the answer's body: its markdown, inline citations and their previews.

docs/specs.md#the-sources-bar-and-sheet (an inline number opens like its row) and rule J5
(an account citation opens only once its target is settled), drawn by the server. Every
string from a tool or the model is escaped; citation links are built here with
`Markup.format`. Where each citation opens is `openers.opener_for`; what its preview says is
`sheet.preview_of`, the sheet row's own words.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace

from markupsafe import Markup

from ..citations.targets import AccountsTarget, AccountTarget, UserFileTarget
from ..packets.destinations import AccountLabeler
from ..packets.documents import SearchDoc
from ..packets.markers import CitationSegment, answer_segments
from ..packets.models import USER_CANCELLED
from ..packets.state import ProcessedMessageState
from .markdown import placeholder, render_markdown, strip_placeholders
from .openers import FILE_NOTICE, Library, Opener, opener_for, opens_words
from .sheet import Preview, preview_of, title_of

_CR = re.compile(r"\r\n?")
_MARKER = re.compile(r"\[\[(\d{1,9})\]\]")
MAX_MARKER_NUMBER = 10**9 - 1  # a marker's number has at most nine digits


@dataclass(frozen=True, slots=True)
class AnswerText:
    """Answer markdown with a placeholder per inline citation, and each citation's HTML."""

    markdown: str
    citations: tuple[Markup, ...] = ()
    # How each citation number known so far is drawn now. A block sent while the answer
    # streams is never sent again, so the stream checks that its numbers still look the same.
    numbers: Mapping[int, Markup] = field(default_factory=dict)

    def html(self, start: int = 0, end: int | None = None) -> Markup:
        """Render `markdown[start:end]`, cut at line starts, with its citations."""
        return render_markdown(self.markdown[start:end], self.citations)


@dataclass(frozen=True, slots=True)
class AnswerView:
    message_id: str
    text: AnswerText
    choosers: tuple[Opener, ...]
    streaming: bool
    error: str | None = None
    stopped: bool = False
    # The stream broke off before the answer was finished: what came is shown, and a reload
    # picks the answer up again.
    interrupted: bool = False
    # While streaming: where the open blocks (the last ones, still growing) start in
    # `text.markdown`. The settled blocks before it are drawn once; the stream redraws the rest.
    open_at: int = 0
    # While nothing is written yet: the step being worked on, in plain words (web/status.py).
    status: str = "Thinking…"

    @property
    def body(self) -> Markup:
        """Return the whole answer's HTML."""
        return self.text.html()

    @property
    def settled_html(self) -> Markup:
        """Return the settled blocks' HTML (nothing unless streaming)."""
        return self.text.html(0, self.open_at) if self.streaming and self.open_at else Markup()

    @property
    def open_html(self) -> Markup:
        """Return the open blocks' HTML (nothing unless streaming)."""
        return self.text.html(self.open_at) if self.streaming else Markup()

    @property
    def waiting(self) -> bool:
        """Tell whether nothing has been written yet while the answer is still coming."""
        return self.streaming and not self.text.markdown.strip() and self.error is None


_CITE = {
    "browser": Markup(
        '<a class="cite" href="{href}" target="_blank" rel="noopener noreferrer"'
        ' aria-label="Source {n}: {title}" aria-describedby="{tip}">{n}</a>'
    ),
    "page": Markup(
        '<a class="cite" href="{href}" aria-label="Source {n}: {title}"'
        ' aria-describedby="{tip}">{n}</a>'
    ),
    "chooser": Markup(
        '<button type="button" class="cite" popovertarget="{dom_id}"'
        ' aria-label="Source {n}: {title}" aria-describedby="{tip}">{n}</button>'
    ),
    "file": Markup(
        '<button type="button" class="cite" data-notice="{notice}"'
        ' aria-label="Source {n}: {title}" aria-describedby="{tip}">{n}</button>'
    ),
    # Opens nothing, but still says where its figure comes from: a button that shows the preview.
    "none": Markup(
        '<button type="button" class="cite cite-static" data-preview'
        ' aria-label="Source {n}: {title}" aria-describedby="{tip}">{n}</button>'
    ),
    # Drawn, but opening nothing until the answer is done (see `_settles_late`).
    "pending": Markup(
        '<button type="button" class="cite cite-pending" data-preview'
        ' aria-label="Source {n}: {title}" aria-describedby="{tip}">{n}</button>'
    ),
}
_TIP = Markup(
    '<span class="cite-wrap">{cite}<span class="cite-tip" role="tooltip" id="{tip}">'
    '<span class="cite-tip-title">{title}</span>{where}{text}'
    '<span class="cite-tip-opens">{opens}</span></span></span>'
)


def citation_html(
    number: int,
    title: str,
    opener: Opener,
    *,
    pending: bool = False,
    tip: str = "",
    preview: Preview | None = None,
) -> Markup:
    """Return an inline citation: a link or button showing its number, opening its source,
    with its preview (`role="tooltip"`, shown on hover, focus and a tap).

    A `pending` citation (its source not settled while the answer streams) is drawn but does
    not open; one that opens nothing anyway is drawn as such. `tip` is the preview's id.
    """
    kind = "pending" if pending and opener.kind != "none" else opener.kind
    href = opener.href if kind in ("browser", "page") else None
    tip = tip or f"tip-{number}"
    cite = _CITE[kind].format(
        href=href or "", title=title, n=number, dom_id=opener.dom_id, notice=FILE_NOTICE, tip=tip
    )
    seen = preview or Preview()
    return _TIP.format(
        cite=cite,
        tip=tip,
        title=title,
        where=Markup('<span class="cite-tip-where">{}</span>').format(seen.where)
        if seen.where
        else "",
        text=Markup('<span class="cite-tip-text">{}</span>').format(seen.text) if seen.text else "",
        opens=opens_words(opener, pending=kind == "pending"),
    )


def _settles_late(doc: SearchDoc | None) -> bool:
    """Tell whether where `doc` opens may change before its turn ends.

    docs/specs.md, rule J5: a later tool round can add accounts under an
    account label (pooled: one account's page becomes a chooser) or leave it untyped
    (poisoned: nothing). Every other source opens the same place whatever a later round
    writes: a URL its page, a ticker its quote, the portfolio its page. So an account
    citation opens only once the answer is done, drawn with the turn's settled target; and
    a chooser's popover would close on the next re-render anyway.
    """
    return doc is not None and isinstance(
        doc.target, AccountTarget | AccountsTarget | UserFileTarget
    )


def _drawn(
    state: ProcessedMessageState,
    message_id: str,
    labeler: AccountLabeler | None,
    pending: bool,
    library: Library | None = None,
    before: Mapping[int, int] | None = None,
) -> tuple[str, tuple[Markup, ...], tuple[Opener, ...]]:
    """Return the state's text as markdown with placeholders, its citations, and choosers.

    `before` counts each number's citations in the text before this part: a preview's id
    names its number and which of that number's citations it is, so each is drawn alike
    whenever it is drawn, and none twice on a page.
    """
    parts: list[str] = []
    cites: list[Markup] = []
    choosers: dict[str, Opener] = {}
    seen: Counter[int] = Counter(before or {})
    for segment in answer_segments(state):
        if not isinstance(segment, CitationSegment):
            parts.append(strip_placeholders(segment.text))
            continue
        opener = opener_for(segment.doc, labeler, f"cite-{message_id}-{segment.number}", library)
        if opener.kind == "chooser" and not pending:
            choosers.setdefault(opener.dom_id, opener)
        title = title_of(segment.doc) if segment.doc else f"Source {segment.number}"
        parts.append(placeholder(len(cites)))
        tip = f"tip-{message_id}-{segment.number}-{seen[segment.number]}"
        seen[segment.number] += 1
        cites.append(
            citation_html(
                segment.number,
                title,
                opener,
                pending=pending and _settles_late(segment.doc),
                tip=tip,
                preview=preview_of(segment.doc),
            )
        )
    # One kind of line break, as markdown-it reads them: the stream counts lines.
    return _CR.sub("\n", "".join(parts)), tuple(cites), tuple(choosers.values())


class _Numbers(Mapping[int, Markup]):
    """Each citation number's HTML, drawn the first time it is looked up.

    Only the browser's stream looks (to tell whether a block it sent still draws the same);
    a finished answer's snapshot and a page never do, so they no longer draw every citation
    twice.
    """

    __slots__ = ("_draw", "_drawn")

    def __init__(self, draw: Callable[[], dict[int, Markup]]) -> None:
        self._draw: Callable[[], dict[int, Markup]] | None = draw
        self._drawn: dict[int, Markup] | None = None

    def _all(self) -> dict[int, Markup]:
        if self._drawn is None:
            assert self._draw is not None
            self._drawn, self._draw = self._draw(), None
        return self._drawn

    def __getitem__(self, number: int) -> Markup:
        return self._all()[number]

    def __iter__(self) -> Iterator[int]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def _numbers(
    state: ProcessedMessageState,
    message_id: str,
    labeler: AccountLabeler | None,
    pending: bool,
    library: Library | None = None,
) -> Mapping[int, Markup]:
    # Each known number drawn as a marker alone would be: the same code as in the text.
    numbers = sorted(n for n in state.citation_map if 0 <= n <= MAX_MARKER_NUMBER)
    # The state goes on changing in place as packets arrive: the probe keeps what it holds now.
    probe = replace(
        state,
        deltas=[" ".join(f"[[{n}]]()" for n in numbers)],
        is_complete=True,
        citation_map=dict(state.citation_map),
        citations=list(state.citations),
        document_map=dict(state.document_map),
    )

    def draw() -> dict[int, Markup]:
        _, chips, _ = _drawn(probe, message_id, labeler, pending, library)
        return dict(zip(numbers, chips, strict=True))

    return _Numbers(draw)


def answer_text(
    state: ProcessedMessageState,
    message_id: str,
    labeler: AccountLabeler | None,
    *,
    streaming: bool,
    start: int = 0,
    library: Library | None = None,
) -> tuple[AnswerText, tuple[Opener, ...]]:
    """Return the answer's text from `start` with its citations, and the choosers they open.

    `start` is 0, or where `settled_lines` ended the settled blocks of the text: the text is
    read from there alone, with the whole answer's citations and documents.
    """
    read = replace(state, deltas=[state.text[start:]]) if start else state
    before = Counter(int(n) for n in _MARKER.findall(state.text[:start])) if start else None
    markdown, cites, choosers = _drawn(read, message_id, labeler, streaming, library, before)
    numbers = _numbers(state, message_id, labeler, streaming, library)
    return AnswerText(markdown, cites, numbers), choosers


def answer_view(
    state: ProcessedMessageState,
    message_id: str,
    labeler: AccountLabeler | None,
    *,
    streaming: bool,
    error: str | None = None,
    interrupted: bool = False,
    start: int = 0,
    library: Library | None = None,
) -> AnswerView:
    """Return the answer (from `start`, see `answer_text`) with its inline citations.

    While `streaming`, account citations (one account's page, or a chooser) wait: a later
    tool round may still change where they open (`_settles_late`), and no popover could stay
    open through the stream's next redraw; an `interrupted` answer is never streaming.
    """
    streaming = streaming and not interrupted
    text, choosers = answer_text(
        state, message_id, labeler, streaming=streaming, start=start, library=library
    )
    stopped = state.stop_reason == USER_CANCELLED
    return AnswerView(message_id, text, choosers, streaming, error, stopped, interrupted)
