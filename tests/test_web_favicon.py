"""`/favicon/<host>`: the server fetches icons safely, caches them, and falls back to a generic."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import requests
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from tests.support import images
from webapp.favicons.fetch import (
    FAILURE_TTL,
    ICON_TTL,
    MAX_BYTES,
    TIMEOUT_SECONDS,
    FaviconService,
    Fetched,
    Getter,
    _PinnedAdapter,
    requests_get,
    sniff_image,
)
from webapp.services import override_services
from webapp.store.app_db import get_engine
from webapp.store.users import authenticate

PNG = images.png()
ICO = images.ico(PNG)
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
PUBLIC = "93.184.215.14"


def public_resolver(host: str) -> list[str]:
    return [PUBLIC]


@dataclass
class FakeWeb:
    """Answers GETs from a table; records each URL, the address it was sent to, the budget."""

    pages: dict[str, Fetched]
    calls: list[str] = field(default_factory=list)
    addresses: list[str] = field(default_factory=list)
    budgets: list[float] = field(default_factory=list)

    def __call__(self, url: str, address: str, timeout: float, max_bytes: int) -> Fetched:
        self.calls.append(url)
        self.addresses.append(address)
        self.budgets.append(timeout)
        assert max_bytes == MAX_BYTES
        return self.pages.get(url, Fetched(404))


def icon_page(body: bytes = ICO, kind: str = "image/x-icon") -> Fetched:
    return Fetched(200, content_type=kind, body=body)


def redirect(location: str, status: int = 301) -> Fetched:
    return Fetched(status, location=location)


def service(
    web: Getter,
    resolver: Callable[[str], Iterable[str]] = public_resolver,
    clock: Callable[[], float] | None = None,
) -> FaviconService:
    if clock is None:
        return FaviconService(resolver=resolver, get=web)
    return FaviconService(resolver=resolver, get=web, clock=clock)


def test_a_public_host_gets_its_icon_from_a_checked_address() -> None:
    web = FakeWeb({"https://irs.gov/favicon.ico": icon_page()})
    icon = service(web, lambda host: [PUBLIC, "2606:2800:21f:cb07::1"]).icon("IRS.gov")
    assert icon is not None and icon.content_type == "image/x-icon" and icon.body == ICO
    assert web.calls == ["https://irs.gov/favicon.ico"]
    assert web.addresses == [PUBLIC]
    assert 0 < web.budgets[0] <= TIMEOUT_SECONDS


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "127.0.0.1",
        "user@irs.gov",
        "irs.gov:443",
        "../../etc/passwd",
        "169.254.169.254",
    ],
    ids=["localhost", "ip", "userinfo", "port", "traversal", "metadata"],
)
def test_a_refused_host_is_never_fetched(host: str) -> None:
    web = FakeWeb({})
    assert service(web).icon(host) is None
    assert web.calls == []


@pytest.mark.parametrize(
    "addresses",
    [["127.0.0.1"], ["10.0.0.8"], [PUBLIC, "192.168.1.1"], ["::1"], []],
    ids=["loopback", "private", "one-private-among-public", "v6-loopback", "unresolvable"],
)
def test_a_host_resolving_to_a_non_public_address_is_never_fetched(addresses: list[str]) -> None:
    web = FakeWeb({"https://rebind.com/favicon.ico": icon_page()})
    assert service(web, lambda host: addresses).icon("rebind.com") is None
    assert web.calls == []


def test_redirects_are_followed_and_each_host_checked_again() -> None:
    asked: list[str] = []

    def resolver(host: str) -> list[str]:
        asked.append(host)
        return [PUBLIC]

    web = FakeWeb(
        {
            "https://irs.gov/favicon.ico": redirect("https://www.irs.gov/favicon.ico"),
            "https://www.irs.gov/favicon.ico": redirect("/static/icon.png", 302),
            "https://www.irs.gov/static/icon.png": icon_page(PNG, "image/png; charset=binary"),
        }
    )
    icon = service(web, resolver).icon("irs.gov")
    assert icon is not None and icon.content_type == "image/png"
    assert asked == ["irs.gov", "www.irs.gov", "www.irs.gov"]


@pytest.mark.parametrize(
    "location",
    [
        "http://irs.gov/favicon.ico",
        "https://irs.gov:8443/favicon.ico",
        "https://user:pw@irs.gov/favicon.ico",
        "https://127.0.0.1/favicon.ico",
        "https://localhost/favicon.ico",
        "https://private.com/favicon.ico",
        "ftp://irs.gov/favicon.ico",
        "javascript:alert(1)",
        "",
    ],
    ids=[
        "plain-http",
        "other-port",
        "userinfo",
        "ip-literal",
        "localhost",
        "resolves-private",
        "ftp",
        "javascript",
        "empty",
    ],
)
def test_a_redirect_anywhere_unsafe_is_refused(location: str) -> None:
    def resolver(host: str) -> list[str]:
        return ["10.0.0.1"] if host == "private.com" else [PUBLIC]

    web = FakeWeb(
        {
            "https://irs.gov/favicon.ico": redirect(location),
            "https://private.com/favicon.ico": icon_page(),
        }
    )
    assert service(web, resolver).icon("irs.gov") is None
    assert web.calls == ["https://irs.gov/favicon.ico"]


@pytest.mark.parametrize(
    ("redirects", "found"),
    [(1, True), (3, True), (4, False)],
    ids=["one-redirect", "three-redirects", "four-redirects"],
)
def test_at_most_three_redirects(redirects: int, found: bool) -> None:
    urls = ["https://irs.gov/favicon.ico"] + [f"https://irs.gov/{i}" for i in range(redirects)]
    pages = {here: redirect(there) for here, there in zip(urls, urls[1:], strict=False)}
    pages[urls[-1]] = icon_page()
    web = FakeWeb(pages)
    assert (service(web).icon("irs.gov") is not None) is found
    assert len(web.calls) == min(redirects + 1, 4)


@pytest.mark.parametrize(
    "page",
    [
        Fetched(200, content_type="image/x-icon", body=None),
        Fetched(200, content_type="image/x-icon", body=ICO + b"\x00" * MAX_BYTES),
        Fetched(200, content_type="text/html", body=ICO),
        Fetched(200, content_type="", body=ICO),
        Fetched(200, content_type="image/svg+xml", body=SVG),
        Fetched(200, content_type="image/png", body=b"<html><script>alert(1)</script>"),
        Fetched(500, content_type="image/x-icon", body=ICO),
    ],
    ids=[
        "over-size-bound",
        "over-size-after-read",
        "html-type",
        "no-type",
        "svg",
        "not-really-an-image",
        "server-error",
    ],
)
def test_only_small_raster_images_are_served(page: Fetched) -> None:
    web = FakeWeb({"https://irs.gov/favicon.ico": page})
    assert service(web).icon("irs.gov") is None


@pytest.mark.parametrize(
    "error",
    [
        requests.ConnectionError("refused"),
        requests.Timeout("slow"),
        ValueError("bad"),
        OSError("reset"),
    ],
    ids=["connection", "timeout", "value", "os"],
)
def test_a_failing_fetch_gives_no_icon_and_no_exception(error: Exception) -> None:
    def failing(url: str, address: str, timeout: float, max_bytes: int) -> Fetched:
        raise error

    assert service(failing).icon("irs.gov") is None


@pytest.mark.parametrize(
    ("page", "ttl"), [(icon_page(), ICON_TTL), (Fetched(404), FAILURE_TTL)], ids=["icon", "failure"]
)
def test_results_are_cached_until_their_ttl(page: Fetched, ttl: float) -> None:
    now = [1000.0]
    web = FakeWeb({"https://irs.gov/favicon.ico": page})
    icons = service(web, clock=lambda: now[0])
    first = icons.icon("irs.gov")
    now[0] += ttl - 1
    assert icons.icon("IRS.gov.") == first
    assert len(web.calls) == 1
    now[0] += 2
    icons.icon("irs.gov")
    assert len(web.calls) == 2


def test_concurrent_requests_for_one_host_share_one_fetch() -> None:
    release = threading.Event()
    calls: list[str] = []

    def slow(url: str, address: str, timeout: float, max_bytes: int) -> Fetched:
        calls.append(url)
        release.wait(5)
        return icon_page()

    icons = service(slow)
    results: list[Any] = []
    threads = [
        threading.Thread(target=lambda: results.append(icons.icon("irs.gov"))) for _ in range(4)
    ]
    for thread in threads:
        thread.start()
    release.set()
    for thread in threads:
        thread.join(5)
    assert len(calls) == 1
    assert len(results) == 4 and all(r is not None and r.body == ICO for r in results)


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        (ICO, "image/x-icon"),
        (PNG, "image/png"),
        (b"GIF89a...", "image/gif"),
        (b"GIF87a...", "image/gif"),
        (b"\xff\xd8\xff\xe0", "image/jpeg"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
        (SVG, None),
        (b"", None),
        (b"<html>", None),
    ],
    ids=["ico", "png", "gif89", "gif87", "jpeg", "webp", "svg", "empty", "html"],
)
def test_sniff_image(body: bytes, kind: str | None) -> None:
    assert sniff_image(body) == kind


def test_https_connections_are_pinned_to_the_checked_address_but_verify_the_name() -> None:
    adapter = _PinnedAdapter("www.irs.gov")
    assert adapter.poolmanager.connection_pool_kw["server_hostname"] == "www.irs.gov"
    assert adapter.poolmanager.connection_pool_kw["assert_hostname"] == "www.irs.gov"


# The real fetch path (requests, pinning, streaming, the size bound) against a local
# plain-HTTP stand-in. The names never resolve here: reaching the stand-in at all shows
# that the request went to the given address, not to a lookup of the name.

seen_hosts: list[str] = []


def _stand_in(request: Request) -> Response:
    seen_hosts.append(request.host)
    if request.path == "/favicon.ico":
        return Response(PNG, content_type="image/png")
    if request.path == "/moved":
        return Response(status=302, headers={"Location": "/favicon.ico"})
    if request.path == "/huge":
        return Response(b"\x89PNG\r\n\x1a\n" + b"\x00" * (MAX_BYTES * 2), content_type="image/png")
    if request.path == "/streamed":
        chunks = (b"\x89PNG\r\n\x1a\n" + b"\x00" * 8192 for _ in range(40))
        return Response(chunks, content_type="image/png")
    return Response("not found", status=404)


@pytest.fixture
def stand_in() -> Iterator[int]:
    server = make_server("127.0.0.1", 0, Request.application(_stand_in), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_port
    server.shutdown()
    thread.join(5)
    server.server_close()


@pytest.mark.parametrize(
    ("path", "status", "size"),
    [
        ("/favicon.ico", 200, len(PNG)),
        ("/moved", 302, 0),
        ("/huge", 200, None),
        ("/streamed", 200, None),
        ("/missing", 404, 0),
    ],
    ids=["icon", "redirect", "over-size-by-length", "over-size-while-streaming", "not-found"],
)
def test_requests_get_reads_from_the_pinned_address_within_bounds(
    stand_in: int, path: str, status: int, size: int | None
) -> None:
    seen_hosts.clear()
    fetched = requests_get(f"http://icons.irs.gov:{stand_in}{path}", "127.0.0.1", 3.0, MAX_BYTES)
    assert fetched.status == status
    assert seen_hosts == [f"icons.irs.gov:{stand_in}"]
    if size is None:
        assert fetched.body is None
    elif status == 200:
        assert fetched.body is not None and len(fetched.body) == size
    if status == 302:
        assert fetched.location == "/favicon.ico"


def test_the_service_over_the_real_fetch_path(stand_in: int) -> None:
    def local(url: str, address: str, timeout: float, max_bytes: int) -> Fetched:
        assert url.startswith("https://irs.gov/") and address == PUBLIC
        # The stand-in speaks plain HTTP on loopback: swap scheme, port and address only.
        path = url.removeprefix("https://irs.gov")
        return requests_get(f"http://irs.gov:{stand_in}{path}", "127.0.0.1", timeout, max_bytes)

    icon = service(local).icon("irs.gov")
    assert icon is not None and icon.body == PNG and icon.content_type == "image/png"


# The route.


def sign_in(app: Flask, client: FlaskClient, username: str = "demo") -> None:
    user = authenticate(get_engine(app), username, "demo")
    assert user is not None
    with client.session_transaction() as session:
        session["user_id"] = user.id


def test_the_route_needs_a_signed_in_user(client: FlaskClient) -> None:
    response = client.get("/favicon/irs.gov")
    assert response.status_code == 302 and response.location.startswith("/login")


@pytest.mark.parametrize(
    "path",
    [
        "/favicon/localhost",
        "/favicon/127.0.0.1",
        "/favicon/../../etc/passwd",
        "/favicon/user@irs.gov",
        "/favicon/irs.gov:22",
        "/favicon/%2e%2e%2fsecret",
        "/favicon/[::1]",
        "/favicon/irs.gov",
        "/favicon/" + "a" * 300 + ".com",
    ],
    ids=[
        "localhost",
        "ip",
        "traversal",
        "userinfo",
        "port",
        "encoded-traversal",
        "ipv6",
        "unresolvable",
        "too-long",
    ],
)
def test_the_route_serves_the_generic_icon_for_anything_refused(
    app: Flask, client: FlaskClient, path: str
) -> None:
    web = FakeWeb({})
    override_services(app, favicons=service(web, lambda host: []))
    sign_in(app, client)
    response = client.get(path)
    assert response.status_code == 200
    assert response.mimetype == "image/svg+xml"
    assert b"<svg" in response.data and b"<script" not in response.data
    assert "sandbox" in response.headers["Content-Security-Policy"]
    assert web.calls == []


def test_the_route_serves_a_fetched_icon_with_long_cache_headers(
    app: Flask, client: FlaskClient
) -> None:
    web = FakeWeb({"https://www.irs.gov/favicon.ico": icon_page()})
    override_services(app, favicons=service(web))
    sign_in(app, client)
    response = client.get("/favicon/www.irs.gov")
    assert response.status_code == 200 and response.data == ICO
    assert response.mimetype == "image/x-icon"
    assert response.cache_control.max_age == ICON_TTL
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    client.get("/favicon/www.irs.gov")
    assert web.calls == ["https://www.irs.gov/favicon.ico"]
