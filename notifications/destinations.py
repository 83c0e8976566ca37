"""Where a webhook, or a push to a device, may post: public addresses only, and the networks an operator allows.

The worker posts from inside the network, so a webhook URL naming (or resolving to)
loopback, a private or link-local network, multicast or a cloud metadata service
would turn it into a way in. Every address a URL's host resolves to is checked when
the webhook is saved and again when it is sent, IPv4 inside IPv6 (``::ffff:127.0.0.1``,
6to4, NAT64) as the IPv4 address it carries. At send time the name is resolved once
and the request connects to the address checked (``pinned``), keeping the name for
``Host`` and TLS, so a name that answers differently a moment later (DNS rebinding)
reaches nothing new.

``WEBHOOK_ALLOWED_NETWORKS`` lists addresses or networks an operator allows, e.g. a
chat relay inside the network; ``WEBPUSH_ALLOWED_NETWORKS`` does for push services, which
are https alone (a ``Reach`` each). A cloud metadata address is refused even there.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import socket

import httpx
from django.conf import settings

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud metadata services: AWS, GCP, Azure and others; AWS ECS tasks; AWS over IPv6; Alibaba Cloud.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(address)
    for address in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200")
)
NAT64 = ipaddress.ip_network("64:ff9b::/96")
IPV4_COMPATIBLE = ipaddress.ip_network("::/96")  # deprecated, yet some stacks still route it to the IPv4 address
SCHEMES = {"http": 80, "https": 443}


@dataclasses.dataclass(frozen=True)
class Reach:
    """What posts (``what``, as messages name it), the schemes it may use, and the setting naming the networks its
    operator allows besides the public ones."""

    what: str
    schemes: tuple[str, ...]
    allowed_setting: str

    @property
    def allowed(self) -> list:
        return getattr(settings, self.allowed_setting)


WEBHOOKS = Reach("webhook", ("http", "https"), "WEBHOOK_ALLOWED_NETWORKS")
PUSH_SERVICES = Reach("push endpoint", ("https",), "WEBPUSH_ALLOWED_NETWORKS")


class Refused(Exception):
    """The webhook may not post there; the message says why in fixed words (no address, no answer)."""


class Unresolvable(Exception):
    """The URL's host name does not resolve now."""


@dataclasses.dataclass(frozen=True)
class Destination:
    """Where one post goes: ``url`` names the checked address; ``host`` is the name for ``Host`` and TLS."""

    url: httpx.URL
    host_header: str
    server_name: str


def refusal(address: Address, reach: Reach = WEBHOOKS) -> str | None:
    """Why ``reach`` may not post to ``address`` (e.g. "a loopback address"), or None when it may."""
    carried = _carried_ipv4(address)
    seen_as = [carried, address] if carried else [address]  # the IPv4 address first: it names what is reached
    if any(candidate in METADATA_ADDRESSES for candidate in seen_as):
        return "a cloud metadata address"
    allowed = reach.allowed
    if any(candidate in network for candidate in seen_as for network in allowed):
        return None
    return next(filter(None, map(_kind, seen_as)), None)


def _kind(address: Address) -> str | None:
    """What makes an address one no webhook may reach without the operator's leave, or None for a public one."""
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_private or getattr(address, "is_site_local", False):
        return "a private address"
    if address.is_reserved or not address.is_global:
        return "an address that is not public"
    return None


def _carried_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (mapped, 6to4, NAT64, IPv4-compatible), if any."""
    if address.version == 4:
        return None
    if address.ipv4_mapped or address.sixtofour:
        return address.ipv4_mapped or address.sixtofour
    if address in NAT64 or (address in IPV4_COMPATIBLE and not address.is_loopback):  # ::1 is IPv6's own loopback
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def refusal_on_save(url: str, reach: Reach = WEBHOOKS) -> str | None:
    """Why a webhook (or ``reach``'s other kind) may not be saved with ``url``, or None.

    A host name that does not resolve now is let through: the check at send time,
    which every post passes, refuses it then if it resolves somewhere refused.
    """
    try:
        _check(_parsed(url, reach), reach)
    except Refused as refused:
        return str(refused)
    except Unresolvable:
        return None
    return None


def pinned(url: str, reach: Reach = WEBHOOKS) -> Destination:
    """Resolve ``url``'s host once, check every address, and answer the destination that connects to the first.

    Raises ``Refused`` or ``Unresolvable``.
    """
    parsed = _parsed(url, reach)
    address = _check(parsed, reach)[0]
    return Destination(
        url=parsed.copy_with(host=str(address)),
        host_header=parsed.netloc.decode("ascii"),
        server_name=parsed.raw_host.decode("ascii"),
    )


def _parsed(url: str, reach: Reach) -> httpx.URL:
    """The URL as the request will read it, so that what is checked is what is reached."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        raise Refused(f"the {reach.what}'s URL cannot be read") from None
    if parsed.scheme not in reach.schemes or not parsed.raw_host:
        starts = " or ".join(f"{scheme}://" for scheme in reach.schemes)
        raise Refused(f"a {reach.what}'s URL starts with {starts} and names a host")
    return parsed


def _check(parsed: httpx.URL, reach: Reach) -> list[Address]:
    """Every address the URL's host resolves to, each checked; raises ``Refused`` naming the first refused kind."""
    found = addresses(parsed.raw_host.decode("ascii"), parsed.port or SCHEMES[parsed.scheme])
    for address in found:
        if reason := refusal(address, reach):
            raise Refused(
                f"the {reach.what}'s host resolves to {reason}, which {reach.what}s may not reach "
                f"unless {reach.allowed_setting} allows it"
            )
    return found


def addresses(host: str, port: int) -> list[Address]:
    """Every address ``host`` resolves to, in the resolver's order; an address written out is itself.

    Raises ``Unresolvable`` when the name does not resolve.
    """
    try:
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):  # socket.gaierror is an OSError
        raise Unresolvable(host) from None
    resolved = list(dict.fromkeys(ipaddress.ip_address(info[4][0]) for info in found))
    if not resolved:
        raise Unresolvable(host)
    return resolved
