"""Who may read the audit trail: auditors and superusers, signed in; reviewers get a 403, and nobody changes an
event in the admin."""

import pytest
from django.urls import reverse

from audit import events
from audit.models import AuditEvent, EventKind
from holds.models import Decision
from tests.helpers.users import make_user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_delivery")]


def audit_urls(decision: Decision) -> list[str]:
    event = events.record(EventKind.SIGNED_IN)
    return [
        reverse("audit:list"),
        reverse("audit:list") + "?kind=claimed&q=a-1001",
        reverse("audit:export"),
        reverse("audit:event", args=[event.sequence]),
        reverse("audit:decision", args=[decision.pk]),
        reverse("audit:hold-timeline", args=[decision.hold_id]),
        reverse("audit:stats"),
    ]


# Who may read it


def test_a_reviewer_gets_403_on_every_audit_page(alice_client, decided):
    for url in audit_urls(decided):
        response = alice_client.get(url)
        assert response.status_code == 403, url
        assert b"Reading the audit needs the Auditors role" in response.content


def test_an_auditor_and_a_superuser_may_read_every_audit_page(client, ada, decided):
    for user in (ada, make_user("root", is_superuser=True, is_staff=True)):
        client.force_login(user)
        for url in audit_urls(decided):
            assert client.get(url).status_code == 200, url


def test_the_audit_needs_a_login(client, decided):
    response = client.get(reverse("audit:list"))

    assert response.status_code == 302 and response.url.startswith(reverse("login"))


def test_the_admin_shows_audit_events_and_lets_nobody_add_change_or_delete_them(client, alice):
    event = events.record(EventKind.CLAIMED, actor=alice)
    client.force_login(make_user("root", is_superuser=True, is_staff=True))

    listing = client.get(reverse("admin:audit_auditevent_changelist") + "?kind__exact=claimed")
    detail = client.get(reverse("admin:audit_auditevent_change", args=[event.pk]))

    assert listing.status_code == 200 and b"alice" in listing.content
    assert detail.status_code == 200 and b"Save" not in detail.content
    assert client.get(reverse("admin:audit_auditevent_add")).status_code == 403
    assert client.post(reverse("admin:audit_auditevent_delete", args=[event.pk]), {"post": "yes"}).status_code == 403
    assert AuditEvent.objects.filter(pk=event.pk).exists()
