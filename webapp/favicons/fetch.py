"""Fetch a site's icon for the sources UI, safely, and keep it (or the failure) for a while.

Only `https://<public host>/favicon.ico` on port 443, redirects followed by hand (at most
three, each one checked again), a size bound, and whole raster images only (`images.py`
walks each to its end). SVG is refused: served from this origin it could run script.

Time: one fetch (its redirects, headers and body together) has TIMEOUT_SECONDS of wall-clock
time. A socket timeout alone bounds only each read, so a server that drips a byte a second
could hold a request for minutes; at the deadline `_Deadline` shuts the fetch's sockets down,
which ends whatever read or handshake is waiting, under threads and gevent alike. And one
fetch per host at a time: other requests for that host wait for it (no longer than a fetch
may take), then share its result or get the generic icon.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from .hosts import Resolver, public_addresses, public_host, system_resolver
from .images import is_whole_image

log = logging.getLogger(__name__)

MAX_REDIRECTS = 3
MAX_BYTES = 100 * 1024
TIMEOUT_SECONDS = 3.0
# How much longer than a fetch's own deadline a request waits for another's fetch of the
# same host (the name lookup before it is not under the deadline).
WAIT_MARGIN_SECONDS = 1.0
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


class _Deadline:
    """Shut down every socket of one fetch at its deadline, waking whatever waits on them."""

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(0.0, seconds), self._expire)
        self._timer.daemon = True
        self._timer.start()

    def watch(self, sock: socket.socket) -> None:
        """Shut `sock` down at the deadline (at once when it has passed)."""
        # A duplicate: TLS takes the original over (`detach`), the connection stays the same.
        watched = sock.dup()
        with self._lock:
            self._sockets.append(watched)
            if not self.expired:
                return
        _shut(watched)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shut(sock)

    def close(self) -> None:
        """Stop the timer and let go of the duplicates."""
        self._timer.cancel()
        with self._lock:
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            sock.close()


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed by the other end
        sock.shutdown(socket.SHUT_RDWR)


def _watched_pools(deadline: _Deadline) -> dict[str, type[HTTPConnectionPool]]:
    """Return connection pools whose every new socket is handed to `deadline`."""

    class Plain(HTTPConnection):
        def _new_conn(self) -> socket.socket:
            sock = super()._new_conn()
            deadline.watch(sock)
            return sock

    class Secure(HTTPSConnection):
        def _new_conn(self) -> socket.socket:
            sock = super()._new_conn()
            deadline.watch(sock)  # before the TLS handshake, which a server can drip too
            return sock

    class PlainPool(HTTPConnectionPool):
        ConnectionCls = Plain

    class SecurePool(HTTPSConnectionPool):
        ConnectionCls = Secure

    return {"http": PlainPool, "https": SecurePool}


class _PinnedAdapter(HTTPAdapter):
    """Connect to the checked address while TLS still checks the certificate of `host`.

    With a `deadline`, every socket it opens is shut down when the deadline passes.
    """

    def __init__(self, host: str, deadline: _Deadline | None = None) -> None:
        self._host = host
        self._deadline = deadline
        super().__init__(max_retries=0)

    def init_poolmanager(
        self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any
    ) -> None:
        pool_kwargs.update(server_hostname=self._host, assert_hostname=self._host)
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)
        if self._deadline is not None:
            self.poolmanager.pool_classes_by_scheme = _watched_pools(self._deadline)


def requests_get(url: str, address: str, timeout: float, max_bytes: int) -> Fetched:
    """GET `url` once from `address` (no redirects), reading at most `max_bytes` + 1 bytes.

    The connection goes to the address that was checked, not to a fresh lookup of the
    name, so a name that re-resolves elsewhere in between (DNS rebinding) gains nothing.
    `timeout` bounds the whole exchange, connecting, headers and body together: past it the
    connection is shut and the answer is a failure (an exception, or no body).
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    pinned = f"[{address}]" if ":" in address else address
    port = f":{parts.port}" if parts.port else ""
    target = urlunsplit((parts.scheme, pinned + port, parts.path or "/", parts.query, ""))
    deadline = _Deadline(timeout)
    try:
        with requests.Session() as session:
            session.trust_env = False  # no proxy or netrc from the environment
            adapter = _PinnedAdapter(host, deadline)
            session.mount("https://", adapter)
            session.mount("http://", adapter)  # only the tests' loopback stand-ins speak HTTP
            headers = {"Host": host + port, "Accept": "image/*", "User-Agent": "webapp-favicon/1"}
            with session.get(
                target, stream=True, allow_redirects=False, timeout=timeout, headers=headers
            ) as response:
                kind = response.headers.get("Content-Type", "")
                if deadline.expired:
                    return Fetched(504, None, kind, None)
                if response.status_code != 200:
                    return Fetched(response.status_code, response.headers.get("Location"), kind)
                length = response.headers.get("Content-Length", "")
                if length.isdigit() and int(length) > max_bytes:
                    return Fetched(200, None, kind, None)
                body = bytearray()
                for chunk in response.iter_content(8192):
                    body += chunk
                    if len(body) > max_bytes or deadline.expired:
                        return Fetched(200, None, kind, None)
                # A body cut short by the deadline can look complete (no length, no chunks).
                if deadline.expired:
                    return Fetched(200, None, kind, None)
                return Fetched(200, None, kind, bytes(body))
    finally:
        deadline.close()


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


@dataclass
class _Flight:
    """One fetch of a host in progress; the requests that wait for it read `icon` after."""

    done: threading.Event = field(default_factory=threading.Event)
    icon: Icon | None = None


class FaviconService:
    """Icons by host name, fetched once and cached with a TTL; None means "use the generic"."""

    def __init__(
        self,
        *,
        resolver: Resolver = system_resolver,
        get: Getter = requests_get,
        clock: Callable[[], float] = time.monotonic,
        timeout: float = TIMEOUT_SECONDS,
    ) -> None:
        self._resolver, self._get, self._clock = resolver, get, clock
        self._timeout = timeout
        self._cache: OrderedDict[str, tuple[float, Icon | None]] = OrderedDict()
        self._inflight: dict[str, _Flight] = {}
        self._lock = threading.Lock()

    def icon(self, raw_host: object) -> Icon | None:
        """Return the host's icon, or None when the host is refused or has none."""
        host = public_host(raw_host)
        if host is None:
            return None
        with self._lock:
            cached = self._cache.get(host)
            if cached is not None and cached[0] > self._clock():
                return cached[1]
            flight = self._inflight.get(host)
            if flight is None:
                flight = self._inflight[host] = _Flight()
                mine = True
            else:
                mine = False
        if not mine:
            # Another request is fetching this host: share its result, or give up with it
            # when it takes longer than a fetch may (the caller then serves the generic icon).
            if not flight.done.wait(self._timeout + WAIT_MARGIN_SECONDS):
                return None
            return flight.icon
        found: Icon | None = None
        try:
            found = self._fetch(host)
        finally:
            with self._lock:
                self._remember(host, found, FAILURE_TTL if found is None else ICON_TTL)
                flight.icon = found
                self._inflight.pop(host, None)
            flight.done.set()
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
        deadline = self._clock() + self._timeout
        for _ in range(MAX_REDIRECTS + 1):
            host = urlsplit(url).hostname or ""
            addresses = public_addresses(host, self._resolver)
            remaining = deadline - self._clock()  # the lookup took some of it
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
    # A signature alone is not an image: a cut or corrupt body would show as a broken one.
    if kind is None or not is_whole_image(kind, fetched.body):
        return None
    return Icon(kind, fetched.body)
