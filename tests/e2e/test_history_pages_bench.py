"""`benchmarks/bench_history_browser.py` run small in the browser, so it cannot rot unnoticed.

What it measures is checked, never how fast: every page loads in chromium, a long chat shows
its latest 20 messages and a long sidebar its first 50 chats, the short ones all of theirs.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser

from tests.test_benchmarks_small import load

pytestmark = pytest.mark.e2e


def test_history_pages_load_in_the_browser_and_show_a_page_each(
    browser: Browser, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = load("bench_history_browser")
    assert bench.GOAL == 2.0
    bench.main(["--messages", "10,60", "--chats", "3,60", "--rounds", "1"], browser=browser)
    rows = [
        line.split()
        for line in capsys.readouterr().out.splitlines()
        if line.startswith(("messages", "chats"))
    ]
    # page size load ratio dcl ratio html shown goal
    assert [(row[0], row[1], row[7]) for row in rows] == [
        ("messages", "10", "10"),
        ("messages", "60", "20"),
        ("chats", "3", "3"),
        ("chats", "60", "50"),
    ]
    assert all(float(row[2]) > 0 for row in rows)  # a load time, from the page's timing
    assert {" ".join(row[8:]) for row in rows} <= {"met", "NOT met"}
