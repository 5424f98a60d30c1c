"""Documents in everyday words in the offline engine (the seventh and eighth development
sets' kind of question, in wordings no set holds): filler and phrases read as the documents'
words, a remark or a bare "any cap?" that asks nothing of its own, a follow-up that asks more
of the documents before, and a document not bundled answered from one that sums it up."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from tests.support.apps import answer_in_new_chat, api_client
from webapp.llm.offline.conversation import questions_of
from webapp.llm.offline.dispatch import Context, Figures, figures
from webapp.llm.offline.fuzzy import correct
from webapp.llm.offline.library import library
from webapp.llm.offline.prose import _groups
from webapp.llm.offline.standin import stand_in
from webapp.llm.offline.words import as_documents_say, stem


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("compare what they say about taking money out", "taking"),
        ("the rental desk agent was pushy", "agent"),
        ("our loan officer said so", "officer"),
    ],
)
def test_a_known_word_with_an_ending_is_no_typo(text: str, kept: str) -> None:
    assert kept in correct(text).split()


def test_a_final_e_and_an_ending_share_a_stem() -> None:
    assert stem("close") == stem("closing") == stem("closed")
    assert stem("house") == stem("housing") and stem("fee") == stem("fees")


def test_an_everyday_phrase_reads_as_the_documents_words() -> None:
    assert "cancel" in as_documents_say("so when does pmi go away").split()
    assert "withdraw" in as_documents_say("can i pull money out of my roth").split()
    assert "withdraw" in as_documents_say("thinking of pulling my savings out early").split()
    assert "deadline" in as_documents_say("until when can i still put money in for 2025").split()
    assert "trip" in as_documents_say("flying to denver on my chase card next week").split()
    # a phrase of several of the documents' words reads as all of them
    assert {"cancel", "end"} <= set(as_documents_say("when does the insurance come off").split())


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("ok so honestly when does pmi finally drop off my loan", "private-mortgage-insurance"),
        (
            "heading to denver, is the sapphire car rental cover worth it or buy the counter cdw",
            "sapphire",
        ),
        ("apparently we got an escrow shortage this year, is it one lump sum", "escrow-basics"),
        ("the 3 day thing before closing day, what is it", "1026.19"),
        (
            "someday buying a 250k condo, whats the pmi deal with 10% down",
            "private-mortgage-insurance",
        ),
    ],
)
def test_filler_and_figures_leave_the_topic_to_rank(text: str, path: str) -> None:
    hits = library().rank(text)
    assert hits and path in hits[0].doc.path


def test_a_remark_or_a_bare_measure_asks_nothing_of_its_own() -> None:
    asked = "what is a loan estimate? my realtor keeps mentioning it"
    assert questions_of(asked) == ["what is a loan estimate?"]
    joined = "can a roth pay for college? any penalty?"
    assert questions_of(joined) == [joined]
    assert len(questions_of("what's my amex balance? and the limit?")) == 2


def test_a_follow_up_ranks_with_the_question_before() -> None:
    context = Context(library(), None, ("what's the 2025 limit for a roth ira?",))
    task = figures("and by when does it have to go in?", context)
    assert isinstance(task, Figures) and task.earlier
    assert all("roth" in h.doc.title.lower() or "ira" in h.doc.title.lower() for h in task.hits)
    alone = figures("and by when does it have to go in?", Context(library(), None))
    assert isinstance(alone, Figures) and not alone.earlier


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("per irs publication 583, how long should i hold on to old tax returns?", "tax records"),
        ("what's the escrow cushion limit in 12 cfr 1024.17?", "escrow"),
        ("under regulation x how much can my servicer keep as a cushion", "escrow"),
    ],
)
def test_a_document_not_bundled_is_answered_from_its_summary(text: str, title: str) -> None:
    found = stand_in(text, library())
    assert found is not None
    note, hits = found
    assert note.startswith("I don't have") and all(title in h.doc.title.lower() for h in hits)


@pytest.mark.parametrize(
    "text",
    [
        "what does IRS Publication 583 say about starting a small business?",
        "summarize irs publication 970",
        "what does publication 590-b say about required minimum distributions",
    ],
)
def test_no_stand_in_when_none_sums_up_what_is_asked(text: str) -> None:
    assert stand_in(text, library()) is None


def _ask(app: Flask, user: str, *questions: str) -> tuple[str, list[dict[str, Any]]]:
    text, cited = answer_in_new_chat(app, api_client(app, user), *questions)
    return text, [c["target"] for c in cited]


def test_a_publication_not_bundled_beside_one_that_is(app: Flask) -> None:
    text, targets = _ask(
        app, "alex", "do pub 590-a and pub 590-b agree on early withdrawals from a roth?"
    )
    assert text.startswith("I don't have IRS Publication 590-B") and "qualified" in text
    assert targets and all(t["kind"] != "account" for t in targets)


def test_the_deadline_asked_after_the_limit(app: Flask) -> None:
    text, _ = _ask(
        app,
        "alex",
        "what's the most i can put in an ira for 2025?",
        "and by when does it have to go in?",
    )
    assert "April" in text and "2026" in text


def test_a_passage_two_questions_share_is_said_once(app: Flask) -> None:
    text, _ = _ask(
        app,
        "alex",
        "does the sapphire preferred cover a rental car? should i turn down the rental company's cdw",
    )
    assert text.count("Coverage is primary") == 1


def test_a_list_of_fragments_reads_on_after_its_colon(app: Flask) -> None:
    text, _ = _ask(
        app, "alex", "can a person take cash out of a roth tax free for a first home? any limit?"
    )
    assert "it is made: on or after" in text and "; or for a first-time home purchase" in text


def test_a_request_word_asks_for_the_document_only_when_it_leads() -> None:
    rarity = library().rarity
    later = [g for g, _ in _groups("which figures on two offers should we compare", rarity)]
    leading = [g for g, _ in _groups("compare what pub 590-a says on early withdrawals", rarity)]
    assert any(stem("compare") in g for g in later)
    assert not any(stem("compare") in g for g in leading)


def test_a_number_in_digits_weighs_as_the_word_the_documents_spell_it_with() -> None:
    rarity = library().rarity
    weights = dict(_groups("got 3 quotes for the move, all 4 pages long", rarity))
    (three,) = [g for g in weights if "three" in g]
    assert weights[three] == rarity("three") < rarity("3")
