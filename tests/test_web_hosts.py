"""Which hosts the favicon route may fetch from (docs/specs.md, P22: a plain public host name only)."""

from __future__ import annotations

import socket

import pytest

from webapp.favicons.hosts import Resolver, is_public_address, public_addresses, public_host


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("www.irs.gov", "www.irs.gov"),
        ("IRS.GOV", "irs.gov"),
        ("irs.gov.", "irs.gov"),
        ("münchen.de", "xn--mnchen-3ya.de"),
        ("xn--mnchen-3ya.de", "xn--mnchen-3ya.de"),
        ("a-b.example.com", "a-b.example.com"),
        ("1.2.3.4.com", "1.2.3.4.com"),
    ],
    ids=["plain", "upper-case", "trailing-dot", "idna", "punycode", "hyphen", "digits-before-tld"],
)
def test_public_host_accepts_plain_names(raw: str, expected: str) -> None:
    assert public_host(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "",
        " ",
        "localhost",
        "LOCALHOST",
        "printer",
        "127.0.0.1",
        "127.1",
        "0x7f.0.0.1",
        "2130706433",
        "017700000001",
        "[::1]",
        "::1",
        "fe80::1",
        "user@irs.gov",
        "irs.gov:443",
        "irs.gov:8443",
        "irs.gov/favicon.ico",
        "..",
        "../etc/passwd",
        "a..com",
        "-a.com",
        "a-.com",
        "a_b.com",
        "a.123",
        "irs.gov%2F..",
        "foo.local",
        "svc.internal",
        "x.localhost",
        "router.lan",
        "1.0.0.10.in-addr.arpa",
        "a b.com",
        "irs.gov\\evil.com",
        "evil.com\x00.irs.gov",
        "a" * 64 + ".com",
        ("a" * 60 + ".") * 5 + "com",
    ],
    ids=[
        "empty",
        "blank",
        "localhost",
        "localhost-upper",
        "single-label",
        "ipv4",
        "short-ipv4",
        "hex-ipv4",
        "decimal-ipv4",
        "octal-ipv4",
        "bracketed-ipv6",
        "ipv6",
        "link-local-ipv6",
        "userinfo",
        "port",
        "other-port",
        "path",
        "dots",
        "traversal",
        "empty-label",
        "leading-hyphen",
        "trailing-hyphen",
        "underscore",
        "numeric-tld",
        "encoded-slash",
        "mdns",
        "internal",
        "localhost-subdomain",
        "lan",
        "reverse-dns",
        "space",
        "backslash",
        "nul",
        "label-too-long",
        "name-too-long",
    ],
)
def test_public_host_refuses_everything_else(raw: str) -> None:
    assert public_host(raw) is None


@pytest.mark.parametrize(
    "value", [None, 42, b"irs.gov", ["irs.gov"]], ids=["none", "int", "bytes", "list"]
)
def test_public_host_refuses_non_strings(value: object) -> None:
    assert public_host(value) is None


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("151.101.1.69", True),
        ("2001:4860:4860::8888", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("224.0.0.251", False),
        ("255.255.255.255", False),
        ("240.0.0.1", False),
        ("192.0.2.10", False),
        ("::1", False),
        ("::", False),
        ("fe80::1%eth0", False),
        ("fc00::1", False),
        ("ff02::1", False),
        ("::ffff:127.0.0.1", False),
        ("::ffff:10.0.0.1", False),
        ("2002:a00:1::1", False),
        ("2001:db8::1", False),
        ("not-an-address", False),
    ],
    ids=[
        "google-dns",
        "cdn",
        "google-dns-v6",
        "loopback",
        "private-10",
        "private-172",
        "private-192",
        "metadata-link-local",
        "carrier-grade-nat",
        "unspecified",
        "multicast",
        "broadcast",
        "reserved",
        "documentation",
        "loopback-v6",
        "unspecified-v6",
        "link-local-v6",
        "unique-local-v6",
        "multicast-v6",
        "mapped-loopback",
        "mapped-private",
        "6to4-private",
        "documentation-v6",
        "garbage",
    ],
)
def test_is_public_address(address: str, public: bool) -> None:
    assert is_public_address(address) is public


def _resolver(*addresses: str) -> Resolver:
    return lambda host: list(addresses)


def _failing(host: str) -> list[str]:
    raise socket.gaierror("no such host")


@pytest.mark.parametrize(
    ("resolver", "expected"),
    [
        (_resolver("93.184.215.14"), True),
        (_resolver("93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"), True),
        (_resolver("93.184.215.14", "127.0.0.1"), False),
        (_resolver("10.0.0.5", "93.184.215.14"), False),
        (_resolver("::ffff:192.168.0.1"), False),
        (_resolver(), False),
        (_failing, False),
    ],
    ids=[
        "one-public",
        "v4-and-v6",
        "public-then-loopback",
        "private-then-public",
        "mapped-private",
        "no-addresses",
        "resolver-fails",
    ],
)
def test_every_resolved_address_must_be_public(resolver: Resolver, expected: bool) -> None:
    found = public_addresses("icons.example.com", resolver)
    assert bool(found) is expected
    if expected:
        assert found == tuple(resolver("icons.example.com"))
