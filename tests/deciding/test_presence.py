"""Presence, not locks: opening a hold shows who is looking; starting to decide claims it, and the page's heartbeat
keeps the claim."""

from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from audit.models import AuditEvent
from holds.models import Hold, HoldViewer
from holds.queue import listing as queue
from teams.scopes import viewer_of

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def open_hold(client, hold):
    return client.get(reverse("hold", args=[hold.pk]))


def start_deciding(client, hold):
    """What app.js sends on the first change to the form (or `a`, `r`, Approve all…): an htmx claim."""
    return client.post(reverse("claim-hold", args=[hold.pk]), **HTMX)


def heartbeat(client, hold):
    return client.post(reverse("hold-heartbeat", args=[hold.pk]), **HTMX)


def claim_events(hold) -> list[tuple[str, str]]:
    return list(AuditEvent.objects.filter(hold_id=hold.hold_id).order_by("sequence").values_list("kind", "actor_name"))


def test_opening_a_hold_claims_nothing_and_shows_the_others_who_is_looking(alice, bob, samples):
    hold = samples["h_12"]
    alice_client, bob_client = signed_in(alice), signed_in(bob)
    audit_before = AuditEvent.objects.count()

    open_hold(alice_client, hold)
    bobs_page = open_hold(bob_client, hold).content.decode()

    hold.refresh_from_db()
    assert hold.claimed_by is None
    assert (
        '<strong><span class="person" title="alice@example.com">Alice Adams</span></strong> is looking at this.'
        in bobs_page
    )
    assert 'id="decide-form"' in bobs_page and "I'll take this" in bobs_page
    assert (
        '<strong><span class="person" title="bob@example.com">Bob Brown</span></strong> is looking at this.'
        in heartbeat(alice_client, hold).content.decode()
    )
    assert AuditEvent.objects.count() == audit_before  # looking is not deciding: no audit row


def test_presence_ends_a_minute_after_the_last_heartbeat(alice, bob, samples):
    hold = samples["h_12"]
    alice_client, bob_client = signed_in(alice), signed_in(bob)
    open_hold(alice_client, hold)

    with time_machine.travel(timezone.now() + timedelta(seconds=40)):
        heartbeat(alice_client, hold)
    with time_machine.travel(timezone.now() + timedelta(seconds=90)):
        still_there = heartbeat(bob_client, hold).content.decode()
    with time_machine.travel(timezone.now() + timedelta(seconds=105)):
        gone = heartbeat(bob_client, hold).content.decode()

    assert (
        '<strong><span class="person" title="alice@example.com">Alice Adams</span></strong> is looking at this.'
        in still_there
    )
    assert "is looking at this" not in gone and "I'll take this" in gone


def test_starting_to_decide_claims_the_hold_for_a_minute_and_records_it(alice, bob, samples):
    hold = samples["h_12"]
    alice_client, bob_client = signed_in(alice), signed_in(bob)
    open_hold(alice_client, hold)

    answer = start_deciding(alice_client, hold).content.decode()
    start_deciding(alice_client, hold)  # a second change claims nothing new
    bobs_page = open_hold(bob_client, hold).content.decode()

    hold.refresh_from_db()
    assert hold.claimed_by == alice
    assert timedelta(seconds=50) < hold.claim_expires_at - timezone.now() <= timedelta(seconds=60)
    assert "You are deciding this hold" in answer and "data-deciding" in answer
    assert (
        '<strong><span class="person" title="alice@example.com">Alice Adams</span></strong> is deciding this hold since'
        in bobs_page
        and 'id="decide-form"' not in bobs_page
    )
    assert claim_events(hold)[-1:] == [("claimed", "alice")] and claim_events(hold).count(("claimed", "alice")) == 1


def test_the_heartbeat_keeps_the_claim_alive_while_the_page_is_open(alice, bob, samples):
    hold = samples["h_12"]
    alice_client, bob_client = signed_in(alice), signed_in(bob)
    start_deciding(alice_client, hold)
    started = timezone.now()

    for seconds in (20, 40, 60, 80, 100):
        with time_machine.travel(started + timedelta(seconds=seconds)):
            heartbeat(alice_client, hold)
    with time_machine.travel(started + timedelta(seconds=110)):
        refused = start_deciding(bob_client, hold).content.decode()
        held_by = Hold.objects.get(pk=hold.pk).claimant(timezone.now())

    assert held_by == alice
    assert (
        '<strong><span class="person" title="alice@example.com">Alice Adams</span></strong> is deciding this hold'
        in refused
    )
    assert Hold.objects.get(pk=hold.pk).claim_expires_at == pytest.approx(
        started + timedelta(seconds=160), abs=timedelta(seconds=2)
    )
    assert ("claimed", "bob") not in claim_events(hold)


def test_a_missed_heartbeat_frees_the_hold_within_a_minute(alice, bob, samples):
    hold = samples["h_12"]
    alice_client, bob_client = signed_in(alice), signed_in(bob)
    start_deciding(alice_client, hold)  # then her browser crashes: no beacon, no more heartbeats

    with time_machine.travel(timezone.now() + timedelta(seconds=61)):
        bobs_page = open_hold(bob_client, hold).content.decode()
        start_deciding(bob_client, hold)
        late_heartbeat = heartbeat(alice_client, hold).content.decode()

    assert 'id="decide-form"' in bobs_page and "Nobody is deciding this hold." in bobs_page
    assert Hold.objects.get(pk=hold.pk).claimed_by == bob
    assert (
        '<strong><span class="person" title="bob@example.com">Bob Brown</span></strong> is deciding this hold'
        in late_heartbeat
    )  # alice's page learns it, and gets no claim back


def test_a_claim_without_javascript_is_shortened_by_the_first_heartbeat(alice, samples):
    hold = samples["h_12"]
    alice_client = signed_in(alice)

    alice_client.post(reverse("claim-hold", args=[hold.pk]))
    long_claim = Hold.objects.get(pk=hold.pk).claim_expires_at - timezone.now()
    heartbeat(alice_client, hold)
    live_claim = Hold.objects.get(pk=hold.pk).claim_expires_at - timezone.now()

    assert long_claim > timedelta(minutes=9)
    assert timedelta(seconds=50) < live_claim <= timedelta(seconds=60)


def test_the_pagehide_beacon_releases_the_claim_and_ends_the_presence(alice, bob, samples):
    hold = samples["h_12"]
    alice_client, bob_client = signed_in(alice), signed_in(bob)
    open_hold(alice_client, hold)
    start_deciding(alice_client, hold)

    beacon = alice_client.post(reverse("leave-hold", args=[hold.pk]))
    bobs_page = open_hold(bob_client, hold).content.decode()

    assert beacon.status_code == 204
    assert Hold.objects.get(pk=hold.pk).claimed_by is None
    assert not HoldViewer.objects.filter(hold=hold, user=alice).exists()
    assert "alice" not in bobs_page and 'id="decide-form"' in bobs_page
    assert claim_events(hold)[-2:] == [("claimed", "alice"), ("released", "alice")]


def test_the_beacon_of_a_reviewer_who_only_looked_writes_no_audit_row(alice, samples):
    hold = samples["h_12"]
    alice_client = signed_in(alice)
    open_hold(alice_client, hold)
    audit_before = AuditEvent.objects.count()

    alice_client.post(reverse("leave-hold", args=[hold.pk]))

    assert AuditEvent.objects.count() == audit_before
    assert not HoldViewer.objects.exists()


def test_next_skips_holds_being_decided_but_not_holds_being_looked_at(alice, bob, samples):
    first, second = list(queue.open_holds()[:2])
    alice_client, bob_client = signed_in(alice), signed_in(bob)

    open_hold(alice_client, first)
    looked_at = bob_client.get(reverse("next-hold"))
    start_deciding(alice_client, first)
    being_decided = bob_client.get(reverse("next-hold"))

    assert looked_at.url == reverse("hold", args=[first.pk])
    assert being_decided.url == reverse("hold", args=[second.pk])
    assert queue.next_for(viewer_of(alice), timezone.now()) == first  # her own claim does not hide it from her


def test_take_over_still_asks_and_then_moves_the_claim(alice, bob, samples):
    hold = samples["h_12"]
    alice_client, bob_client = signed_in(alice), signed_in(bob)
    start_deciding(alice_client, hold)

    asked = bob_client.get(reverse("take-over", args=[hold.pk])).content.decode()
    bob_client.post(reverse("take-over", args=[hold.pk]))
    alices_heartbeat = heartbeat(alice_client, hold).content.decode()

    assert (
        "Take this hold over?" in asked
        and '<strong><span class="person" title="alice@example.com">Alice Adams</span></strong> is deciding it since'
        in asked
    )
    assert Hold.objects.get(pk=hold.pk).claimed_by == bob
    assert (
        '<strong><span class="person" title="bob@example.com">Bob Brown</span></strong> is deciding this hold'
        in alices_heartbeat
    )
    assert claim_events(hold)[-2:] == [("claimed", "alice"), ("taken_over", "bob")]


def test_the_heartbeat_of_a_hold_decided_meanwhile_says_so_and_stops(alice, samples):
    hold = samples["h_12"]
    alice_client = signed_in(alice)
    open_hold(alice_client, hold)
    Hold.objects.filter(pk=hold.pk).update(status=Hold.Status.DECIDED, decided_by="bob@example.com")

    answer = heartbeat(alice_client, hold).content.decode()

    assert "can no longer be decided here" in answer
    assert "hx-trigger" not in answer  # the page stops its heartbeat


def test_claiming_a_closed_hold_claims_nothing(alice, samples):
    hold = samples["h_12"]
    Hold.objects.filter(pk=hold.pk).update(status=Hold.Status.EXPIRED)

    response = signed_in(alice).post(reverse("claim-hold", args=[hold.pk]))

    assert response.status_code == 302 and Hold.objects.get(pk=hold.pk).claimed_by is None


def test_presence_endpoints_need_a_post_and_the_reviewer_role(client, alice, samples):
    hold = samples["h_12"]
    urls = [reverse(name, args=[hold.pk]) for name in ("claim-hold", "hold-heartbeat", "leave-hold")]

    anonymous = [client.post(url).status_code for url in urls]
    client.force_login(alice)
    by_get = [client.get(url).status_code for url in urls]

    assert anonymous == [302, 302, 302]
    assert by_get == [405, 405, 405]
