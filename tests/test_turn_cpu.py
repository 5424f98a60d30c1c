"""What a turn's CPU was cut by (issue 21, 200 concurrent turns) still draws, reads and answers
exactly as before: each shortcut beside the plain way it stands in for."""

from __future__ import annotations

import gc
import random
import unicodedata
from collections.abc import Iterator
from typing import Any

import pytest
from markdown_it import MarkdownIt
from markupsafe import Markup

from tests.support.turns import CannedTools, MemorySink
from webapp import app as app_module
from webapp.llm.base import ModelRequest
from webapp.llm.offline.lexicon import has_phrase
from webapp.llm.offline.model import OfflineModel
from webapp.packets import code
from webapp.packets.links import browser_url
from webapp.packets.state import PacketStream
from webapp.sse import format_event
from webapp.turn.runner import run_turn, start_checkpoint
from webapp.web import answer_body
from webapp.web import snippet as snippets
from webapp.web.answer_body import answer_text
from webapp.web.snippet import CACHED_SNIPPET_TEXT, SNIPPET_CHARS, snippet

# --- a link's tricks: ASCII by three scans, the rest character by character ----------------


def _tricky(ch: str) -> bool:
    return ch == "\\" or ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp")


@pytest.mark.parametrize("ch", [chr(i) for i in range(128)], ids=[f"0x{i:02x}" for i in range(128)])
def test_an_ascii_link_is_refused_for_exactly_the_characters_any_link_is(ch: str) -> None:
    link = f"https://example.com/a{ch}b"
    assert (browser_url(link) is None) is _tricky(ch)


@pytest.mark.parametrize("ch", ["\u00a0", "\u200e", "\u202e", "\u2028", "\u00e9", "\ud800"])
def test_a_link_beyond_ascii_is_still_read_character_by_character(ch: str) -> None:
    assert (browser_url(f"https://example.com/{ch}") is None) is _tricky(ch)


# --- code blocks: markdown-it's block rules alone find them --------------------------------

MARKDOWN = [
    "```\ncode [[1]]()\n```\nafter",
    "~~~py\nx\n~~~",
    "para\n\n    indented [[2]]()\n\nnext",
    "- item\n\n      code in a list\n",
    "> quote\n>\n>     code in a quote\n",
    "1. one\n2. two\n   ```\n   fenced in a list\n   ```\n",
    "[ref]: /url\n\n    code after a reference\n",
    "<div>\n\n    not code: an html block's end\n</div>",
    "**bold** and `span [[3]]()` with [a link](https://x.example/) ``` not a fence",
    "line\n```\nunclosed fence at the end",
]


def _full_parser_blocks(text: str) -> list[tuple[str, list[int] | None, str]]:
    parsed = MarkdownIt("commonmark").parse(text)
    return [(t.type, t.map, t.content) for t in parsed if t.type in ("fence", "code_block")]


def _random_markdown(seed: int) -> Iterator[str]:
    pieces = [*"`~ \n\t>-*+1.[]()<>\\ab", "```", "~~~", "    ", "\n\n", "<div>", "[a]: /u\n"]
    rng = random.Random(seed)
    for _ in range(2000):
        yield "".join(rng.choice(pieces) for _ in range(rng.randint(1, 40)))


def _block_parser_blocks(text: str) -> list[tuple[str, list[int] | None, str]]:
    parsed = code._PARSER.parse(text)
    return [(t.type, t.map, t.content) for t in parsed if t.type in ("fence", "code_block")]


@pytest.mark.parametrize("text", MARKDOWN)
def test_code_ranges_reads_the_code_blocks_the_whole_parser_reads(text: str) -> None:
    assert _block_parser_blocks(text) == _full_parser_blocks(text)


def test_code_ranges_reads_the_code_blocks_of_random_markdown_as_the_whole_parser() -> None:
    for text in _random_markdown(21):
        assert _block_parser_blocks(text) == _full_parser_blocks(text), text


# --- citation numbers: drawn when looked up, as the answer stood --------------------------


def _packet(obj: dict[str, Any]) -> dict[str, Any]:
    return {
        "placement": {"turn_index": 0, "tab_index": 0, "sub_turn_index": None, "model_index": 0},
        "obj": obj,
    }


def _doc(document_id: str, link: str) -> dict[str, Any]:
    return {"document_id": document_id, "semantic_identifier": document_id, "link": link}


def _stream() -> PacketStream:
    docs = [_doc("a", "https://a.example/"), _doc("b", "https://b.example/")]
    return PacketStream(
        0,
        [
            _packet({"type": "search_tool_documents_delta", "documents": docs}),
            _packet({"type": "message_start", "final_documents": None}),
            _packet({"type": "message_delta", "content": "One [[1]]() and two [[2]]()."}),
            _packet({"type": "citation_info", "citation_number": 1, "document_id": "a"}),
            _packet({"type": "citation_info", "citation_number": 2, "document_id": "b"}),
        ],
    )


def test_citation_numbers_are_drawn_only_when_looked_up(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = answer_body._drawn
    calls: list[str] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args[0].text)
        return drawn(*args, **kwargs)

    monkeypatch.setattr(answer_body, "_drawn", counted)
    text, _ = answer_text(_stream().state, "m", None, streaming=True)
    assert len(calls) == 1  # the answer's text alone
    assert sorted(text.numbers) == [1, 2]
    assert len(calls) == 2 and calls[1] == "[[1]]() [[2]]()"
    assert text.numbers[1] is text.numbers[1]  # drawn once, then kept


def test_citation_numbers_are_those_of_the_answer_as_it_stood_when_its_text_was_drawn() -> None:
    stream = _stream()
    text, _ = answer_text(stream.state, "m", None, streaming=True)
    # More packets fold into the same state in place, before the numbers are first looked up.
    stream.append(_packet({"type": "citation_info", "citation_number": 3, "document_id": "a"}))
    stream.append(_packet({"type": "message_delta", "content": " And [[3]]()."}))
    unchanged, _ = answer_text(_stream().state, "m", None, streaming=True)
    assert sorted(text.numbers) == [1, 2]
    assert dict(text.numbers) == dict(unchanged.numbers)


# --- snippets: a short passage kept, the same words whatever the cache ----------------------


@pytest.mark.parametrize(
    "text",
    [
        "a <hi>key</hi> fact",
        "account_name: Checking\ncurrent_balance: 10\ncurrency: USD",
        "# Heading\n\n- one\n- two",
        "x" * (CACHED_SNIPPET_TEXT + 1),
    ],
    ids=["highlight", "fields", "markdown", "too long to keep"],
)
def test_a_kept_snippet_reads_as_one_drawn_afresh(text: str) -> None:
    assert snippet(text) == snippet(text) == snippets._snippet(text, SNIPPET_CHARS)
    assert snippet(text, 20) == snippets._snippet(text, 20)


def test_markup_passed_as_a_passage_is_drawn_afresh_never_from_a_kept_text() -> None:
    snippet("a < b")
    hits = snippets._kept_snippet.cache_info().hits
    assert snippet(Markup("a &lt; b")) == snippets._snippet(Markup("a &lt; b"), SNIPPET_CHARS)
    assert snippets._kept_snippet.cache_info().hits == hits


# --- the lexicon: one pattern finds what the substring tests found -------------------------


def test_has_phrase_finds_exactly_what_a_substring_test_finds() -> None:
    rng = random.Random(7)
    vocabulary = ["a", "b", "ab", "c d", "", "x y z", "b a", " ", "c+", "(d)", "e.f"]
    for _ in range(5000):
        candidates = tuple(rng.sample(vocabulary, rng.randint(0, 5)))
        said = [rng.choice(["a", "b", "ab", "c", "d", "c+", "(d)", "e.f", "x", "z"])]
        phrase = " " + " ".join(said * rng.randint(0, 3)) + " "
        for asked in (candidates, frozenset(candidates)):
            expected = any(f" {c} " in phrase for c in asked)
            assert has_phrase(phrase, asked) is expected, (phrase, asked)


# --- the offline engine: a turn's second round writes from the first round's reading -------


class _FreshEachRound:
    """A new OfflineModel for every round: nothing read in one round is kept for the next."""

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        return OfflineModel().stream(request)

    def close(self) -> None:
        pass


@pytest.mark.parametrize(
    "question",
    [
        "Can I deduct charitable donations?",
        "What do I owe on my credit cards?",
        "How much did I spend on groceries last month, and what's my net worth?",
        "Hello!",
    ],
)
def test_a_turn_answers_the_same_whether_its_reading_is_kept_or_made_again(question: str) -> None:
    sinks = []
    for model in (OfflineModel(), _FreshEachRound()):
        sink = MemorySink()
        run_turn(model, CannedTools({}), sink, start_checkpoint([], question))
        sinks.append(sink)
    kept, fresh = sinks
    assert kept.events == fresh.events and kept.packets()


def test_one_model_asked_another_question_reads_it_afresh() -> None:
    model = OfflineModel()
    for question in ("What is my net worth?", "Can I deduct charitable donations?"):
        request = ModelRequest("", [{"role": "user", "content": question}], [])
        assert list(model.stream(request)) == list(OfflineModel().stream(request))


# --- a worker's start: what it has loaded is left out of the collector's full passes -------


def test_a_started_worker_freezes_what_it_has_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    # Not the sweep of dead processes' sandboxes: other runs on this machine are not this test's.
    monkeypatch.setattr(app_module, "sweep_leftovers", lambda: None)
    try:
        app_module.start_worker(object())  # no app: only what every worker does
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


# --- SSE framing: a line of data (every packet's JSON) framed without a split --------------


@pytest.mark.parametrize(
    "data", ['{"a": 1}', "", "a\nb", "a\r\nb", "a\rb", "end\n", "\r", "\u2028 is no break"]
)
@pytest.mark.parametrize("event_id", [7, "7", None])
def test_an_event_is_framed_as_every_line_of_its_data_is(
    data: str, event_id: int | str | None
) -> None:
    lines = data.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    head = "event: packet\n" + ("" if event_id is None else f"id: {event_id}\n")
    expected = head + "".join(f"data: {line}\n" for line in lines) + "\n"
    assert format_event(data, event="packet", id=event_id) == expected
