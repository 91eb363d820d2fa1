"""Which network targets ``fetch`` may reach: public addresses over http(s), nothing else.

A model (or a page it read) chooses the URL, so the URL is hostile: it must not
reach the machine itself, the local network or a cloud metadata service. The
check runs on the *resolved* address, and the tool then connects to exactly
that address (``Target.ip``), so a second DNS answer cannot rebind the name to
127.0.0.1 between the check and the connection. Every redirect is checked again.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

#: Resolves a host name to its addresses (tests inject one that maps a test name to loopback).
Resolver = Callable[[str], list[str]]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Metadata services answer by name too; refused whatever they resolve to.
METADATA_NAMES = frozenset({"metadata.google.internal", "metadata", "instance-data"})
_METADATA_IPS = frozenset(
    {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
)
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_ULA = ipaddress.ip_network("fc00::/7")


class TargetRefused(ValueError):
    """A URL or address fetch will not reach (the message says why, for the model)."""


@dataclass(frozen=True)
class Target:
    """A checked URL: the name to send (Host header, TLS SNI) and the address to connect to."""

    url: str
    scheme: str
    host: str  # lower-case, no trailing dot (IPv6 without brackets)
    port: int
    ip: str


def system_resolver(host: str) -> list[str]:
    """Every address the system resolver gives for ``host``."""
    infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def address_refusal(ip: IPAddress) -> str | None:
    """Why ``ip`` is not a public address fetch may reach, or None."""
    if isinstance(ip, ipaddress.IPv6Address):
        mapped = ip.ipv4_mapped or ip.sixtofour
        if mapped is not None:
            inner = address_refusal(mapped)
            return f"{inner} (inside the IPv6 address {ip})" if inner else None
    if ip in _METADATA_IPS:
        return f"{ip} is a cloud metadata address"
    checks = (
        (ip.is_loopback, "a loopback address (this machine)"),
        (ip.is_unspecified, "the unspecified address"),
        (ip.is_link_local, "a link-local address"),
        (ip.is_multicast, "a multicast address"),
        (isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT, "a carrier-grade NAT address"),
        (isinstance(ip, ipaddress.IPv6Address) and ip in _ULA, "a private (ULA) address"),
        (ip.is_private, "a private address"),
        (ip.is_reserved, "a reserved address"),
        (not ip.is_global, "not a public address"),
    )
    for hit, what in checks:
        if hit:
            return f"{ip} is {what}"
    return None


def parse_url(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL without credentials, or ``TargetRefused``."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise TargetRefused(f"not a valid URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise TargetRefused(f"only http and https URLs can be fetched, not {scheme or 'this'}:")
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise TargetRefused("URLs with credentials (user:password@) are not fetched")
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise TargetRefused("the URL has no host")
    return scheme, host, port or (443 if scheme == "https" else 80)


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def check_url(
    url: str, resolver: Resolver = system_resolver, loopback_names: frozenset[str] = frozenset()
) -> Target:
    """``url`` checked and resolved to one public address to connect to.

    A literal address is judged as written (the resolver is never asked, so an
    injected resolver cannot make ``http://127.0.0.1/`` pass). A name is
    refused when *any* of its addresses is not public: an answer mixing a
    public and a private address is a rebinding attempt. ``loopback_names``
    (tests only, never from config) are names whose *loopback* answer is accepted,
    so a test server on 127.0.0.1 can stand for a public site.
    """
    scheme, host, port = parse_url(url)
    literal = _literal(host)
    if literal is not None:
        addresses = [literal]
    else:
        if host in METADATA_NAMES or host == "localhost" or host.endswith(".localhost"):
            raise TargetRefused(f"{host} is a local or metadata host name")
        try:
            found = resolver(host)
        except (OSError, UnicodeError) as exc:
            raise TargetRefused(f"{host} could not be resolved: {exc}") from None
        addresses = [a for a in (_literal(raw.split("%", 1)[0]) for raw in found) if a is not None]
        if not addresses:
            raise TargetRefused(f"{host} has no address")
    for address in addresses:
        if literal is None and host in loopback_names and address.is_loopback:
            continue
        why = address_refusal(address)
        if why is not None:
            via = "" if literal is not None else f"{host} resolves to "
            raise TargetRefused(
                f"{via}{why}; fetch only reaches public addresses (no local network)"
            )
    return Target(url, scheme, host, port, str(addresses[0]))


def url_host(url: str) -> str:
    """The host a URL names, lower case without a trailing dot ("" when there is none)."""
    try:
        return (urlsplit(url).hostname or "").rstrip(".").lower()
    except ValueError:
        return ""


def domain_matches(host: str, entry: str, *, apex: bool = False) -> bool:
    """``host`` is ``entry``, or a subdomain of a ``*.example.org`` entry.

    ``apex`` lets ``*.example.org`` cover ``example.org`` itself too: a deny rule
    reads its pattern wide, an allow entry narrow.
    """
    host = host.rstrip(".").lower()
    entry = entry.rstrip(".").lower()
    if entry.startswith("*."):
        return host.endswith(entry[1:]) or (apex and host == entry[2:])
    return host == entry


def domain_listed(host: str, entries: Iterable[str]) -> bool:
    """``host`` matches one of ``entries`` (``fetch.allow_domains``; see ``domain_matches``)."""
    return any(domain_matches(host, entry) for entry in entries)
