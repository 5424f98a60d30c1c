"""Which source string each tool result is cited under, and the target it gets.

docs/specs.md, rules T3-T8 (what the server cites, and each target): one function per
row group of that table, all pure.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import cast
from urllib.parse import urlsplit

from ..tool_registry import (
    BY_NAME,
    EXECUTE_PYTHON,
    EXECUTE_SQL,
    READ_CREDIT_CARD_DOCUMENT,
    READ_MORTGAGE_AUTHORITY,
    READ_TAX_AUTHORITY,
    READERS,
    SEARCH_WEB,
)
from .account_ids import AccountPair, AccountReader
from .targets import (
    AccountTarget,
    AnalysisTarget,
    CardDocumentTarget,
    CitationAccountProvider,
    CitationAccountRef,
    CitationTarget,
    DocumentTarget,
    MarketDataTarget,
    MortgageReferenceTarget,
    PortfolioTarget,
    TaxReferenceTarget,
    UserFileTarget,
    WebTarget,
    is_file_id,
    target_for_accounts,
)

ACCOUNT_SOURCE_PREFIX = "silvia://your-account/"
# Rows that name no account but came from one uploaded file (docs/architecture.md,
# "Transactions and statement files"): one source per file, titled with the file's name.
FILE_SOURCE_PREFIX = "silvia://your-file/"
FILE_ID_COLUMN = "file_id"
FILE_NAME_COLUMN = "file_name"
PORTFOLIO_SOURCE = "silvia://your-portfolio"
MARKET_DATA_SOURCE = "silvia://market-data/finnhub"
ANALYSIS_SOURCE = "silvia://analysis"
SEARCH_SOURCE = f"silvia://search/{SEARCH_WEB}"
# An article the sandbox's search client found without a URL: neither a web page nor Analysis.
PYTHON_SEARCH_SOURCE = f"silvia://search/{EXECUTE_PYTHON}"

# Each library reader: its corpus's silvia:// prefix and the kind of target it cites.
_READER_TARGETS: dict[str, type[DocumentTarget]] = {
    READ_TAX_AUTHORITY: TaxReferenceTarget,
    READ_CREDIT_CARD_DOCUMENT: CardDocumentTarget,
    READ_MORTGAGE_AUTHORITY: MortgageReferenceTarget,
}
READER_CORPORA: dict[str, tuple[str, type[DocumentTarget]]] = {
    reader: (f"silvia://{BY_NAME[reader].corpus}/", _READER_TARGETS[reader]) for reader in READERS
}

# The columns a row may show as its account's name, most specific first.
LABEL_COLUMNS = ("account_name", "name", "nickname", "official_name", "institution_name")
_FIRST_LABEL = LABEL_COLUMNS[0]
_OTHER_LABELS = frozenset(LABEL_COLUMNS[1:])

_ASCII_WORD = re.compile(r"[a-z0-9]+")
_TICKER = re.compile(r"[A-Z0-9][A-Z0-9.\-:^=]{0,19}", re.ASCII)
# How many hex digits of a label's hash tell apart labels whose slugs alone would not.
_LABEL_HASH_DIGITS = 8


def _in_slug(ch: str) -> bool:
    # Letters, marks and digits of every script: "日常账户", "épargne", a Devanagari vowel sign.
    return unicodedata.category(ch)[0] in "LMN"


def _between_words(ch: str) -> bool:
    # What a label may hold between its words and still read as the same label.
    return unicodedata.category(ch)[0] in "PZ"


def _plain_label(label: str) -> str:
    return unicodedata.normalize("NFKC", label).lower()


def slugify(label: str) -> str:
    """Lower-case `label` (NFKC) and turn each run of characters that are not letters, marks
    or digits, of any script, into one `-`."""
    if label.isascii():
        # ASCII is its own NFKC form, and its letters and digits are exactly [A-Za-z0-9].
        lower = label.lower()
        words = lower.split()
        if "".join(words).isalnum():
            return "-".join(words)  # Words of letters and digits between spaces: most labels.
        return "-".join(_ASCII_WORD.findall(lower))
    words = []
    word: list[str] = []
    for ch in _plain_label(label):
        # A mark belongs to the letter before it; alone (an emoji's variation selector) it
        # is not one.
        if _in_slug(ch) and (word or unicodedata.category(ch)[0] != "M"):
            word.append(ch)
        elif word:
            words.append("".join(word))
            word = []
    if word:
        words.append("".join(word))
    return "-".join(words)


def account_source(label: str) -> str:
    """Return the source an account's rows are cited under: `silvia://your-account/<slug>`.

    Labels that differ only in case, spacing or punctuation share one source (the seed's
    pooling of one label over several accounts). A label whose slug leaves out more than that
    (an emoji, a symbol), or leaves nothing, gets a short hash of the whole label after its
    slug, so that two such labels never become one source.
    """
    slug = slugify(label)
    if slug and label.isascii() and slug == label.lower().replace(" ", "-"):
        # Most labels: ASCII letters and digits, with single spaces or hyphens between them.
        return ACCOUNT_SOURCE_PREFIX + slug
    if label.isascii() and "".join(label.split()).isalnum():
        return ACCOUNT_SOURCE_PREFIX + slug  # Letters and digits between spaces: nothing left out.
    plain = " ".join(_plain_label(label).split())
    if slug and all(_in_slug(ch) or _between_words(ch) for ch in plain):
        return ACCOUNT_SOURCE_PREFIX + slug
    digest = hashlib.sha256(plain.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{ACCOUNT_SOURCE_PREFIX}{slug or 'account'}-{digest[:_LABEL_HASH_DIGITS]}"


def file_source(file_id: str) -> str:
    """Return the source a file's own rows are cited under: `silvia://your-file/<file_id>`."""
    return FILE_SOURCE_PREFIX + file_id


def _file_title(row: Mapping[str, object]) -> str:
    name = row.get(FILE_NAME_COLUMN)
    if isinstance(name, str) and name.strip():
        return name.strip()
    return row_label(row) or "Your file"


def market_data_source(ticker: str | None) -> str:
    """Return the source of a Finnhub payload: with its ticker when it has a valid one."""
    if ticker is not None and _TICKER.fullmatch(ticker.strip().upper()):
        return f"{MARKET_DATA_SOURCE}/{ticker.strip().upper()}"
    return MARKET_DATA_SOURCE


def is_http_url(value: str) -> bool:
    """Tell whether `value` is an absolute http(s) URL with a host."""
    try:
        parts = urlsplit(value)
        return parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        return False


def row_label(row: Mapping[str, object]) -> str | None:
    """Return the name a SQL row shows for its account, or None for a row with no account."""
    for column in LABEL_COLUMNS:
        value = row.get(column)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


@dataclass(frozen=True, slots=True)
class SqlGroup:
    """The rows of one SQL result that are cited under one source."""

    source: str
    title: str
    rows: tuple[Mapping[str, object], ...]
    target: CitationTarget | None


# Equal to no cell: a group's first id before it has one, and what `seen` lacks.
_UNSEEN = object()
# What a row without a first label cell must also lack to be the portfolio's.
_NOT_PORTFOLIO = frozenset((*LABEL_COLUMNS[1:], FILE_ID_COLUMN))


class _Group:
    """One source's rows as they are read, and the distinct accounts they name so far."""

    # No container beyond `rows` until a second account: a result can have thousands of
    # labels, and every object a group keeps alive is one more for the garbage collector.
    __slots__ = (
        "rows",
        "title",
        "fixed",
        "typed",
        "first_id",
        "first_provider",
        "more",
        "said",
        "said_with",
        "seen",
    )

    def __init__(self, title: str, fixed: object = _UNSEEN) -> None:
        self.rows: list[Mapping[str, object]] = []
        self.title = title
        # The target of a source whose rows need no reading (the portfolio, a file), or
        # `_UNSEEN` for an account label's, made from its rows' accounts.
        self.fixed = fixed
        self.typed = True  # False once a row names no account.
        # The first account, kept as its two cells: one object fewer per group than the pair.
        self.first_id: str | None = None
        self.first_provider: CitationAccountProvider | None = None
        # Every distinct (account_id, provider), in the order rows first name it, once two.
        self.more: dict[AccountPair, None] | None = None
        # The first `source_account_id` that named its account, with the `source` cell beside
        # it, and `seen` for the others: a later row with both cells the same names the same
        # account, so it is not read again.
        self.said: object = _UNSEEN
        self.said_with: object = _UNSEEN
        self.seen: dict[str, object] | None = None

    def read(
        self, row: Mapping[str, object], said: object, source: object, reader: AccountReader
    ) -> None:
        """Add the account `row` (its `source_account_id` and `source` cells `said` and
        `source`) names; a row that names none leaves the group untyped."""
        account = reader.read(row)
        if account is None:
            self.typed = False
            return
        account_id, provider = account
        if self.first_id is None:
            self.first_id, self.first_provider = account_id, provider
        elif account_id != self.first_id or provider != self.first_provider:
            if self.more is None:
                self.more = {(self.first_id, self.first_provider): None}
            self.more[account] = None
        if account_id is not said:
            return  # Named by another id column: such rows are read each time.
        if self.said is _UNSEEN:
            self.said, self.said_with = said, source
        else:
            if self.seen is None:
                self.seen = {}
            self.seen[said] = source

    def target(self) -> CitationTarget | None:
        """Return the fixed target, `account`, `accounts`, or None when a row named no account."""
        if self.fixed is not _UNSEEN:
            return cast("CitationTarget | None", self.fixed)
        if not self.typed or self.first_id is None:
            return None
        if self.more is None:
            # What target_for_accounts makes of one account, without the tuple around it.
            return AccountTarget(self.first_id, self.first_provider)
        # Distinct pairs in first-seen order merge exactly as every row's ref would.
        return target_for_accounts(tuple(CitationAccountRef(*pair) for pair in self.more))


def _accounts_target(rows: Iterable[Mapping[str, object]]) -> CitationTarget | None:
    group = _Group("")
    reader = AccountReader()
    for row in rows:
        group.read(row, None, None, reader)
        if not group.typed:
            return None  # One row that lacks an id leaves the label untyped.
    return group.target()


def _file_target(file_id: str, rows: Iterable[Mapping[str, object]]) -> UserFileTarget | None:
    """Return the file target when every row is one of that file's own (none names an account)."""
    reader = AccountReader()
    every = list(rows)
    if not every or not is_file_id(file_id):
        return None
    for row in every:
        if row.get(FILE_ID_COLUMN) != file_id or reader.read(row) is not None:
            return None
    return UserFileTarget(file_id)


def targets_for_sql(rows: Iterable[Mapping[str, object]]) -> list[SqlGroup]:
    """Group SQL rows by account label, each with its target; unlabelled rows are the portfolio.

    One pass, each row read once: each distinct label cell is stripped and slugged once, each
    distinct id and source checked once, and a row whose id and source repeat an earlier row's
    in its group is not read again. The result is exactly what `row_label`, `account_source`,
    `account_ref_from_row` and `target_for_accounts` give row by row.
    """
    reader = AccountReader()
    groups: dict[str, _Group] = {}
    # Each distinct label cell read so far: the group its rows join, or None when it is blank.
    by_cell: dict[str, _Group | None] = {}
    portfolio = _Group("Your portfolio", PortfolioTarget())

    def group_of(row: Mapping[str, object]) -> _Group:
        # A file's own row names no account, so the file is its source.
        file_id = row.get(FILE_ID_COLUMN)
        if file_id is not None and is_file_id(file_id) and reader.read(row) is None:
            source = file_source(str(file_id))
            group = groups.get(source)
            if group is None:
                group = groups[source] = _Group(_file_title(row), UserFileTarget(str(file_id)))
            return group
        # `row_label`: the first label cell that is not blank.
        for column in LABEL_COLUMNS:
            cell = row.get(column)
            if isinstance(cell, str):
                group = by_cell[cell] if cell in by_cell else label_group(cell)
                if group is not None:
                    return group
        groups.setdefault(PORTFOLIO_SOURCE, portfolio)
        return portfolio

    def label_group(cell: str) -> _Group | None:
        # `account_source`, each distinct cell stripped and slugged once; None when blank.
        label = cell.strip()
        group = None
        if label:
            source = account_source(label)
            group = groups.get(source)
            if group is None:
                group = groups[source] = _Group(label)
        by_cell[cell] = group
        return group

    for row in rows:
        # Inline, the common rows: a label cell seen before in a row of no file, or once the
        # portfolio has a row, a row with no label or file column (holdings).
        cell = row.get(_FIRST_LABEL)
        if cell is None:
            if portfolio.rows and _NOT_PORTFOLIO.isdisjoint(row):
                portfolio.rows.append(row)
                continue
            group = group_of(row)
        elif cell.__class__ is str and row.get(FILE_ID_COLUMN) is None:
            known = by_cell.get(cell)  # None for a new cell, and for a blank one.
            group = known or (cell not in by_cell and label_group(cell)) or group_of(row)
        else:
            group = group_of(row)
        group.rows.append(row)
        said = row.get("source_account_id")
        source = row.get("source")
        if said == group.said and source == group.said_with:
            continue  # Most often: the account the group's first row named.
        if not group.typed or group.fixed is not _UNSEEN:
            continue
        seen = group.seen
        if seen is None or said.__class__ is not str or seen.get(said, _UNSEEN) != source:
            group.read(row, said, source, reader)
    # Each group let go as its SqlGroup is made (last first, then turned round): the garbage
    # collector's passes, set off by what is made here, never walk both.
    by_cell.clear()
    cited = []
    while groups:
        source, group = groups.popitem()
        cited.append(SqlGroup(source, group.title, tuple(group.rows), group.target()))
    cited.reverse()
    return cited


def target_for_source(
    tool: str, source: str, payload: Iterable[Mapping[str, object]] | None = None
) -> CitationTarget | None:
    """Return the target of `source` written by `tool`; `payload` is the SQL rows behind it."""
    if tool == EXECUTE_SQL:
        if source == PORTFOLIO_SOURCE:
            return PortfolioTarget()
        if source.startswith(ACCOUNT_SOURCE_PREFIX) and payload is not None:
            return _accounts_target(payload)
        if source.startswith(FILE_SOURCE_PREFIX) and payload is not None:
            return _file_target(source.removeprefix(FILE_SOURCE_PREFIX), payload)
        return None
    if tool == EXECUTE_PYTHON:
        if source in (MARKET_DATA_SOURCE, ANALYSIS_SOURCE):
            return AnalysisTarget()
        if source.startswith(MARKET_DATA_SOURCE + "/"):
            ticker = source.removeprefix(MARKET_DATA_SOURCE + "/")
            return MarketDataTarget(ticker) if _TICKER.fullmatch(ticker) else None
        return WebTarget(source) if is_http_url(source) else None
    if tool in READER_CORPORA:
        prefix, kind = READER_CORPORA[tool]
        if is_http_url(source):
            return kind(source)
        if source.startswith(prefix) and len(source) > len(prefix):
            return kind(None)
        return None
    if tool == SEARCH_WEB:
        return WebTarget(source) if is_http_url(source) else None
    return None
