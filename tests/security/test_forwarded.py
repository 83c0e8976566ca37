"""Forwarded addresses and schemes count only from the proxies in ``TRUSTED_PROXIES`` (reviewqueue/forwarded.py)."""

import ipaddress

import pytest
from django.http import HttpResponse
from django.test import RequestFactory
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from reviewqueue.forwarded import ForwardedSchemeMiddleware, client_ip

pytestmark = pytest.mark.django_db

PROXIES = "10.0.0.0/24"


def trusting(settings, *networks: str) -> None:
    settings.TRUSTED_PROXIES = [ipaddress.ip_network(network) for network in networks]


@pytest.mark.parametrize(
    "proxies, forwarded_for, peer, client",
    [
        ((), "192.0.2.1", "203.0.113.7", "203.0.113.7"),  # no proxy: the header is the client's word
        (("10.0.0.2",), "192.0.2.1", "203.0.113.7", "203.0.113.7"),  # not from the proxy: the same
        (("10.0.0.2",), "10.0.0.2, 192.0.2.1", "203.0.113.7", "203.0.113.7"),  # naming the proxy changes nothing
        (("10.0.0.2",), "192.0.2.1, 198.51.100.5", "10.0.0.2", "198.51.100.5"),  # what the proxy saw
        ((PROXIES,), "192.0.2.1, 198.51.100.5, 10.0.0.1", "10.0.0.2", "198.51.100.5"),  # past the inner proxy
        ((PROXIES,), "10.0.0.1", "10.0.0.2", "10.0.0.1"),  # every hop a proxy's: the outermost
        (("10.0.0.2",), "", "10.0.0.2", "10.0.0.2"),  # the proxy appended nothing: itself
        (("10.0.0.2",), "not-an-address", "10.0.0.2", "10.0.0.2"),  # unreadable: the last trusted hop
        ((PROXIES,), "198.51.100.5, 10.0.0.1:8080", "10.0.0.2", "10.0.0.2"),
        ((PROXIES,), "198.51.100.5,, 10.0.0.1", "10.0.0.2", "10.0.0.1"),
        (("10.0.0.2",), "2001:DB8::1", "10.0.0.2", "2001:db8::1"),
        (("10.0.0.2", "2001:db8:1::/48"), "198.51.100.5", "2001:db8:1::7", "198.51.100.5"),
        (("10.0.0.2",), "198.51.100.5", "::ffff:10.0.0.2", "198.51.100.5"),  # a dual-stack socket's IPv4 peer
        (("10.0.0.2",), "198.51.100.5", "", None),  # no IP peer (a Unix socket): no address at all
    ],
)
def test_the_client_is_the_first_untrusted_address_from_the_right_behind_a_trusted_peer(
    settings, proxies, forwarded_for, peer, client
):
    trusting(settings, *proxies)
    request = RequestFactory().get("/", REMOTE_ADDR=peer, HTTP_X_FORWARDED_FOR=forwarded_for)

    assert client_ip(request) == client


def scheme_of(peer: str, forwarded_proto: str | None, forwarded_for: str = "198.51.100.5") -> str:
    """The scheme Django sees for a plain-HTTP request through ForwardedSchemeMiddleware."""
    headers = {"HTTP_X_FORWARDED_FOR": forwarded_for}
    if forwarded_proto is not None:
        headers["HTTP_X_FORWARDED_PROTO"] = forwarded_proto
    request = RequestFactory().get("/", REMOTE_ADDR=peer, **headers)
    return ForwardedSchemeMiddleware(lambda seen: HttpResponse(seen.scheme))(request).content.decode()


def test_the_https_header_counts_only_from_a_trusted_proxy_and_from_the_hop_the_client_reached(settings):
    trusting(settings, PROXIES)

    assert scheme_of("203.0.113.7", "https") == "http"  # anyone's word
    assert scheme_of("10.0.0.2", "https") == "https"
    assert scheme_of("10.0.0.2", None) == "http"
    assert scheme_of("10.0.0.2", "https, http") == "http"  # the client wrote the first, the proxy appended the last
    assert scheme_of("10.0.0.2", "HTTPS") == "https"
    assert scheme_of("10.0.0.2", "ftp") == "http"  # unreadable: the connection's own scheme
    # Two proxies, each appending: the outer one (10.0.0.1) is the one the client reached.
    assert scheme_of("10.0.0.2", "https, http", forwarded_for="198.51.100.5, 10.0.0.1") == "https"
    assert scheme_of("10.0.0.2", "https", forwarded_for="198.51.100.5, 10.0.0.1") == "https"  # the outer one set it


def test_an_https_site_redirects_a_request_that_only_claims_https(client, settings):
    trusting(settings, "10.0.0.2")
    settings.SECURE_SSL_REDIRECT = True

    claimed = client.get("/login/", REMOTE_ADDR="203.0.113.7", HTTP_X_FORWARDED_PROTO="https")
    through_the_proxy = client.get("/login/", REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_PROTO="https")
    probe = client.get("/healthz", REMOTE_ADDR="192.0.2.50")  # an orchestrator's probe skips the proxy

    assert claimed.status_code == 301 and claimed["Location"].startswith("https://")
    assert through_the_proxy.status_code == 200
    assert probe.status_code == 200


ENTRIES = st.one_of(
    st.ip_addresses().map(str),
    st.sampled_from(["10.0.0.1", "10.0.0.7", "::ffff:10.0.0.3", " 10.0.0.9 ", "10.0.0.1:80", "[2001:db8::1]"]),
    st.text(max_size=20),
)


@hypothesis_settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    peer=st.sampled_from(["10.0.0.2", "::ffff:10.0.0.2", "203.0.113.7", "", "garbage"]),
    entries=st.lists(ENTRIES, max_size=6),
    separator=st.sampled_from([",", ", ", " ,", ",,"]),
    forwarded_proto=st.one_of(st.none(), st.text(max_size=20), st.sampled_from(["https", "http, https", ",,"])),
)
def test_any_forwarded_header_yields_the_peer_or_one_of_its_own_entries(
    client, settings, peer, entries, separator, forwarded_proto
):
    trusting(settings, PROXIES)
    settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS = "", [ipaddress.ip_network("198.51.100.0/24")]
    forwarded_for = separator.join(entries)
    request = RequestFactory().get("/", REMOTE_ADDR=peer, HTTP_X_FORWARDED_FOR=forwarded_for)

    found = client_ip(request)
    scheme = scheme_of(peer, forwarded_proto, forwarded_for)
    scraped = client.get(
        "/metrics",
        REMOTE_ADDR=peer,
        HTTP_X_FORWARDED_FOR=forwarded_for,
        **({} if forwarded_proto is None else {"HTTP_X_FORWARDED_PROTO": forwarded_proto}),
    )

    assert found is None or ipaddress.ip_address(found) in readable({peer, *forwarded_for.split(",")})
    assert found is not None or readable({peer}) == set()
    assert scheme in ("http", "https")
    assert scraped.status_code in (200, 400, 401)  # 400: a NUL, which no request may carry


def readable(texts) -> set:
    """Every address among ``texts``, with an IPv4-mapped IPv6 address as its IPv4 one too."""
    found = set()
    for text in texts:
        try:
            address = ipaddress.ip_address(text.strip())
        except ValueError:
            continue
        found |= {address} | ({address.ipv4_mapped} if getattr(address, "ipv4_mapped", None) else set())
    return found
