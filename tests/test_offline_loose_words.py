"""Questions in loose words (issue 19's eleventh development set): money said to sit, be parked
or kept somewhere asks what is there, and a follow-up of it keeps what it asked; what is in a
wallet asks its coins; all that is held with a bank asks its accounts."""

from __future__ import annotations

from webapp.llm.offline.ask import understand
from webapp.llm.offline.conversation import follow_up, previous_question
from webapp.llm.offline.plan import holding_query


def test_where_money_is_said_to_sit_asks_what_is_there() -> None:
    for text in (
        "how much is parked in my citi savings",
        "how much is kept in my wells fargo checking",
        "how much money is stashed in my savings account",
    ):
        asked = understand(text)
        assert asked.intents and set(asked.intents) <= {"balances", "cash", "holdings"}, text
        assert not {"parked", "kept", "stashed"} & set(asked.names), text


def test_a_follow_up_of_money_said_to_sit_somewhere_asks_the_same_of_another_bank() -> None:
    before = previous_question(("how much is lying in my wells fargo savings?",))
    assert before is not None and before.intents == ("balances",)
    found = follow_up("and at chase?", before)
    assert found is not None
    asked, note = found
    assert asked.institutions == ("chase",) and asked.kinds == ("savings",)
    assert "Chase" in note


def test_what_is_in_a_wallet_asks_its_coins_not_their_price() -> None:
    asked = understand("what's held in my eth wallet?")
    assert "quote" not in asked.intents and "holdings" in asked.intents
    assert asked.tickers == ("ETH",)
    # a wallet named by its kind holds its coins alone, not the brokerage's shares
    wallet = understand("what's inside my crypto wallet")
    assert wallet.intents and wallet.kinds == ("crypto",)
    if "holdings" in wallet.intents:
        assert "security_type = 'crypto'" in holding_query(wallet)
    assert "security_type = 'crypto'" in holding_query(understand("which crypto do i hold"))
    # coins named beside other holdings: all of them
    both = holding_query(understand("what are my crypto and my shares worth together"))
    assert "WHERE security_type" not in both


def test_all_that_is_held_with_a_bank_asks_its_accounts() -> None:
    for text in ("all i've got with wells fargo", "everything we bank with citi?"):
        asked = understand(text)
        assert asked.intents == ("balances",), text
        assert asked.institutions, text
    # shares held at a brokerage are still its holdings
    assert understand("what do I hold at robinhood?").intents == ("holdings",)
