"""Words for the offline engine: tokens, crude stems, amounts, and money as people read it."""

from __future__ import annotations

import re
from functools import lru_cache

from ...money import format_money
from .lexicon import table

_APOSTROPHE = re.compile(r"['’]s\b")
_TOKEN = re.compile(r"[a-z0-9]+")
_AMOUNT = re.compile(
    r"\$\s?(\d[\d,]*(?:\.\d+)?)\s*(k|thousand|m|million)?\b|"
    r"\b(\d[\d,]*(?:\.\d+)?)\s*(dollars?|bucks|usd)\b|"
    r"\b(?!40[13]k|457)(\d+(?:\.\d+)?)\s?(k|grand)\b",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(19[5-9]\d|20\d\d)\b")
_SCALE = {"k": 1e3, "grand": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6}


def word_set(text: str) -> frozenset[str]:
    """Return the whitespace-separated words of `text` as a set (for long word lists)."""
    return frozenset(text.split())


# Words that carry no topic of their own in a question.
STOPWORDS = word_set("""
a about after again all am an and any are as at be been before being but by can could
did do does doing done for from get gets getting got had has have having he her here
hers him his how i if in into is it its just know let like may me might mine more most
much my need no nor not now of off on once only or our ours out over own please right
say she should so some still such tell than that the their theirs them then there these
they this those through to too under until up us very want was we were what whats when
where which while who whom why will with would you your yours yourself s t ve ll d re m
don doesn isn aren didn wasn couldn shouldn wouldn haven hasn go goes going went get
big bigger large larger small long often many soon exactly roughly typically usually
normally generally really actually also ever else best bad idea ok okay thing things
way ways work works mean means meaning explain define definition happen happens basically
example anything something someone anyone currently today year think guess reckon oops honestly
wondering hmm um uh ought
didnt dont doesnt isnt arent wasnt werent cant couldnt shouldnt wouldnt wont havent hasnt
hadnt im ive id youre theyre theres
steps step process procedure quickly quick fast pls plz
stuff bunch lot lots lol
thinking mostly bc cuz coz because couple someday apparently lmao gonna wanna kinda sorta
maybe probably literally definitely supposed seriously anyway anyways totally pretty quite
kind sort yeah yep btw tbh idk imo dunno whatever already even per
""")

# Everyday words and the words the documents use for the same thing (lexicon.toml).
SYNONYMS: dict[str, tuple[str, ...]] = {
    word: tuple(forms) for word, forms in table("synonyms").items()
}


def synonyms_of(word: str) -> tuple[str, ...]:
    """Return a word's synonyms, and those of its singular ("cars": those of "car")."""
    one = singular(word)
    return tuple(dict.fromkeys((*SYNONYMS.get(word, ()), *SYNONYMS.get(one, ()))))


def words(text: str) -> list[str]:
    """Return the lower-cased words of `text` ("401(k)" is one word, "card's" is "card")."""
    lowered = _APOSTROPHE.sub("", text.lower().replace("401(k)", "401k").replace("403(b)", "403b"))
    lowered = lowered.replace("%", " percent ")
    return _TOKEN.findall(lowered)


def singular(word: str) -> str:
    """Return a plural's singular the simple way ("cards" -> "card", "class" stays)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def plural(noun: str) -> str:
    """Return a noun's (or a phrase's last noun's) plural the simple way ("number" ->
    "numbers", "security code" -> "security codes"); one ending in s stays."""
    if noun.endswith("s"):
        return noun
    if noun.endswith("y") and len(noun.split()[-1]) > 3 and noun[-2] not in "aeou":
        return noun[:-1] + "ies"
    return noun + "s"


_SHARED = re.compile(r"(?<= )(\w+) (?:and|or|and or|n|plus) (\w+) (\w+)(?= )")


def shared_heads(padded: str) -> str:
    """Return a padded phrase with each pair of words that share the noun after them said
    in full too ("the account and routing numbers": "the account numbers and routing
    numbers"), so that each reads as the thing it names."""
    spelled = _SHARED.sub(r"\1 \3 and \2 \3", padded)
    return padded if spelled == padded else padded + spelled.lstrip()


@lru_cache(maxsize=8192)  # the same few thousand words, over and over
def stem(word: str) -> str:
    """Return a crude stem: no plural, -ing, -ed or final -e, then the first five letters
    ("close", "closed" and "closing" are all "clos")."""
    base = singular(word)
    for suffix in ("ing", "ed"):
        if len(base) > len(suffix) + 2 and base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    else:
        if len(base) >= 4 and base.endswith("e") and base[-2] != "e":
            base = base[:-1]
    return base[:5]


def stems(text: str, *, synonyms: bool = False) -> set[str]:
    """Return the stems of the topic words of `text` (with their synonyms, for a question)."""
    found: set[str] = set()
    for word in words(text):
        if word in STOPWORDS:
            continue
        for form in (word, *(synonyms_of(word) if synonyms else ())):
            if len(form) > 1:
                found.add(stem(form))
    return found


def _phrasing(phrase: str) -> re.Pattern[str]:
    """A phrase of the lexicon as a pattern over padded words: "..." stands for up to three
    words in between ("send ... back": "send the surplus back")."""
    parts = [" ".join(map(_word_form, part.split())) for part in phrase.split("...")]
    return re.compile(" " + r"((?: \S+){0,3}) ".join(parts) + " ")


def _word_form(word: str) -> str:
    """A phrase's word as a pattern: a long one in any ending and either spelling
    ("authorize": "authorised", "authorized"), a short one as it is."""
    return re.escape(word) if len(word) < 6 else re.escape(stem(word)) + r"\w*"


# Everyday phrases and the documents' word for the same idea (lexicon.toml), longest first,
# each with its replacement: the word, then the words in between ("refund the surplus").
PHRASINGS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (found, f" {word}" + "".join(rf"\g<{n + 1}>" for n in range(found.groups)) + " ")
    for phrase, word in sorted(
        ((phrase, word) for word, said in table("phrasings").items() for phrase in said),
        key=lambda pair: -len(pair[0].split()),
    )
    for found in [_phrasing(phrase)]
)
_CONTRACTED = re.compile(r"\b(\w+n) t\b")


@lru_cache(maxsize=2048)  # a question is read many times over while its task is chosen
def as_documents_say(text: str) -> str:
    """Return a question's words with each everyday phrase read as the documents' word for
    it ("charges I didn't make" -> "charges i unauthorized"), for weighing its topic."""
    said = " " + _CONTRACTED.sub(r"\1t", " ".join(words(text))) + " "
    for pattern, replacement in PHRASINGS:
        said = pattern.sub(replacement, said)
    return " ".join(said.split())


def amounts(text: str) -> list[float]:
    """Return the money amounts a text names: "$2,000", "$5k", "300 dollars"."""
    found = []
    for match in _AMOUNT.finditer(text):
        number = (match[1] or match[3] or match[5]).replace(",", "")
        try:
            value = float(number)
        except ValueError:
            continue
        found.append(value * _SCALE.get((match[2] or match[6] or "").lower(), 1.0))
    return found


_BARE = re.compile(
    r"(?<![\w$.,/-])((?:\d{1,3}(?:,\d{3})+|\d{2,7})(?:\.\d+)?)(?![\d,.]*\d|[a-z(-])"
    r"(?!\s*%)(?!\s*(?:percent|shares?|years?|months?|weeks?|days?|times)\b)"
)
_YEARISH = re.compile(r"\b(in|by|since|until|before|after|from|year|of)\s*$")
_NOT_AMOUNT = re.compile(r"\b(publication|pub|form|section|regulation|part|code|title)\s*$")


def bare_amounts(text: str) -> list[float]:
    """Return the numbers a text names that may be money with no "$" ("afford 800 on a
    phone"): not years, not counts of shares or months, not a publication or form number."""
    found = []
    for match in _BARE.finditer(text.lower()):
        value = float(match[1].replace(",", ""))
        before = text.lower()[: match.start()]
        if _NOT_AMOUNT.search(before) or (1950 <= value <= 2099 and _YEARISH.search(before)):
            continue
        found.append(value)
    return found


def years(text: str) -> list[int]:
    """Return the years a text names, in order."""
    return [int(y) for y in _YEAR.findall(text)]


def money(amount: float, currency: str | None = "USD") -> str:
    """Format an amount as every page does (`webapp.money.format_money`): `$1,234.50`."""
    return format_money(amount, currency)


def percent(part: float, whole: float) -> str:
    """Return `part` as a share of `whole`: "11.1%" (one decimal)."""
    return f"{100 * part / whole:.1f}%" if whole else "0%"


def sentence(text: str) -> str:
    """Return `text` begun with a capital, as a sentence starts ("your Chase ..." → "Your")."""
    return text[:1].upper() + text[1:]


def join_words(items: list[str]) -> str:
    """Join `items` as a sentence would: "a", "a and b", "a, b and c"."""
    if len(items) < 3:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def count_of(number: int, noun: str, plural: str | None = None) -> str:
    """Return "1 card", "3 cards" (spelled out up to ten)."""
    spelled = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    shown = spelled[number] if 0 <= number < len(spelled) else str(number)
    return f"{shown} {noun if number == 1 else plural or noun + 's'}"


def a_or_an(figure: str) -> str:
    """The article a figure takes as it is read aloud: "an $8,000.00 limit", "an $11 fee",
    "a $1,800.00 refund" (one thousand...), "an 80% share"."""
    digits = figure.lstrip("$€£ ")
    lead = re.split(r"[,.%\s]", digits, maxsplit=1)[0]
    return "an" if lead.startswith("8") or lead in ("11", "18") else "a"
