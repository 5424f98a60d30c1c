"""Every setting the code reads from the environment is documented in the README."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from webapp.app import ENVIRONMENT_SETTINGS

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
READS = re.compile(r"""(?:environ|env)(?:\.get)?[(\[]\s*["']([A-Z][A-Z0-9_]+)["']""")


def environment_reads() -> set[str]:
    names = set(ENVIRONMENT_SETTINGS)
    for path in [*(ROOT / "webapp").rglob("*.py"), ROOT / "dev.py"]:
        names |= set(READS.findall(path.read_text()))
    return names


def test_the_scan_finds_the_settings_it_should() -> None:
    # The scan is able to fail: these are read in three different ways.
    assert {
        "ANTHROPIC_API_KEY",
        "SECRET_KEY",
        "DEMO_PASSWORD",
        "FINNHUB_API_KEY",
        "EXA_API_KEY",
        "PORT",
    } <= environment_reads()


@pytest.mark.parametrize("name", sorted(environment_reads()))
def test_setting_is_documented(name: str) -> None:
    assert re.search(rf"`{name}`", README), f"{name} is read from the environment but not in README"
