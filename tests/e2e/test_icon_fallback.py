"""A source icon the browser cannot draw becomes the generic icon, never a broken image."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from playwright.sync_api import Page, Route, expect

from tests.e2e.pages import sign_in
from tests.e2e.stored import store_mixed_answer
from tests.support import images
from webapp.favicons.images import is_whole_image

if TYPE_CHECKING:
    from tests.e2e.conftest import LiveServer

pytestmark = pytest.mark.e2e

# A PNG signature and nothing a decoder can draw: what a site might serve as its icon.
CORRUPT_PNG = images.PNG_SIGNATURE + b"\x00" * 40
GENERIC = "/static/icons/generic.svg"
ALL_DRAWN = """() => {
  const icons = [...document.querySelectorAll("img.source-icon")];
  return icons.length > 0 && icons.every(i => i.complete && i.naturalWidth > 0);
}"""


def test_an_icon_that_cannot_be_drawn_shows_the_generic_one(
    page: Page, live_server: LiveServer
) -> None:
    served: list[str] = []

    def corrupt(route: Route) -> None:
        served.append(route.request.url)
        route.fulfill(status=200, content_type="image/png", body=CORRUPT_PNG)

    page.route(re.compile(r"/favicon/"), corrupt)
    session_id = store_mixed_answer(live_server.app)
    sign_in(page)
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
    page.goto(f"/chat/{session_id}")
    page.locator(".sources-bar").click()
    expect(page.get_by_role("dialog", name="Sources")).to_be_visible()
    page.wait_for_function(ALL_DRAWN, timeout=10_000)
    assert served, "no favicon was asked for"
    fell_back = page.locator(f'img.source-icon[src="{GENERIC}"]')
    assert fell_back.count() >= 1


@pytest.mark.parametrize(
    ("kind", "body"),
    [
        ("image/png", images.png()),
        ("image/x-icon", images.ico(images.png())),
        ("image/x-icon", images.ico(images.bitmap())),
        ("image/gif", images.GIF),
        ("image/webp", images.WEBP),
    ],
    ids=["png", "ico-png", "ico-bitmap", "gif", "webp"],
)
def test_an_icon_the_server_would_serve_is_drawn_as_itself(
    page: Page, live_server: LiveServer, kind: str, body: bytes
) -> None:
    # What the server's structural check accepts, a real decoder draws.
    assert is_whole_image(kind, body)
    page.route(
        re.compile(r"/favicon/"),
        lambda route: route.fulfill(status=200, content_type=kind, body=body),
    )
    session_id = store_mixed_answer(live_server.app)
    sign_in(page)
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f]+$"))
    page.goto(f"/chat/{session_id}")
    page.locator(".sources-bar").click()
    page.wait_for_function(ALL_DRAWN, timeout=10_000)
    own = page.locator('img.source-icon[src*="/favicon/"]')
    assert own.count() >= 1
