"""Who the client is and whether it came over HTTPS: the one reader of the forwarded headers.

Anyone can send ``X-Forwarded-For`` and ``X-Forwarded-Proto``, so they are read only on a request
whose peer (``REMOTE_ADDR``) is one of ``TRUSTED_PROXIES``. Each proxy appends the address it was
reached from, so the header is read right to left, past the hops that are themselves trusted
proxies: the first address that is not one is the client. Everything left of it is whatever the
client wrote. An entry that is not a bare IP address ends the walk at the last trusted hop, so a
proxy that writes something else is taken for the client itself (fail closed: a made-up address
never reaches the sign-in brake, the audit or ``METRICS_ALLOWED_IPS``).

The HTTPS header is read from the same hops: its entry from the proxy that the client reached,
counted from the right as the addresses were (one proxy: the last entry). A value other than
``https`` or ``http`` is ignored, and the connection's own scheme stands.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from django.conf import settings

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class Route:
    """The client's address (None when the peer's is not an IP address) and how many trusted proxies passed it on."""

    client: Address | None
    proxies: int


def route(request) -> Route:
    peer = _address(request.META.get("REMOTE_ADDR", ""))
    if peer is None or not _trusted(peer):
        return Route(peer, 0)
    client, proxies = peer, 1
    for entry in reversed(request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")):
        hop = _address(entry)
        if hop is None:
            break  # the header is empty, or a trusted proxy wrote something we cannot read: the last trusted hop
        client = hop
        if not _trusted(hop):
            break
        proxies += 1
    return Route(client, proxies)


def client_ip(request) -> str | None:
    """The client's address as text (django-axes' ``AXES_CLIENT_IP_CALLABLE``, the audit, ``/metrics``' allow list)."""
    client = route(request).client
    return None if client is None else str(client)


def forwarded_scheme(request) -> str | None:
    """``https`` or ``http`` as the proxy the client reached says, or None: no trusted proxy, or nothing readable."""
    header = settings.PROXY_HTTPS_HEADER
    proxies = route(request).proxies
    if not header or not proxies or header not in request.META:
        return None
    entries = request.META[header].split(",")
    # Fewer entries than proxies: the ones nearer the client did not append one, and the first was written past them.
    said = entries[-proxies] if len(entries) >= proxies else entries[0]
    said = said.strip().lower()
    return said if said in ("https", "http") else None


class ForwardedSchemeMiddleware:
    """Tell Django the scheme a trusted proxy forwarded (first in ``MIDDLEWARE``, before anything reads it).

    Django reads the scheme from ``SECURE_PROXY_SSL_HEADER``, which names a ``request.META`` key that
    no client can send (a header's key starts with ``HTTP_``) and only this middleware writes.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        key, _ = settings.SECURE_PROXY_SSL_HEADER
        request.META.pop(key, None)
        scheme = forwarded_scheme(request)
        if scheme is not None:
            request.META[key] = scheme
        return self.get_response(request)


def _address(text: str) -> Address | None:
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped  # a dual-stack socket's "::ffff:10.0.0.2" is 10.0.0.2
    return address


def _trusted(address: Address) -> bool:
    return any(address in network for network in settings.TRUSTED_PROXIES)
