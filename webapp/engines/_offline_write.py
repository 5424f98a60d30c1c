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


def _is_prose(text: str) -> bool:
    """Tell a passage worth quoting from a heading or an italic note about the document."""
    stripped = text.strip()
    return not stripped.startswith("#") and not (stripped.startswith("*")
                                                  and stripped.endswith("*")
                                                  and not stripped.startswith("**"))


def _best_passage(result: Result, wanted: set[str], words: Callable[[str], set[str]]) -> int:
    scores = [(_is_prose(text), len(wanted & words(text)), -i)
              for i, text in enumerate(result.texts)]
    return -max(scores)[2] if scores else 0


def _excerpt(passage: str) -> str:
    """Quote a list or table whole (it breaks when squashed), else its first two sentences."""
    lines = passage.strip().splitlines()
    if len(lines) > 1 and all(re.match(r"\s*(?:[-*|]|\d+\.)\s", line) or line.startswith(" ")
                              for line in lines[1:]):
        kept: list[str] = []
        for line in lines:  # Whole lines: an item cut mid-word reads as a mistake.
            if kept and sum(len(k) + 1 for k in kept) + len(line) > 800:
                break
            kept.append(line)
        return "\n\n" + "\n".join(kept)
    return " " + " ".join(_SENTENCE.split(passage.replace("\n", " ").strip())[:2])[:400]


def _passage_block(result: Result, wanted: set[str], words: Callable[[str], set[str]]) -> Block:
    index = _best_passage(result, wanted, words)
    passage = result.texts[index] if result.texts else ""
    title = str(result.block.get("title") or "This source")
    return (f"According to {title}:{_excerpt(passage)}", [_cite(result, index, index + 1)])


def _relevance(result: Result, wanted: set[str], words: Callable[[str], set[str]]) -> int:
    """Score a document by its title and its best passage."""
    best = result.texts[_best_passage(result, wanted, words)] if result.texts else ""
    return len(wanted & words(str(result.block.get("title")))) + len(wanted & words(best))


def _passages(results: list[Result], wanted: set[str],
              words: Callable[[str], set[str]]) -> list[Block]:
    """Quote the most relevant document, and the runner-up only when it is about as relevant."""
    ranked = sorted(results, key=lambda r: _relevance(r, wanted, words), reverse=True)
    scores = [_relevance(r, wanted, words) for r in ranked]
    keep = ranked[:1] + [r for r, score in zip(ranked[1:2], scores[1:2], strict=True)
                         if score * 4 >= scores[0] * 3]
    return [_passage_block(result, wanted, words) for result in keep]


def write_answer(
    question: str, results: list[Result], words: Callable[[str], set[str]]
) -> list[Block]:
    """Write the answer's text blocks, each with the citations that back it."""
    wanted = words(question)
    errors = [str(r.block["error"]) for r in results if r.index is None]
    cited = [r for r in results if r.index is not None]
    blocks = _sql_blocks([r for r in cited if r.tool == "execute_sql"], question)
    documents: list[Result] = []
    for result in cited:
        source = str(result.block.get("source", ""))
        if result.tool == "execute_sql":
            continue
        if source.startswith("silvia://market-data/finnhub/"):
            blocks.append(_market_block(result))
        elif source.startswith("silvia://") and result.tool == "execute_python":
            blocks.append((f"The analysis printed: {result.texts[0][:300]}", [_cite(result)]))
        else:
            documents.append(result)
    blocks += _passages(documents, wanted, words)
    blocks = [(text + ("\n\n" if i < len(blocks) - 1 else ""), cites)
              for i, (text, cites) in enumerate(blocks)]
    if errors and not blocks:
        blocks.append(("I couldn't get that information: " + errors[0], []))
    if not blocks:
        blocks.append(("I couldn't find anything in your data or my sources to answer that.", []))
    return blocks
