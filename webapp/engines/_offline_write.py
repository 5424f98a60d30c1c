"""The offline engine's prose: one sentence per result, each citing what it says."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Block = tuple[str, list[dict[str, Any]]]
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True, slots=True)
class Result:
    """One search_result block of this turn (index None: a tool error, `block` has `error`)."""

    tool: str
    index: int | None
    block: dict[str, Any]

    @property
    def texts(self) -> list[str]:
        content = self.block.get("content")
        return [str(c.get("text", "")) for c in content if isinstance(c, dict)] \
            if isinstance(content, list) else []


def _cite(result: Result, start: int = 0, end: int | None = None) -> dict[str, Any]:
    texts = result.texts
    end = len(texts) if end is None else end
    return {
        "type": "search_result_location",
        "source": result.block.get("source"),
        "title": result.block.get("title"),
        "cited_text": "\n\n".join(texts[start:end]),
        "search_result_index": result.index,
        "start_block_index": start,
        "end_block_index": end,
    }


def _fields(text: str) -> dict[str, str]:
    pairs = (line.partition(": ") for line in text.splitlines())
    return {key.strip(): value.strip() for key, sep, value in pairs if sep}


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value not in (None, "", "null") else None
    except ValueError:
        return None


def money(amount: float, currency: str | None = "USD") -> str:
    """Format an amount for people: `$1,234.50`, or `1,234.50 EUR`."""
    if currency in (None, "", "USD", "null"):
        return f"-${abs(amount):,.2f}" if amount < 0 else f"${amount:,.2f}"
    return f"{amount:,.2f} {currency}"


def _account_sentence(title: str, rows: list[dict[str, str]]) -> str:
    if any("ticker" in row for row in rows):
        parts = [f"{row.get('quantity', '?')} {row['ticker']} worth "
                 f"{money(_number(row.get('market_value')) or 0.0, row.get('currency'))}"
                 for row in rows]
        return f"{title} holds " + ", ".join(parts) + "."
    owed = [row for row in rows if row.get("account_type") == "credit"]
    parts = []
    for row in rows:
        balance = _number(row.get("current_balance"))
        amount = "an unknown balance" if balance is None else money(
            abs(balance) if row in owed else balance, row.get("currency"))
        where = f" at {row['institution_name']}" if row.get("institution_name") else ""
        parts.append(f"{amount}{where}")
    verb = "you owe" if len(owed) == len(rows) else "the balance is"
    return f"{title}: {verb} " + " and ".join(parts) + "."


def _sql_blocks(results: list[Result], question: str) -> list[Block]:
    blocks: list[Block] = []
    owed = 0.0
    cards = 0
    for result in results:
        rows = [_fields(text) for text in result.texts]
        title = str(result.block.get("title") or "Your accounts")
        if result.block.get("source") == "silvia://your-portfolio":
            total = sum(_number(r.get("market_value")) or 0.0 for r in rows)
            listed = ", ".join(f"{r.get('ticker', '?')} "
                               f"{money(_number(r.get('market_value')) or 0.0, r.get('currency'))}"
                               for r in rows)
            blocks.append((f"Your portfolio is worth {money(total)} ({listed}).", [_cite(result)]))
            continue
        for row in rows:
            if row.get("account_type") == "credit":
                owed += abs(_number(row.get("current_balance")) or 0.0)
                cards += 1
        blocks.append((_account_sentence(title, rows), [_cite(result)]))
    if cards and any(w in question.lower() for w in ("owe", "debt", "credit")):
        cited = [_cite(r) for r in results]
        noun = "card" if cards == 1 else "cards"
        blocks.insert(0, (f"In total you owe {money(owed)} across {cards} credit {noun}.", cited))
    return blocks


def _market_block(result: Result) -> Block:
    """Say what the quote says, citing the block that says it."""
    ticker = str(result.block.get("source", "")).rsplit("/", 1)[-1]
    for index, text in enumerate(result.texts):
        if text.startswith(f"{ticker} last traded at "):
            return (text, [_cite(result, index, index + 1)])
    return (f"Here is the latest market data for {ticker}.", [_cite(result)])


def _best_passage(result: Result, wanted: set[str], words: Callable[[str], set[str]]) -> int:
    scores = [(len(wanted & words(text)), -i) for i, text in enumerate(result.texts)]
    return -max(scores)[1] if scores else 0


def _passage_block(result: Result, wanted: set[str], words: Callable[[str], set[str]]) -> Block:
    index = _best_passage(result, wanted, words)
    passage = result.texts[index] if result.texts else ""
    sentence = " ".join(_SENTENCE.split(passage.replace("\n", " ").strip())[:2])[:400]
    title = str(result.block.get("title") or "This source")
    return (f"According to {title}: {sentence}", [_cite(result, index, index + 1)])


def _overlap(result: Result, wanted: set[str], words: Callable[[str], set[str]]) -> int:
    return len(wanted & words(" ".join([str(result.block.get("title")), *result.texts])))


def _worth_citing(result: Result, results: list[Result], wanted: set[str],
                  words: Callable[[str], set[str]]) -> bool:
    """Cite the best web result, and the runner-up only when it is as relevant."""
    web = [r for r in results if r.tool == result.tool and not
           str(r.block.get("source", "")).startswith("silvia://")]
    scores = [_overlap(r, wanted, words) for r in web]
    rank = web.index(result)
    return rank == 0 or (rank == 1 and scores[1] >= scores[0])


def write_answer(
    question: str, results: list[Result], words: Callable[[str], set[str]]
) -> list[Block]:
    """Write the answer's text blocks, each with the citations that back it."""
    wanted = words(question)
    blocks: list[Block] = []
    errors = [str(r.block["error"]) for r in results if r.index is None]
    cited = [r for r in results if r.index is not None]
    blocks += _sql_blocks([r for r in cited if r.tool == "execute_sql"], question)
    for result in cited:
        source = str(result.block.get("source", ""))
        if result.tool == "execute_sql":
            continue
        if source.startswith("silvia://market-data/finnhub/"):
            blocks.append(_market_block(result))
        elif source.startswith("silvia://") and result.tool == "execute_python":
            blocks.append((f"The analysis printed: {result.texts[0][:300]}", [_cite(result)]))
        elif result.tool == "search_web" or result.tool == "execute_python":
            if _worth_citing(result, cited, wanted, words):
                blocks.append(_passage_block(result, wanted, words))
        else:
            blocks.append(_passage_block(result, wanted, words))
    blocks = [(text + ("\n\n" if i < len(blocks) - 1 else ""), cites)
              for i, (text, cites) in enumerate(blocks)]
    if errors and not blocks:
        blocks.append(("I couldn't get that information: " + errors[0], []))
    if not blocks:
        blocks.append(("I couldn't find anything in your data or my sources to answer that.", []))
    return blocks
