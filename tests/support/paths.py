"""The URLs the tests expect, spelled from the contract (docs/specs.md, rule T17) rather than
from the app's own link builder, so a wrong link in the app cannot also be the expectation."""

from __future__ import annotations

from urllib.parse import quote

# encodeURIComponent leaves letters, digits and these unescaped.
_URI_COMPONENT_SAFE = "-_.!~*'()"


def account_path(account_id: str) -> str:
    """`/accounts/` + `encodeURIComponent(account_id)`."""
    return "/accounts/" + quote(account_id, safe=_URI_COMPONENT_SAFE)
