"""Which host names the server may fetch from: plain public names that resolve only publicly.

docs/specs.md, rule P22: `/favicon/<host>` must not become a way to make the server fetch arbitrary
addresses. A host is a DNS name (IDNA allowed), never an IP literal, user info or port,
and every address it resolves to must be globally routable.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Iterable

import idna

Resolver = Callable[[str], Iterable[str]]
Address = ipaddress.IPv4Address | ipaddress.IPv6Address

_LABEL = re.compile(r"(?!-)[a-z0-9-]{1,63}(?<!-)", re.ASCII)
_MAX_HOST = 253
# Names that never reach the public internet, whatever a resolver says about them.
_LOCAL_SUFFIXES = (
    ".localhost",
    ".local",
    ".internal",
    ".lan",
    ".home.arpa",
    ".arpa",
    ".intranet",
    ".corp",
    ".test",
    ".invalid",
    ".example",
    ".onion",
)


def _ascii_host(raw: str) -> str | None:
    text = raw.strip().lower().removesuffix(".")
    if not text or len(text) > _MAX_HOST * 4:
        return None
    if text.isascii():
        return text
    try:
        return idna.encode(text, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError, ValueError):
        return None


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    else:
        return True
    # inet_aton also reads "127.1", "0x7f.0.0.1" and "2130706433" as addresses.
    try:
        socket.inet_aton(host)
    except (OSError, ValueError):
        return False
    return True


def public_host(raw: object) -> str | None:
    """Return `raw` as a lower-case ASCII host name when it is a plain public one, else None."""
    if not isinstance(raw, str):
        return None
    host = _ascii_host(raw)
    if host is None or len(host) > _MAX_HOST or _is_ip_literal(host):
        return None
    labels = host.split(".")
    if len(labels) < 2 or not all(_LABEL.fullmatch(label) for label in labels):
        return None
    # A top-level domain is never numeric: "1.2.3.4"-like names are addresses in disguise.
    if not labels[-1][0].isalpha() and not labels[-1].startswith("xn--"):
        return None
    if any(f".{host}".endswith(suffix) for suffix in _LOCAL_SUFFIXES):
        return None
    return host


def _embedded(address: Address) -> list[ipaddress.IPv4Address]:
    if not isinstance(address, ipaddress.IPv6Address):
        return []
    found = [address.ipv4_mapped, address.sixtofour]
    if address.teredo is not None:
        found.extend(address.teredo)
    return [inner for inner in found if inner is not None]


def is_public_address(value: str) -> bool:
    """Tell whether `value` is a globally routable unicast address (v4, or v6 and its embeds)."""
    try:
        address = ipaddress.ip_address(value.split("%", 1)[0])
    except ValueError:
        return False
    for candidate in (address, *_embedded(address)):
        if (
            not candidate.is_global
            or candidate.is_private
            or candidate.is_loopback
            or candidate.is_link_local
            or candidate.is_multicast
            or candidate.is_reserved
            or candidate.is_unspecified
        ):
            return False
    return True


def system_resolver(host: str) -> list[str]:
    """Return every address the system resolver gives for `host` on port 443."""
    infos = socket.getaddrinfo(host, 443, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def public_addresses(host: str, resolver: Resolver = system_resolver) -> tuple[str, ...]:
    """Return the addresses of `host` when there are some and every one is public, else ()."""
    try:
        addresses = tuple(resolver(host))
    except (OSError, UnicodeError, ValueError):
        return ()
    if addresses and all(is_public_address(a) for a in addresses):
        return addresses
    return ()
