"""Behind an HTTPS proxy: believe its `X-Forwarded-For` and `X-Forwarded-Proto`, and only its.

`FORWARDED_ALLOW_IPS` names the proxies (addresses or networks, comma-separated; `*` for any
peer). gunicorn.conf.py hands gunicorn the same value for the scheme alone (and, unset, trusts
no peer there either, where gunicorn's own default trusts loopback); here werkzeug's ProxyFix
(one hop) also takes the client's address, which the sign-in throttle counts by. A request
from any other peer keeps its own address and scheme, so a client that reaches the server
directly cannot pose as another address.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import TYPE_CHECKING

from flask import Flask
from werkzeug.middleware.proxy_fix import ProxyFix

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
# The WSGI key for the address of whoever opened the connection (a proxy, or the client).
PEER_ADDRESS = "REMOTE_ADDR"


def parse_allowed(value: str) -> tuple[Network, ...] | None:
    """Return the networks `value` names, or None for `*` (every peer); raise ValueError."""
    items = [item.strip() for item in value.split(",") if item.strip()]
    if "*" in items:
        return None
    try:
        return tuple(ipaddress.ip_network(item, strict=False) for item in items)
    except ValueError:
        raise ValueError(
            f"FORWARDED_ALLOW_IPS must list IP addresses or networks, or be '*': {value!r}"
        ) from None


def is_trusted(peer: object, allowed: Iterable[Network] | None) -> bool:
    """Tell whether the direct peer may set forwarded headers (as gunicorn decides it)."""
    if allowed is None:
        return True
    try:
        address = ipaddress.ip_address(str(peer))
    except ValueError:
        return True  # a UNIX socket has no address: only a local proxy can reach it
    return any(address in network for network in allowed)


class TrustedProxyFix:
    """Apply ProxyFix(x_for=1, x_proto=1) to requests from an allowed proxy, and only those."""

    def __init__(self, app: WSGIApplication, allowed: tuple[Network, ...] | None) -> None:
        self.app = app
        self.fixed = ProxyFix(app, x_for=1, x_proto=1)
        self.allowed = allowed

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if is_trusted(environ.get(PEER_ADDRESS), self.allowed):
            return self.fixed(environ, start_response)
        return self.app(environ, start_response)


def init_app(app: Flask) -> None:
    """Trust the proxies `FORWARDED_ALLOW_IPS` names; without it, trust none."""
    value = app.config.get("FORWARDED_ALLOW_IPS")
    if not value:
        return
    app.wsgi_app = TrustedProxyFix(app.wsgi_app, parse_allowed(str(value)))  # type: ignore[method-assign]
