"""Hypothesis strategies for hostile JSON shaped like citation targets and checkpoints."""

from __future__ import annotations

from hypothesis import strategies as st

json_values: st.SearchStrategy[object] = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
kinds = st.sampled_from(
    [
        "web",
        "tax_reference",
        "card_document",
        "mortgage_reference",
        "market_data",
        "analysis",
        "account",
        "accounts",
        "portfolio",
        "other",
    ]
)
account_ids = st.from_regex(r"[A-Za-z0-9_-]{16,40}", fullmatch=True).filter(
    lambda s: not s.isdigit()
)
providers = st.sampled_from(["plaid", "manual", "snaptrade", None])

# Every field a target reads, each either well formed or any JSON at all, so a draw gets past
# the id check into the provider and list branches.
ref_like = st.fixed_dictionaries(
    {}, optional={"accountId": account_ids | json_values, "provider": providers | json_values}
)
target_like: st.SearchStrategy[dict[str, object]] = st.fixed_dictionaries(
    # Half the draws are account kinds: theirs are the branches with nested, typed fields.
    {"kind": st.sampled_from(["account", "accounts"]) | kinds},
    optional={
        "url": st.text() | json_values,
        "ticker": st.text() | json_values,
        "accountId": account_ids | json_values,
        "provider": providers | json_values,
        "accounts": st.lists(ref_like | json_values, max_size=4) | json_values,
    },
)
