"""Fetch a site's icon for the sources UI, safely, and keep it (or the failure) for a while.

Only `https://<public host>/favicon.ico` on port 443, redirects followed by hand (at most
three, each one checked again), a time and size bound, and raster images only. SVG is
refused: served from this origin it could run script.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import requests
from requests.adapters import HTTPAdapter

from ._hosts import Resolver, public_addresses, public_host, system_resolver

log = logging.getLogger(__name__)

MAX_REDIRECTS = 3
MAX_BYTES = 100 * 1024
TIMEOUT_SECONDS = 3.0
ICON_TTL = 24 * 3600.0
FAILURE_TTL = 3600.0
MAX_ENTRIES = 512
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_SIGNATURES = (
    (b"\x00\x00\x01\x00", "image/x-icon"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"\xff\xd8\xff", "image/jpeg"),
)


@dataclass(frozen=True, slots=True)
class Fetched:
    """One HTTP answer, read no further than the size bound (`body` None when it was larger)."""

    status: int
    location: str | None = None
    content_type: str = ""
    body: bytes | None = b""


@dataclass(frozen=True, slots=True)
class Icon:
    content_type: str
    body: bytes


# GET one URL from one checked address: (url, address, timeout, max_bytes).
Getter = Callable[[str, str, float, int], Fetched]


class _PinnedAdapter(HTTPAdapter):
    """Connect to the checked address while TLS still checks the certificate of `host`."""

    def __init__(self, host: str) -> None:
        self._host = host
        super().__init__(max_retries=0)

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False,
                         **pool_kwargs: Any) -> None:
        pool_kwargs.update(server_hostname=self._host, assert_hostname=self._host)
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)


def requests_get(url: str, address: str, timeout: float, max_bytes: int) -> Fetched:
    """GET `url` once from `address` (no redirects), reading at most `max_bytes` + 1 bytes.

    The connection goes to the address that was checked, not to a fresh lookup of the
    name, so a name that re-resolves elsewhere in between (DNS rebinding) gains nothing.
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    pinned = f"[{address}]" if ":" in address else address
    port = f":{parts.port}" if parts.port else ""
    target = urlunsplit((parts.scheme, pinned + port, parts.path or "/", parts.query, ""))
    deadline = time.monotonic() + timeout
    with requests.Session() as session:
        session.trust_env = False  # no proxy or netrc from the environment
        session.mount("https://", _PinnedAdapter(host))
        headers = {"Host": host + port, "Accept": "image/*", "User-Agent": "webapp-favicon/1"}
        with session.get(target, stream=True, allow_redirects=False, timeout=timeout,
                         headers=headers) as response:
            kind = response.headers.get("Content-Type", "")
            if response.status_code != 200:
                return Fetched(response.status_code, response.headers.get("Location"), kind)
            length = response.headers.get("Content-Length", "")
            if length.isdigit() and int(length) > max_bytes:
                return Fetched(200, None, kind, None)
            body = bytearray()
            for chunk in response.iter_content(8192):
                body += chunk
                if len(body) > max_bytes or time.monotonic() > deadline:
                    return Fetched(200, None, kind, None)
            return Fetched(200, None, kind, bytes(body))


def sniff_image(body: bytes) -> str | None:
    """Return the raster type `body` starts with (ICO, PNG, GIF, JPEG, WebP), else None."""
    for signature, kind in _SIGNATURES:
        if body.startswith(signature):
            return kind
    if body[:4] == b"RIFF" and body[8:12] == b"WEBP":
        return "image/webp"
    return None


def _next_url(current: str, location: str | None) -> str | None:
    if not location:
        return None
    target = urlsplit(urljoin(current, location.strip()))
    try:
        port = target.port
    except ValueError:
        return None
    if target.scheme != "https" or port not in (None, 443) or "@" in target.netloc:
        return None
    host = public_host(target.hostname or "")
    if host is None:
        return None
    path = target.path or "/"
    return f"https://{host}{path}" + (f"?{target.query}" if target.query else "")


class FaviconService:
    """Icons by host name, fetched once and cached with a TTL; None means "use the generic"."""

    def __init__(self, *, resolver: Resolver = system_resolver, get: Getter = requests_get,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._resolver, self._get, self._clock = resolver, get, clock
        self._cache: OrderedDict[str, tuple[float, Icon | None]] = OrderedDict()
        self._inflight: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def icon(self, raw_host: object) -> Icon | None:
        """Return the host's icon, or None when the host is refused or has none."""
        host = public_host(raw_host)
        if host is None:
            return None
        while True:
            with self._lock:
                cached = self._cache.get(host)
                if cached is not None and cached[0] > self._clock():
                    return cached[1]
                waiting = self._inflight.get(host)
                if waiting is None:
                    self._inflight[host] = threading.Event()
                    break
            # Another request is fetching this host: share its result.
            waiting.wait(TIMEOUT_SECONDS * (MAX_REDIRECTS + 2))
        found: Icon | None = None
        try:
            found = self._fetch(host)
        finally:
            with self._lock:
                self._remember(host, found, FAILURE_TTL if found is None else ICON_TTL)
                self._inflight.pop(host).set()
        return found

    def _remember(self, host: str, icon: Icon | None, ttl: float) -> None:
        self._cache[host] = (self._clock() + ttl, icon)
        self._cache.move_to_end(host)
        while len(self._cache) > MAX_ENTRIES:
            self._cache.popitem(last=False)

    def _fetch(self, host: str) -> Icon | None:
        try:
            return self._follow(f"https://{host}/favicon.ico")
        except Exception:  # a hostile or broken site must never break the page
            log.info("a source icon could not be fetched")
            return None

    def _follow(self, url: str) -> Icon | None:
        deadline = self._clock() + TIMEOUT_SECONDS
        for _ in range(MAX_REDIRECTS + 1):
            host = urlsplit(url).hostname or ""
            remaining = deadline - self._clock()
            addresses = public_addresses(host, self._resolver)
            if remaining <= 0 or not addresses:
                return None
            fetched = self._get(url, addresses[0], remaining, MAX_BYTES)
            if fetched.status in _REDIRECTS:
                next_url = _next_url(url, fetched.location)
                if next_url is None:
                    return None
                url = next_url
                continue
            return _image(fetched)
        return None


def _image(fetched: Fetched) -> Icon | None:
    declared = fetched.content_type.split(";", 1)[0].strip().lower()
    if fetched.status != 200 or fetched.body is None or not declared.startswith("image/"):
        return None
    if len(fetched.body) > MAX_BYTES:
        return None
    kind = sniff_image(fetched.body)
    return Icon(kind, fetched.body) if kind is not None else None
