"""Documents by meaning in the offline engine (issue 19's fourth development set): the
question's subject decides between a document and the user's figures, and the document
ranked is the one about what was asked, in everyday words."""

from __future__ import annotations

from datetime import date

import pytest

from webapp.citations.citable import chunks
from webapp.llm.offline.ask import documentish, understand
from webapp.llm.offline.cite import Result
from webapp.llm.offline.conversation import questions_of
from webapp.llm.offline.dispatch import Context, Figures, _computed, figures
from webapp.llm.offline.library import library
from webapp.llm.offline.prose import document_answer
from webapp.llm.offline.quotable import Source
from webapp.llm.offline.spending_ask import read_spending
from webapp.llm.offline.words import as_documents_say
from webapp.tools.readers import DocumentRead, read_document

TODAY = date(2026, 12, 1)


@pytest.mark.parametrize(
    "text",
    [
        "will the sapphire preferred pay for a hotel if my flight is delayed?",
        "does my card cover the cost of a rental car?",
        "would the amex reimburse me for lost bags",
    ],
)
def test_what_a_card_pays_for_is_no_spending_question(text: str) -> None:
    assert read_spending(text, TODAY) is None


def test_what_the_user_paid_for_still_is() -> None:
    assert read_spending("what did I pay for food last month", TODAY) is not None


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("i put more than the limit into my roth ira, what now?", False),
        ("i went over the limit on my 401k this year", False),
        ("how much of my credit limit am i using", True),
        ("am i near the limit on my amex", True),
    ],
)
def test_a_limit_is_a_card_limit_only_when_no_other_account_kind_is_named(
    text: str, kept: bool
) -> None:
    assert ("utilization" in understand(text).intents) is kept


@pytest.mark.parametrize(
    ("text", "intent"),
    [
        ("what's the limit on deducting cash I give to charities?", "utilization"),
        ("can I cash out an I bond after six months?", "cash"),
    ],
)
def test_a_word_of_a_measure_used_otherwise_asks_no_figure(text: str, intent: str) -> None:
    assert intent not in understand(text).intents


def test_how_many_days_or_the_most_to_pay_is_a_rule_not_a_count_of_accounts() -> None:
    context = Context(library(), None)
    for text in (
        "how many days before closing should I get my loan estimate",
        "if someone uses my stolen credit card, what's the most I'd have to pay?",
    ):
        assert _computed(text, context) is None
    assert _computed("which of my cards has the highest balance?", context) is not None
    assert _computed("how many credit cards do I have", context) is not None


def test_hold_is_a_holding_only_when_the_user_holds_it() -> None:
    assert "holdings" not in understand("how much can my servicer hold in escrow").intents
    assert "holdings" in understand("what do i hold in my brokerage").intents


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("how big an extra reserve can my servicer keep in escrow", "escrow-basics"),
        ("is my lender allowed to keep extra money in my escrow account", "escrow-basics"),
        ("oops, i think i put too much into my ira, what happens if i leave the extra", "590-a"),
        ("will my card pay for food and a hotel if my trip is delayed overnight", "sapphire"),
        ("how long should I hang on to old tax paperwork?", "recordkeeping"),
        ("what's the max I can put in a roth if I'm 52?", "590-a|408a|roth-ira"),
        ("how much profit from selling my house can i keep tax free?", "section-121"),
        ("how long after my statement can i report a billing mistake?", "-card-charge|1026.13"),
        ("the servicer says we overpaid escrow, will they give the extra back?", "escrow-basics"),
        ("if someone skimmed my debit card how much am i liable for", "1026.12"),
        ("charges i didn't authorise turned up on my mastercard, most i'd owe?", "1026.12|-charge"),
        ("whats the process for challenging a charge", "-card-charge|1026.13|sapphire"),
    ],
)
def test_the_document_about_what_was_asked_ranks_alone(text: str, path: str) -> None:
    hits = library().rank(text)
    assert hits and all(any(p in hit.doc.path.lower() for p in path.split("|")) for hit in hits)


def test_a_question_with_no_topic_of_its_own_joins_the_one_before() -> None:
    asked = "will the sapphire pay for a hotel if my flight is late? how much?"
    assert questions_of(asked) == [asked]
    assert questions_of("what's my amex balance? and citi?") == [
        "what's my amex balance?",
        "citi?",
    ]


def test_a_question_of_the_users_own_with_no_topic_cites_no_document() -> None:
    task = figures("how much credit have i got left on it", Context(library(), None))
    assert isinstance(task, Figures) and task.hits == []


def _bundled(tool: str, path: str, asked: str) -> Source:
    """A bundled document as its reader tool returns it, in the tool's text blocks, with
    the passages the library ranks best for the question, as the engine reads it."""
    document = read_document(tool, path)
    assert isinstance(document, DocumentRead)
    content = [{"type": "text", "text": p} for p in chunks(document.text)]
    result = Result(tool, 0, {"source": path, "title": document.title, "content": content})
    hit = next((h for h in library().rank(asked) if h.doc.path == path), None)
    return Source(result, 0, hit.passages if hit else ())


def test_how_much_takes_the_dollar_figure_over_a_time() -> None:
    asked = "how much profit from selling my house can i keep tax free if i'm single?"
    source = _bundled("read_tax_authority", "usc/title-26/section-121.md", asked)
    blocks = document_answer(asked, [source], library().rarity)
    assert "$250,000" in " ".join(text for text, _ in blocks)


@pytest.mark.parametrize(
    ("said", "read"),
    [
        ("charges I didn't authorise", "charges i unauthorized"),
        ("a stranger got hold of my card", "a stranger unauthorized my card"),
        ("am I on the hook for it", "am i liability for it"),
        ("will they send the extra back", "will they refund the extra"),
    ],
)
def test_an_everyday_phrase_is_read_as_the_documents_word(said: str, read: str) -> None:
    assert as_documents_say(said) == read


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("does the servicer have to give the extra back?", True),
        ("is my bank required to refund me", True),
        ("someone used my card without permission, what do I owe?", True),
        ("how much do I have to pay on my amex", False),
    ],
)
def test_what_another_party_must_do_is_a_rule(text: str, rule: bool) -> None:
    assert documentish(text) is rule


def test_a_thiefs_purchases_ask_the_rule_not_the_spending() -> None:
    assert (
        "spending"
        not in understand("a thief used my card, am I on the hook for purchases?").intents
    )
    assert "spending" in understand("what purchases did I make last week").intents


def test_a_question_naming_a_bundled_document_is_answered_from_it() -> None:
    task = figures("what does section 121 say about selling my house", Context(library(), None))
    assert isinstance(task, Figures)
    assert [hit.doc.path for hit in task.hits] == ["usc/title-26/section-121.md"]


def test_how_do_i_gets_every_step_of_a_list_of_steps_in_order() -> None:
    asked = "whats the process for challenging a charge on my card"
    path = "guides/disputing-a-card-charge.md"
    blocks = document_answer(
        asked, [_bundled("read_credit_card_document", path, asked)], library().rarity
    )
    lines = " ".join(text for text, _ in blocks).splitlines()
    assert [line.split(".")[0] for line in lines] == [
        "- Look again",
        "- Ask the merchant first when you know them",
        "- Note the dates",
        "- Write to the billing-error address",
        "- Pay the rest",
        "- Report fraud separately",
        "- Follow up",
    ]
    assert "60 days" in lines[2]


def test_what_a_document_says_of_its_own_subject_opens_each_section() -> None:
    asked = "what does the tax code say about excluding the gain when you sell your house"
    path = "usc/title-26/section-121.md"
    blocks = document_answer(asked, [_bundled("read_tax_authority", path, asked)], library().rarity)
    said = " ".join(text for text, _ in blocks)
    assert said.startswith("Gain on the sale or exchange of a home is left out of gross income")
    assert said.index("$250,000") < said.index("A seller who fails the two-year tests")
