"""A personal-finance category for an uploaded row, as Plaid would give a synced one.

A statement file carries no categories of Plaid's kind (a CSV's own "Category" column
says things like "Groceries"), so a row's description and its file's category are matched
against a few words per category. Money out that matches none is general merchandise;
money in is income, a refund, a payment or a deposit; nothing is guessed beyond the words.
"""

from __future__ import annotations

import re
from decimal import Decimal

# (primary, detailed, words that say it): the first match wins, so specific ones go first.
_RULES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "LOAN_PAYMENTS",
        "LOAN_PAYMENTS_CREDIT_CARD_PAYMENT",
        ("payment thank you", "autopay", "card payment", "credit card payment"),
    ),
    ("LOAN_PAYMENTS", "LOAN_PAYMENTS_MORTGAGE_PAYMENT", ("mortgage",)),
    ("TRANSFER_OUT", "TRANSFER_OUT_ACCOUNT_TRANSFER", ("transfer to", "online transfer")),
    (
        "FOOD_AND_DRINK",
        "FOOD_AND_DRINK_GROCERIES",
        (
            "grocer",
            "supermarket",
            "safeway",
            "whole foods",
            "trader joe",
            "kroger",
            "aldi",
            "costco",
            "publix",
            "wegmans",
            "market",
        ),
    ),
    (
        "FOOD_AND_DRINK",
        "FOOD_AND_DRINK_COFFEE",
        ("coffee", "starbucks", "blue bottle", "cafe"),
    ),
    (
        "FOOD_AND_DRINK",
        "FOOD_AND_DRINK_RESTAURANT",
        ("restaurant", "dining", "grill", "pizza", "sushi", "chipotle", "taqueria", "bistro"),
    ),
    (
        "TRANSPORTATION",
        "TRANSPORTATION_GAS",
        ("fuel", "gas station", "shell", "chevron", "exxon", "bp ", "mobil", "petrol"),
    ),
    ("TRANSPORTATION", "TRANSPORTATION_TAXIS_AND_RIDE_SHARES", ("uber", "lyft", "taxi")),
    ("TRAVEL", "TRAVEL_FLIGHTS", ("airline", "air lines", "airways", "flight")),
    ("TRAVEL", "TRAVEL_LODGING", ("hotel", "marriott", "hilton", "airbnb", "lodging")),
    (
        "ENTERTAINMENT",
        "ENTERTAINMENT_TV_AND_MOVIES",
        ("netflix", "hulu", "disney", "cinema", "movie"),
    ),
    ("ENTERTAINMENT", "ENTERTAINMENT_MUSIC_AND_AUDIO", ("spotify", "music")),
    (
        "RENT_AND_UTILITIES",
        "RENT_AND_UTILITIES_GAS_AND_ELECTRICITY",
        ("electric", "energy", "pg&e", "power"),
    ),
    ("RENT_AND_UTILITIES", "RENT_AND_UTILITIES_INTERNET_AND_CABLE", ("internet", "comcast")),
    ("RENT_AND_UTILITIES", "RENT_AND_UTILITIES_RENT", ("rent",)),
    (
        "GENERAL_MERCHANDISE",
        "GENERAL_MERCHANDISE_ONLINE_MARKETPLACES",
        ("amazon", "ebay", "etsy"),
    ),
)
_INCOME_WORDS = ("payroll", "salary", "direct dep", "wages")
_SPACE = re.compile(r"\s+")


def categorize(description: str, amount: Decimal, hint: str | None = None) -> tuple[str, str]:
    """Return (category, subcategory) for a row; amounts are Plaid-signed (positive is out)."""
    text = " " + _SPACE.sub(" ", f"{description} {hint or ''}".lower()) + " "
    if amount < 0:
        if any(word in text for word in _INCOME_WORDS):
            return "INCOME", "INCOME_WAGES"
        if "refund" in text or "return" in text:
            return "GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE_OTHER_GENERAL_MERCHANDISE"
        if "payment" in text:
            return "LOAN_PAYMENTS", "LOAN_PAYMENTS_CREDIT_CARD_PAYMENT"
        return "TRANSFER_IN", "TRANSFER_IN_DEPOSIT"
    for primary, detailed, words in _RULES:
        if any(word in text for word in words):
            return primary, detailed
    return "GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE_OTHER_GENERAL_MERCHANDISE"
