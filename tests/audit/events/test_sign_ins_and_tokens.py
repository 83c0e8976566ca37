"""Sign-ins are recorded from their signals (``audit.sign_ins``), with the client's address; an account locked out
and an API token made, first used and revoked are recorded too."""

import ipaddress

import pytest
from django.urls import reverse

from audit import describe
from audit.models import AuditEvent, EventKind
from tests.helpers.audit_trail import only

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_delivery")]


# Sign-ins


def test_a_sign_in_is_recorded_with_the_user_and_address(client, alice):
    client.post(reverse("login"), {"username": "alice", "password": "pw"}, REMOTE_ADDR="203.0.113.7")

    event = only(EventKind.SIGNED_IN)
    assert event.actor == alice and event.payload["ip"] == "203.0.113.7"


def test_behind_a_trusted_proxy_a_sign_in_is_recorded_with_the_clients_address(client, alice, settings):
    settings.TRUSTED_PROXIES = [ipaddress.ip_network("10.0.0.2")]
    client.post(
        reverse("login"),
        {"username": "alice", "password": "pw"},
        REMOTE_ADDR="10.0.0.2",
        HTTP_X_FORWARDED_FOR="192.0.2.66, 203.0.113.7",  # the first hop is the client's word
    )

    assert only(EventKind.SIGNED_IN).payload["ip"] == "203.0.113.7"


def test_a_sign_in_not_through_a_trusted_proxy_is_recorded_with_its_own_address(client, alice, settings):
    settings.TRUSTED_PROXIES = [ipaddress.ip_network("10.0.0.2")]
    client.post(
        reverse("login"),
        {"username": "alice", "password": "pw"},
        REMOTE_ADDR="198.51.100.9",
        HTTP_X_FORWARDED_FOR="203.0.113.8",  # made up by the client: there is no proxy between it and the app
    )

    assert only(EventKind.SIGNED_IN).payload["ip"] == "198.51.100.9"


def test_failed_sign_ins_stay_out_of_the_trail_until_one_locks_the_account_out(client, alice, settings):
    def guess(password):
        client.post(reverse("login"), {"username": "alice", "password": password}, REMOTE_ADDR="198.51.100.9")

    for _ in range(settings.SIGN_IN_FAILURE_LIMIT - 1):
        guess("guess-123")
    assert not AuditEvent.objects.exists()

    guess("guess-123")
    for _ in range(3):
        guess("pw")  # refused during the lockout, and not recorded again

    event = only(EventKind.LOCKED_OUT)
    assert event.actor is None and event.actor_label == "anonymous"
    assert event.payload["username"] == "alice" and event.payload["ip"] == "198.51.100.9"
    assert event.payload["failures"] == settings.SIGN_IN_FAILURE_LIMIT
    assert "guess-123" not in str(event.payload)
    assert list(AuditEvent.objects.values_list("kind", flat=True)) == [EventKind.LOCKED_OUT]


def test_an_api_token_is_audited_when_made_first_used_and_revoked_never_with_its_secret(client, alice):
    from api.models import ApiToken

    client.force_login(alice)
    secret = client.post("/preferences/api-tokens", {"name": "cli", "scopes": ["read"]}).context["created"][1]
    for _ in range(2):
        client.get("/api/v1/holds", HTTP_AUTHORIZATION=f"Bearer {secret}")
    client.post("/preferences/api-tokens", {"revoke": ApiToken.objects.get().pk})

    made, used, revoked = (only(kind) for kind in ("token_created", "token_first_used", "token_revoked"))
    assert made.actor == used.actor == revoked.actor == alice
    assert made.payload["scopes"] == ["read"] and made.payload["owner"] == "alice"
    assert describe.summary(made) == f"“cli” ({secret[:7]}…, read) of alice"
    assert not AuditEvent.objects.filter(payload__icontains=secret[7:]).exists()
