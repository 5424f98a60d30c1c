"""What a question asks: its intents and the entities it names.

The intents are the questions the offline engine can answer from the tools: figures from
the user's own accounts, a quote, a document on a topic, or a short reply to small talk.
Entities are read from the words: kinds of account, tickers and company names, amounts and
years, institutions a person may name, and the other words that may name one of the user's
own institutions or accounts; which of those really do is for their data to say (the query
in `plan.py` matches them against the user's own names).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Literal, TypeAlias, cast

from ...tools.python.market import SnapshotMarket
from . import lexicon
from .leaving import excluding, exclusion_last
from .rule_words import card_rule, rule_phrase
from .words import STOPWORDS, amounts, words, years

Intent: TypeAlias = Literal[
    "small_talk",
    "net_worth",
    "debts",
    "utilization",
    "cash",
    "balances",
    "holdings",
    "allocation",
    "quote",
    "document",
    "spending",
]
Kind: TypeAlias = Literal[
    "checking",
    "savings",
    "credit",
    "depository",
    "investment",
    "retirement",
    "mortgage",
    "loan",
    "property",
    "crypto",
]
Extreme: TypeAlias = Literal["most", "least"]

KIND_PHRASES: tuple[tuple[str, Kind], ...] = tuple(
    (cue, cast(Kind, kind)) for cue, kind in lexicon.pairs("kind_phrases")
)
INSTITUTIONS = lexicon.phrases("institutions")
ALIASES: dict[str, str] = lexicon.table("aliases")
COMPANIES: dict[str, str] = lexicon.table("companies")
NOT_TICKERS = lexicon.words_of("not_tickers")
_SMALL_TALK = lexicon.words_of("small_talk")
_OWN = frozenset({"my", "mine", "me", "i", "we", "our", "us", "im", "ive"})
_TICKER = re.compile(r"(?<![A-Za-z])\$?([A-Z]{1,5})(?![A-Za-z])")
_DOLLAR_TICKER = re.compile(r"\$([A-Za-z]{1,5})\b")
_AT_NAME = re.compile(r"\b(?:at|with|from)\s+((?:[A-Z][\w&.-]*\s?){1,3})")
_QUOTE_WORDS = frozenset(lexicon.phrases("quote_words"))
_SPENDING = re.compile(
    r" (expense|expenses|spend|spending|spent|transactions?|purchases|"
    r"bought|income|paycheck|salary|bills) | did (i|we) (make|earn) | (i|we) (made|earned) "
)
# "how much can I still spend on it": the credit left, not what was spent
CAN_SPEND = re.compile(r"\b(can|could|may) (i|we) (still |yet )?spend\b|\bleft to spend\b")
_HOW_MUCH_HAVE = re.compile(
    r" how (much|many) (\w+ ){1,3}(do|did) (i|we) (have|own|hold) |"
    r" do (i|we) (have|own|hold) (?!to )|"
    r" (what|how much) (\w+ ){0,2}(have|ve) (i|we) got (?!to )| (what|whatve) (i|we) got "
)
_PRICE_PHRASES = lexicon.phrases("price_phrases")
_HOLDING_WORDS = "|".join(lexicon.phrases("holding_words"))
_SPLITS = "|".join(lexicon.phrases("split_words"))
_SPLIT_HOLDINGS = re.compile(
    rf" ({_SPLITS}) (\S+ ){{0,4}}({_HOLDING_WORDS}) | ({_HOLDING_WORDS}) (\S+ ){{0,3}}({_SPLITS}) "
)
# Of those, the ones that ask for a price even about shares the user owns.
_PRICE_WORDS = frozenset(lexicon.phrases("price_words"))

# Words that ask about the user's own figures, per intent (phrases are single-spaced).
_CUES: tuple[tuple[Intent, tuple[str, ...]], ...] = tuple(
    (cast(Intent, intent), tuple(cues)) for intent, cues in lexicon.table("cues").items()
)
_POSSESSIVE = frozenset({"my", "mine", "our"})


def documentish(text: str) -> bool:
    """Tell whether a question asks about rules or documents (a tax, a penalty, coverage)."""
    return rule_phrase(_phrase(text))


# Generic words of a question about accounts: never taken for an institution or account name.
GENERIC = lexicon.words_of("generic")


@dataclass(frozen=True, slots=True)
class Question:
    """A question as the engine understood it."""

    text: str
    intents: tuple[Intent, ...]
    kinds: tuple[Kind, ...] = ()
    names: tuple[str, ...] = ()  # words that may name one of the user's institutions/accounts
    institutions: tuple[str, ...] = ()  # institutions the question names, as people write them
    tickers: tuple[str, ...] = ()
    amounts: tuple[float, ...] = ()
    years: tuple[int, ...] = ()
    extreme: Extreme | None = None
    own: bool = False
    # "Should I rebalance my portfolio?": their figures, and what the documents advise.
    advice: bool = False
    # Speaks of the user's own account with no question word: "my Chase checking?"
    maybe_accounts: bool = False
    # Words naming accounts to leave out: "the other card" after a question about one.
    excluded: tuple[str, ...] = ()
    # Kinds of account to leave out: "cash outside of my savings", "without the house".
    excluded_kinds: tuple[Kind, ...] = ()
    # Several accounts named to be taken together: "the sapphire and the amex together".
    together: bool = False
    # Asks what an account is called: "the actual name of my bofa card", "what's it called".
    names_asked: bool = False
    # Asks for an account as a whole: "tell me about my Citi card" (every figure on record).
    described: bool = False

    @property
    def names_account(self) -> bool:
        """Tell whether it names a kind of account or an institution of the user's own."""
        return self.maybe_accounts and bool(self.kinds or self.institutions)

    @property
    def about_data(self) -> bool:
        """Tell whether the question asks about the user's own accounts or holdings."""
        return any(i not in ("small_talk", "quote", "document") for i in self.intents)


def _phrase(text: str) -> str:
    """Return the question's words single-spaced, aliases spelled out, padded with spaces."""
    said = words(text.replace("&", " and "))
    spelled = [
        word if said[at : at + len(full)] == full else " ".join(full)
        for at, word in enumerate(said)
        for full in [ALIASES.get(word, word).split()]
    ]  # "wells" is "wells fargo", but "wells fargo" stays as it is
    return _PLACED.sub(" ", " " + " ".join(spelled) + " ")


def _has(phrase: str, cue: str) -> bool:
    return f" {cue} " in phrase


def is_small_talk(text: str) -> bool:
    """Tell a greeting, thanks or "what can you do" from a question about money."""
    found = words(text)
    return 0 < len(found) <= 7 and all(word in _SMALL_TALK for word in found)


@functools.cache
def _snapshot_symbols() -> frozenset[str]:
    # The bundled snapshot's files, listed once: they are part of the app, as the lexicon is.
    return frozenset(SnapshotMarket().symbols)


def tickers_in(text: str) -> list[str]:
    """Return the tickers a question names, by symbol or company name, in order."""
    known = _snapshot_symbols()
    found: list[str] = []
    lowered = text.lower()
    for name, ticker in COMPANIES.items():
        if re.search(rf"\b{re.escape(name)}\b", lowered) and ticker not in found:
            found.append(ticker)
    quoting = bool((_QUOTE_WORDS | {"have", "own", "hold", "holding"}) & set(words(text)))
    candidates = [m.upper() for m in _DOLLAR_TICKER.findall(text)]
    candidates += [
        m for m in _TICKER.findall(text) if m not in NOT_TICKERS and (quoting or m in known)
    ]
    candidates += [w.upper() for w in words(text) if w.upper() in known]
    for ticker in candidates:
        if ticker not in found:
            found.append(ticker)
    return found


def institutions_in(text: str) -> list[str]:
    """Return the institutions a question names: well-known ones, or "at <Name>"."""
    phrase = _phrase(text)
    found = [name for name in INSTITUTIONS if _has(phrase, name)]
    for match in _AT_NAME.finditer(text):
        name = " ".join(match[1].split()).strip(".")
        if name.lower() not in found and name.upper() not in NOT_TICKERS:
            found.append(name.lower())
    return found


def _kinds(phrase: str) -> list[Kind]:
    found: list[Kind] = []
    for cue, kind in KIND_PHRASES:
        if _has(phrase, cue) and kind not in found:
            found.append(kind)
    if "mortgage" in found and "property" in found:
        found.remove("property")  # "home loan": the loan, not the home
    return found


def _intents(phrase: str, tickers: list[str], own: bool) -> list[Intent]:
    intents: list[Intent] = []
    if own and _SPENDING.search(phrase) and not CAN_SPEND.search(phrase) and not card_rule(phrase):
        return ["spending"]  # there are no transactions to answer from: say so
    for intent, cues in _CUES:
        if own and any(_has(phrase, cue) for cue in cues):
            intents.append(intent)
    # "split up, like stocks vs etfs vs crypto vs cash": the cash is one part of the split
    if own and _SPLIT_HOLDINGS.search(phrase) and set(intents) <= {"holdings", "balances", "cash"}:
        intents = ["allocation"]  # "break down how my investments are split up"
    if own and _HOW_MUCH_HAVE.search(phrase) and not intents:
        intents.append("holdings" if tickers else "balances")  # "how much ETH do I have"
    if own and not intents and _CONTENTS.search(phrase):
        intents.append("holdings" if tickers else "balances")  # "what's in my ether wallet"
    documentish = rule_phrase(phrase)
    kinds = _kinds(phrase)
    carded = "credit" in kinds or _has(phrase, "credit") or bool(institutions_in(phrase))
    # "Amex limit?", "the limit on my citi"; "my citi card's balance and limit": the limit
    # answer says what is owed too
    if (
        (carded or not kinds)
        and own
        and set(intents) <= {"balances"}
        and {"limit", "limits"} & set(phrase.split())
    ):
        intents = ["utilization"]
    if "utilization" in intents and not carded and (kinds or documentish):
        # "more than the limit into my IRA", "the limit on deducting cash I give to
        # charities": a contribution or a deduction limit, not a card's
        intents.remove("utilization")
    if "cash" in intents and re.search(r" cash(ing)? (out|in|it|them) ", phrase):
        intents.remove("cash")  # "cash out an I bond": a verb, not the user's cash
    if documentish and not {"net_worth", "utilization", "allocation"} & set(intents):
        # "Do I owe tax when I sell my home?" asks about a rule, not about an account.
        strong = {"balance", "balances", "holdings", "portfolio"} & set(phrase.split())
        if not strong:
            intents = []
    said = set(phrase.split())
    if (
        "debts" in intents
        and said & {"own", "have", "assets", "worth"}
        and said & {"minus", "less", "after", "subtract", "subtracting", "net", "take"}
    ):
        intents.insert(0, "net_worth")  # "what I own minus what I owe"
    if {"net_worth", "utilization"} & set(intents):
        intents = [i for i in intents if i in ("net_worth", "utilization")]
    elif "debts" in intents or "cash" in intents:
        intents = [i for i in intents if i not in ("balances", "holdings")]
    elif "allocation" in intents:
        intents = ["allocation"]
    elif "holdings" in intents:
        intents = [i for i in intents if i != "balances"]
    asks_price = _PRICE_WORDS if own else _QUOTE_WORDS
    if (
        tickers
        and (asks_price & set(phrase.split()) or not intents)
        and not {"allocation", "debts", "cash", "net_worth", "utilization"} & set(intents)
    ):
        intents.append("quote")
    elif not tickers and not own and any(_has(phrase, cue) for cue in _PRICE_PHRASES):
        intents.append("quote")  # a price, but of what? The answer asks for the ticker.
    return intents


_MEASURE_CUES = lexicon.phrases("implied_own", "measures")
_DEFINITION = re.compile(lexicon.table("implied_own")["definition"])


def _implied_own(text: str, phrase: str) -> bool:
    """Tell a question about the user's own figures that doesn't say "my": "amex balance
    pls", "how much money is in checking", "net worth?" (a definition or a rule is not)."""
    if _DEFINITION.search(phrase) or rule_phrase(phrase):
        return False
    if _CONTENTS.search(phrase) and (institutions_in(text) or _kinds(phrase)):
        return True  # "what's sitting in the wells account": what it holds
    if _LINKED.search(phrase):
        return True  # "which banks are connected?": the user's own
    if _HELD_AT.search(phrase) and institutions_in(text):
        return True  # "what's at chase": what the user keeps there
    if not any(_has(phrase, cue) for cue in _MEASURE_CUES):
        return False
    named = bool(institutions_in(text) or _kinds(phrase))
    return named or len(phrase.split()) <= 3


_CONTENTS = re.compile(str(lexicon.table("implied_own")["contents"]))
_LINKED = re.compile(str(lexicon.table("implied_own")["linked"]))
_HELD_AT = re.compile(str(lexicon.table("implied_own")["held_at"]))
_PLACED = re.compile(str(lexicon.table("implied_own")["placed"]))
_TOGETHER = lexicon.words_of("together")
_CALLED = re.compile(str(lexicon.table("implied_own")["called"]))
_ABOUT = re.compile(str(lexicon.table("implied_own")["about"]))


def asks_split(text: str) -> bool:
    """Tell whether a question asks how the user's investments are divided ("break down how
    my investments are split up"): all that is in them, uninvested cash included."""
    return _SPLIT_HOLDINGS.search(_phrase(text)) is not None


# The readers of a message ask again and again how its questions read (a turn asked a dozen
# times for the same few): each reading is kept. A `Question` is frozen, so it is shared.
UNDERSTOOD = 1024


@functools.lru_cache(maxsize=UNDERSTOOD)
def understand(text: str, own: bool = False) -> Question:
    """Read a question: its intents (none: a document or nothing) and its entities; `own`:
    it is about the user's own figures even without saying "my" (a later part of a message)."""
    text = exclusion_last(text)
    if is_small_talk(text):
        return Question(text, ("small_talk",))
    phrase, left_out = excluding(_phrase(text))
    tickers = tickers_in(text)
    own = own or bool(_OWN & set(phrase.split())) or _implied_own(text, phrase)
    intents = _intents(phrase, tickers, own)
    if own and tickers and intents == ["balances"]:
        intents = ["holdings"]  # "what's my ether worth": the holding, not every account
    if (
        own
        and set(intents) <= {"holdings"}
        and not tickers
        and _HELD_AT.search(phrase)
        and institutions_in(text)
    ):
        intents = ["balances"]  # "what's at chase", "everything i hold with chase": its accounts
    if intents == ["balances"] and _CONTENTS.search(phrase):
        intents.append("holdings")  # "what's in my brokerage account": what it holds, if any
    kinds = _kinds(phrase)
    # "Can I ...?" and "Should I ...?" ask what is allowed or wise, not what an account holds.
    modal = re.search(r" (can|could|may|might|must|should) (i|we) ", phrase) is not None
    maybe_accounts = (
        bool(_POSSESSIVE & set(phrase.split()))
        and not intents
        and not modal
        and not rule_phrase(phrase)
        and not re.match(r" (when|why|how) ", phrase)
    )
    if "holdings" in intents and "quote" in intents and not own:
        intents.remove("holdings")
    # "tell me about my Citi card": the accounts it names, each with all that is on record
    described = (
        bool(_POSSESSIVE & set(phrase.split()))
        and _ABOUT.search(phrase) is not None
        and bool(kinds or institutions_in(text))
        and set(intents) <= {"balances"}
        and not modal
        and not rule_phrase(phrase)
    )
    if described:  # what an account that may hold investments holds, too
        held = not kinds or bool({"investment", "retirement"} & set(kinds))
        intents = ["balances", "holdings"] if held else ["balances"]
        maybe_accounts = False
    skip = GENERIC | STOPWORDS | {t.lower() for t in tickers} | set(COMPANIES)
    kind_words = {w for cue, _ in KIND_PHRASES for w in cue.split()}
    names = [w for w in phrase.split() if w not in skip and w not in kind_words and not w.isdigit()]
    names = [n for n in dict.fromkeys(names) if n not in _TOGETHER]
    lowered = phrase.split()
    left_names = tuple(w for w in left_out.split() if w not in skip and w not in kind_words)
    extreme: Extreme | None = None
    if {"highest", "largest", "biggest", "most", "fattest", "richest", "fullest"} & set(lowered):
        extreme = "most"
    elif {"lowest", "smallest", "least", "skinniest", "emptiest", "leanest"} & set(lowered):
        extreme = "least"
    return Question(
        text,
        tuple(intents),
        tuple(kinds),
        tuple(dict.fromkeys(names)),
        tuple(i for i in institutions_in(text) if not left_out or _has(phrase, i)),
        tuple(tickers),
        tuple(amounts(text)),
        tuple(years(text)),
        extreme,
        own,
        modal and bool(intents),
        maybe_accounts and bool(kinds or names),
        excluded=left_names,
        # "leaving the Chase card out": that card, not every card
        excluded_kinds=() if left_names else tuple(k for k in _kinds(left_out) if k not in kinds),
        together=bool(_TOGETHER & set(lowered)) and len(names) > 1,
        names_asked=own and _CALLED.search(phrase) is not None,
        described=described,
    )
