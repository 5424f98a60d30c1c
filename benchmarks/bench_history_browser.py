"""The history pages in a browser: a long chat's page and a long sidebar's, against 10 of each.

The chat page of one chat of 10 / 1,000 / 10,000 messages, and of a user with 10 / 1,000 /
10,000 chats (their newest chat open, so only the sidebar differs), opened in Debian's
chromium through Playwright from the app as the Procfile serves it (gunicorn, its workers),
on SQLite. Seeding: one real exchange (the offline engine answering for `demo`) copied into
the tables (`tests/support/history.py::copy_exchange`) for the chats of messages, and a chat
of one exchange each (`store_chats`) for the users. Each visit is a navigation to the page;
the figure is the page's own performance timing, navigation start to the end of its load
event (DOMContentLoaded beside it), so the browser's parsing, styles, scripts and layout are
in it, not only the server's answer. The pages are visited interleaved, round after round
(the order reversed every other round), after one round unmeasured; each figure is the
median, each ratio against the 10-message / 10-chat page (issue 21's goal: at most 2x).

Run: `.venv/bin/python benchmarks/bench_history_browser.py [--messages 10,1000,10000]
[--chats 10,1000,10000] [--rounds 7] [--hog]`
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # its helpers, when loaded by a test

import _hog  # noqa: E402
from bench_history import LIMITS, Bench  # noqa: E402
from bench_history_sidebar import MINUTE, PASSWORD, chats_of  # noqa: E402
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright  # noqa: E402

from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from tests.support.apps import app_on_copy, seed_template  # noqa: E402
from tests.support.gunicorn import gunicorn  # noqa: E402
from tests.support.history import copy_exchange, store_chats  # noqa: E402
from webapp.chat.conversations import create_session  # noqa: E402
from webapp.store.app_db import close_engine, get_engine  # noqa: E402
from webapp.store.users import create_user  # noqa: E402

GOAL = 2.0
SHOWN = {"messages": "article.message", "chats": "#sessions a.session-link"}
TIMING = """() => {
  const n = performance.getEntriesByType("navigation")[0];
  return [n.loadEventEnd - n.startTime, n.domContentLoadedEventEnd - n.startTime,
          n.decodedBodySize];
}"""
LOADED = '() => performance.getEntriesByType("navigation")[0]?.loadEventEnd > 0'


@dataclass
class Target:
    """One page measured: a chat of `size` messages, or a user's newest chat of `size`."""

    kind: str  # "messages" or "chats"
    size: int
    user: str
    path: str
    load: list[float] = field(default_factory=list)  # ms
    dcl: list[float] = field(default_factory=list)  # ms
    html_bytes: int = 0
    shown: int = 0


def seed(folder: Path, messages: Sequence[int], chats: Sequence[int]) -> tuple[str, list[Target]]:
    """Make the database: `demo`'s chats of each length and a user of each number of chats;
    return its URL and the pages to measure."""
    database = folder / "webapp.sqlite"
    app = app_on_copy(seed_template(folder / "template.sqlite"), database, **LIMITS)
    try:
        bench = Bench(app)
        engine = get_engine(app)
        answer_id = bench.answer()
        targets = []
        for count in messages:
            session_id = create_session(engine, bench.user_id).id
            copy_exchange(engine, session_id, answer_id, count // 2)
            targets.append(Target("messages", count, "demo", f"/chat/{session_id}"))
        for count in chats:
            name = f"b{uuid.uuid4().hex[:12]}"
            user = create_user(engine, name, PASSWORD)
            newest = store_chats(engine, user.id, chats_of(count), datetime.now(UTC), MINUTE)[0]
            targets.append(Target("chats", count, name, f"/chat/{newest}"))
    finally:
        close_engine(app)
    return f"sqlite:///{database}", targets


def signed_in(browser: Browser, base: str, user: str) -> Page:
    """Return a page of a new browser context signed in as `user`."""
    context: BrowserContext = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(f"{base}/login")
    page.get_by_label("Username").fill(user)
    page.get_by_label("Password").fill("demo" if user == "demo" else PASSWORD)
    with page.expect_navigation():
        page.get_by_role("button", name="Sign in").click()
    assert "/login" not in page.url, f"{user} could not sign in"
    return page


def visit(page: Page, base: str, target: Target) -> tuple[float, float]:
    """Navigate to the target's page; return its load and DOMContentLoaded ms."""
    response = page.goto(f"{base}{target.path}", wait_until="load")
    assert response is not None and response.status == 200, (target.path, response)
    page.wait_for_function(LOADED)
    timing: list[float] = page.evaluate(TIMING)
    target.html_bytes = int(timing[2])
    target.shown = page.locator(SHOWN[target.kind]).count()
    return float(timing[0]), float(timing[1])


def measure(browser: Browser, base: str, targets: list[Target], rounds: int) -> None:
    pages = {user: signed_in(browser, base, user) for user in {t.user for t in targets}}
    try:
        for target in targets:  # one round unmeasured: caches, templates, first queries
            visit(pages[target.user], base, target)
        for round_ in range(rounds):
            for target in targets if round_ % 2 == 0 else targets[::-1]:
                load, dcl = visit(pages[target.user], base, target)
                target.load.append(load)
                target.dcl.append(dcl)
    finally:
        for page in pages.values():
            page.context.close()


@contextmanager
def chromium() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def report(targets: list[Target], rounds: int) -> None:
    print(
        f"# {rounds} rounds interleaved, medians; navigation start to load end in chromium;"
        f" ratios against each kind's smallest (goal ≤ {GOAL:g}x)"
    )
    print(
        f"{'page':<8} {'size':>6} {'load ms':>8} {'ratio':>6} {'DCL ms':>7} {'ratio':>6}"
        f" {'HTML KB':>8} {'shown':>6}  goal"
    )
    base: dict[str, Target] = {}
    for t in targets:
        floor = base.setdefault(t.kind, t)
        load, dcl = statistics.median(t.load), statistics.median(t.dcl)
        ratio = load / statistics.median(floor.load)
        print(
            f"{t.kind:<8} {t.size:>6} {load:>8.1f} {ratio:>5.2f}x {dcl:>7.1f}"
            f" {dcl / statistics.median(floor.dcl):>5.2f}x {t.html_bytes / 1024:>8.1f}"
            f" {t.shown:>6}  {'met' if ratio <= GOAL else 'NOT met'}"
        )


def main(argv: list[str] | None = None, browser: Browser | None = None) -> None:
    """Seed, serve, measure and print; `browser` is used when given (a test's), else one is
    launched."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", default="10,1000,10000", help="messages per chat")
    parser.add_argument("--chats", default="10,1000,10000", help="chats per user")
    parser.add_argument("--rounds", type=int, default=7)
    _hog.add_flag(parser)
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="bench-history-browser-"))
    try:
        url, targets = seed(folder, _sizes(args.messages), _sizes(args.chats))
        settings: dict[str, Any] = {
            "DATABASE_URL": url,
            "SECRET_KEY": "bench-history-browser",
            "ANTHROPIC_API_KEY": "",
            "ANTHROPIC_BASE_URL": "",
            "REDIS_URL": "",
            "FAVICON_FETCH": "off",
        }
        with gunicorn(settings, folder, name="history") as server, _hog.beside(args.hog):
            if browser is not None:
                measure(browser, server.url, targets, args.rounds)
            else:
                with chromium() as launched:
                    measure(launched, server.url, targets, args.rounds)
        report(targets, args.rounds)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _sizes(text: str) -> list[int]:
    return [int(n) for n in text.split(",") if n.strip()]


if __name__ == "__main__":
    main()
