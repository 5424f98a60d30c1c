"""Every setting the service reads from its environment, in one table, read once.

`create_app` calls `load` once: each app setting is its default, else the environment's value,
else the test config's, and is parsed here, so the rest of the app reads typed values from
`app.config` and never the environment (tests/test_docs.py checks that no other module does).
The README's Configuration table lists exactly these settings (also checked there).

gunicorn reads its own settings in gunicorn.conf.py and the tests theirs; they are listed here
(`where`) so that one table documents everything the environment can change.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

# The defaults that code elsewhere also needs (a parameter's default, a bound), each written
# once, here, and imported from here: this module imports nothing of the app's, so any layer
# may read it (docs/architecture.md, "Layers").
# What one model round may write (MODEL_MAX_TOKENS): room for a long answer with its tables,
# far below what current models may write in one reply.
DEFAULT_MAX_TOKENS = 16000
DEFAULT_BASE_URL = "https://api.anthropic.com"
# The Claude model asked unless ANTHROPIC_MODEL says otherwise.
DEFAULT_MODEL = "claude-sonnet-5"
TURN_LEASE_SECONDS = 30.0
TURN_DEADLINE_SECONDS = 600.0
STREAM_STORE_SECONDS = 20.0
MAX_TURNS_PER_USER = 3
MAX_STREAMS_PER_USER = 20
# Far above what one household or office behind a shared address fails in 15 minutes.
MAX_SIGN_IN_FAILURES_PER_ADDRESS = 500
FINNHUB_BASE_URL = "https://finnhub.io/api/v1"
EXA_BASE_URL = "https://api.exa.ai"
# TOOL_RESULT_MAX_BYTES: the default, and the least a setting may ask for (room for a note).
DEFAULT_TOOL_RESULT_MAX_BYTES = 262_144
MIN_TOOL_RESULT_MAX_BYTES = 4096

Where = Literal["app", "gunicorn", "tests"]
Value = str | int | float | bool | None
# A parser takes what the environment (text) or a test config (text or a typed value) holds
# and returns the typed value, or raises ValueError saying what was expected.
Parser = Callable[[object], Value]


class SettingError(ValueError):
    """A setting's value could not be read; the message names the setting."""


@dataclass(frozen=True, slots=True)
class Setting:
    """One setting: its name, its value when unset, how it is read, and what it does."""

    name: str
    default: Value
    parse: Parser
    help: str
    secret: bool = False
    where: Where = "app"

    @property
    def shown_default(self) -> str:
        """The default as the README writes it (`on`/`off` for a switch, empty when unset)."""
        if self.default is None:
            return ""
        if isinstance(self.default, bool):
            return "on" if self.default else "off"
        if isinstance(self.default, float) and self.default.is_integer():
            return str(int(self.default))
        return str(self.default)


def text(value: object) -> str | None:
    """Any text; blank is unset."""
    if not isinstance(value, str):
        raise ValueError("expected text")
    return value.strip() or None


def whole(minimum: int) -> Parser:
    """A whole number, at least `minimum`."""

    def parse(value: object) -> int:
        if isinstance(value, str) and re.fullmatch(r"\s*\d+\s*", value):
            number = int(value)
        elif isinstance(value, int) and not isinstance(value, bool):
            number = value
        else:
            raise ValueError(f"expected a whole number of at least {minimum}")
        if number < minimum:
            raise ValueError(f"expected a whole number of at least {minimum}")
        return number

    return parse


def seconds(value: object) -> float:
    """A number of seconds above zero."""
    try:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ValueError
        number = float(value)
    except ValueError:
        raise ValueError("expected a number of seconds") from None
    if not 0 < number < float("inf"):
        raise ValueError("expected a number of seconds above 0")
    return number


def seconds_or_zero(value: object) -> float:
    """A number of seconds, or 0 (off)."""
    if value in (0, "0", 0.0):
        return 0.0
    return seconds(value)


def switch(value: object) -> bool:
    """`on` or `off`."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("on", "off"):
        return value.strip().lower() == "on"
    raise ValueError("expected on or off")


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "DATABASE_URL",
        None,
        text,
        "the database; unset, a SQLite file in the instance folder",
        secret=True,
    ),
    Setting(
        "SECRET_KEY",
        None,
        text,
        "signs session cookies; unset, a key generated once into the instance folder",
        secret=True,
    ),
    Setting(
        "ANTHROPIC_API_KEY",
        None,
        text,
        "Claude answers with it; unset, the offline engine",
        secret=True,
    ),
    Setting("ANTHROPIC_BASE_URL", DEFAULT_BASE_URL, text, "where Claude is asked"),
    Setting("ANTHROPIC_MODEL", DEFAULT_MODEL, text, "the Claude model asked"),
    Setting(
        "MODEL_MAX_TOKENS",
        DEFAULT_MAX_TOKENS,
        whole(256),
        "the most one model round may write (max_tokens); a cut answer is continued",
    ),
    Setting(
        "REDIS_URL",
        None,
        text,
        "Redis for wake-ups and sign-in failure counts; unset, the database",
        secret=True,
    ),
    Setting(
        "TURN_LEASE_SECONDS",
        TURN_LEASE_SECONDS,
        seconds,
        "how long a silent turn runner keeps its turn before another worker takes it over",
    ),
    Setting("TURN_DEADLINE_SECONDS", TURN_DEADLINE_SECONDS, seconds, "the most one turn may run"),
    Setting(
        "STREAM_STORE_SECONDS",
        STREAM_STORE_SECONDS,
        seconds_or_zero,
        "the most a running answer's text waits to be stored, handed to readers live meanwhile;"
        " 0 stores every batch",
    ),
    Setting(
        "MAX_TURNS_PER_USER",
        MAX_TURNS_PER_USER,
        whole(1),
        "answers one user may have running at once",
    ),
    Setting(
        "MAX_STREAMS_PER_USER",
        MAX_STREAMS_PER_USER,
        whole(1),
        "answer streams one user may hold open",
    ),
    Setting("MAX_CHATS_PER_USER", 1000, whole(1), "chats one user may keep"),
    Setting("MAX_NEW_CHATS_PER_MINUTE", 30, whole(1), "chats one user may start in a minute"),
    Setting(
        "TOOL_RESULT_MAX_BYTES",
        DEFAULT_TOOL_RESULT_MAX_BYTES,
        whole(MIN_TOOL_RESULT_MAX_BYTES),
        "the most text one tool call hands the model",
    ),
    Setting(
        "MAX_SIGN_IN_FAILURES_PER_ADDRESS",
        MAX_SIGN_IN_FAILURES_PER_ADDRESS,
        whole(1),
        "failed sign-ins from one client address in 15 minutes before it is refused",
    ),
    Setting("MAX_CONTENT_LENGTH", 64 * 1024, whole(1), "the largest request body, in bytes"),
    Setting("MAX_UPLOAD_BYTES", 5 * 1024 * 1024, whole(1), "the largest statement file, in bytes"),
    Setting(
        "FORWARDED_ALLOW_IPS",
        None,
        text,
        "the HTTPS proxies trusted for the client's address and scheme (gunicorn reads it too)",
    ),
    Setting(
        "DEMO_PASSWORD", "demo", text, "the demo users' password set by `seed-demo`", secret=True
    ),
    Setting(
        "FINNHUB_API_KEY",
        None,
        text,
        "live Finnhub market data with it; unset, the bundled snapshot",
        secret=True,
    ),
    Setting("FINNHUB_BASE_URL", FINNHUB_BASE_URL, text, "where Finnhub is asked"),
    Setting(
        "EXA_API_KEY",
        None,
        text,
        "Exa web search with it; unset, the bundled web index",
        secret=True,
    ),
    Setting("EXA_BASE_URL", EXA_BASE_URL, text, "where Exa is asked"),
    Setting(
        "FAVICON_FETCH",
        True,
        switch,
        "fetch web sources' icons; off, every web source shows the generic icon",
    ),
    Setting("WEB_CONCURRENCY", 2, whole(1), "gunicorn's worker processes", where="gunicorn"),
    Setting(
        "WORKER_CONNECTIONS",
        5000,
        whole(1),
        "open connections (streams included) each worker may hold",
        where="gunicorn",
    ),
    Setting(
        "PORT", 8000, whole(1), "the port gunicorn and `dev.py run` listen on", where="gunicorn"
    ),
    Setting(
        "TEST_DATABASE_URL",
        "postgresql://postgres@127.0.0.1:5432/test",
        text,
        "where the PostgreSQL tests make their databases",
        secret=True,
        where="tests",
    ),
    Setting(
        "A11Y_SCREENSHOTS",
        None,
        text,
        "the folder for the browser tests' screenshots; unset, a new temporary one",
        where="tests",
    ),
)
BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}


def _parsed(setting: Setting, value: object) -> Value:
    try:
        return setting.parse(value)
    except ValueError as exc:
        shown = "" if setting.secret else f", not {value!r}"
        raise SettingError(f"{setting.name}: {exc}{shown}.") from None


def load(
    overrides: Mapping[str, object] | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, Value]:
    """Return every app setting, parsed: the default, else the environment, else `overrides`.

    A blank environment variable and an override of None both mean "unset". `environ` is
    the process's environment unless given (the only place the app reads it).
    """
    env = os.environ if environ is None else environ
    given = overrides or {}
    values: dict[str, Value] = {}
    for setting in SETTINGS:
        if setting.where != "app":
            continue
        value: Value = setting.default
        raw = env.get(setting.name, "")
        if raw.strip():
            value = _parsed(setting, raw)
        if setting.name in given:
            override = given[setting.name]
            value = setting.default if override is None else _parsed(setting, override)
        values[setting.name] = setting.default if value is None else value
    return values
