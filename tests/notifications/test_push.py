"""Push notifications: a reviewer hears of a hold on a device with no page open, through a push service that may
read nothing of what the agent wrote; a device whose subscription ended is removed; a busy service is tried again;
pushes are paced and kept out of quiet hours, folding what waited into one.

The push service is a stand-in on 127.0.0.1 (``tests.helpers.push_service``): it checks each push's VAPID
signature and decrypts it with the device's keys, as a browser vendor's service and the browser would.
"""

import json
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from audit import decisiontime, stats
from audit.models import AuditEvent
from holds import lifecycle
from holds.links import action_links
from holds.models import DecisionChannel, Hold
from notifications import away, hold_links, notify, push_devices, push_pacing, sending
from notifications.models import PushSubscription
from operations import metrics
from reviewqueue import roles
from teams.scopes import viewer_of
from tests.helpers.pushing import NOT_A_POINT, a_hold, device_of, pushes, send_all, token_of
from tests.helpers.users import make_user

# What a push carries


@pytest.mark.django_db
def test_a_reminder_reaches_the_device_signed_encrypted_and_free_of_agent_text(
    push_service, platform_state, platform_client, alice
):
    phone = device_of(alice, push_service)
    hold = a_hold(platform_state, platform_client)

    notify.expiring_soon([hold], timezone.now())
    send_all()

    [received] = push_service.to(phone.endpoint)
    content = received.content
    assert content["title"] == f"Expiring soon: hold {hold.pk}"
    assert hold.agent in content["body"] and "49.90" in content["body"] and "min left" in content["body"]
    assert "Refund" not in json.dumps(content) and "script" not in json.dumps(content)  # no agent text by default
    assert received.claims["sub"] == "mailto:operators@example.com"
    assert received.headers["Urgency"] == "high" and 0 < int(received.headers["TTL"]) <= 12 * 60
    approve = action_links.read(token_of(content["links"]["approve"]))
    assert (approve.hold_pk, approve.recipient_pk, approve.channel) == (hold.pk, alice.pk, DecisionChannel.PUSH_LINK)
    assert pushes().get().status == "sent"


@pytest.mark.django_db
def test_with_the_summary_setting_the_question_comes_too_cut_short(
    push_service, platform_state, platform_client, alice, settings
):
    settings.WEBPUSH_PAYLOAD = "summary"
    phone = device_of(alice, push_service)
    hold = a_hold(platform_state, platform_client, question="Refund 49.90 on A-1001? " + "x" * 500)

    notify.expiring_soon([hold], timezone.now())
    send_all()

    body = push_service.to(phone.endpoint)[0].content["body"]
    assert body.startswith("Refund 49.90 on A-1001? xxx") and "…" in body and len(body) < 300


@pytest.mark.django_db
def test_a_decision_through_a_pushs_approve_counts_as_made_through_push(
    push_service, platform_state, platform_client, alice
):
    phone = device_of(alice, push_service)
    hold = a_hold(platform_state, platform_client)
    notify.expiring_soon([hold], timezone.now())
    send_all()
    token = token_of(push_service.to(phone.endpoint)[0].content["links"]["approve"])

    decision = action_links.send(token, viewer_of(alice))

    assert decision.hold_id == hold.pk
    submitted = AuditEvent.objects.get(kind="decision_submitted", hold_record=hold)
    assert submitted.payload["channel"] == DecisionChannel.PUSH_LINK
    with pytest.raises(action_links.Refused):  # bound to Alice: nobody else may use it
        action_links.opened(token, viewer_of(make_user("bob", roles.REVIEWERS)))
    times = decisiontime.compute(stats.Period.from_query({}, decision.created_at.date()))
    assert [(row.label, row.count) for row in times.channels] == [("push notification", 1)]


@pytest.mark.django_db
def test_an_amount_not_read_for_certain_is_left_out_as_the_agents_own_text(
    push_service, platform_state, platform_client, alice
):
    phone = device_of(alice, push_service)
    hold = a_hold(platform_state, platform_client, amount="SECRET Jane Doe 123")

    notify.expiring_soon([hold], timezone.now())
    send_all()

    assert "SECRET" not in json.dumps(push_service.to(phone.endpoint)[0].content)


@pytest.mark.django_db
@pytest.mark.parametrize("status", [404, 410])
def test_a_device_whose_subscription_ended_is_pruned_and_counted(
    push_service, platform_state, platform_client, alice, status
):
    phone = device_of(alice, push_service)
    push_service.answer(phone.endpoint, status)
    hold = a_hold(platform_state, platform_client)

    notify.expiring_soon([hold], timezone.now())
    send_all()

    assert not PushSubscription.objects.filter(pk=phone.pk).exists()
    assert pushes().get().status == "pruned"
    removal = AuditEvent.objects.filter(kind="setting_changed", payload__action="deleted").get()
    assert f"the push service answered {status}" in removal.payload["message"] and removal.actor is None
    pruned = next(family for family in metrics.notifications() if family.name.endswith("push_pruned"))
    assert pruned.samples[0].value == 1


@pytest.mark.django_db
@pytest.mark.parametrize("status", [429, 503])
def test_a_busy_push_service_is_tried_again_with_backoff(push_service, platform_state, platform_client, alice, status):
    phone = device_of(alice, push_service)
    push_service.answer(phone.endpoint, status)
    hold = a_hold(platform_state, platform_client)
    notify.expiring_soon([hold], timezone.now())

    wait = send_all()
    row = pushes().get()
    assert wait > 0 and row.status == "pending" and row.attempts == 1
    assert row.last_error == f"push service answered {status}: unavailable"

    with time_machine.travel(timezone.now() + timedelta(seconds=wait + 1)):
        push_devices_paced_out(phone)
        send_all()
    assert pushes().get().status == "sent" and len(push_service.to(phone.endpoint)) == 1


def push_devices_paced_out(device):
    """The device's last push long enough ago that its pace is over (the moving clock's test of pace is its own)."""
    PushSubscription.objects.filter(pk=device.pk).update(last_pushed_at=None)


@pytest.mark.django_db
def test_a_device_whose_key_no_browser_would_give_fails_alone_and_the_others_are_pushed(
    push_service, platform_state, platform_client, alice, bob
):
    broken = device_of(alice, push_service)
    PushSubscription.objects.filter(pk=broken.pk).update(p256dh=NOT_A_POINT)
    bobs = device_of(bob, push_service, name="Bob's phone")
    hold = a_hold(platform_state, platform_client)

    notify.expiring_soon([hold], timezone.now())
    send_all()

    assert len(push_service.to(bobs.endpoint)) == 1
    assert dict(pushes().values_list("push_subscription", "status")) == {broken.pk: "failed", bobs.pk: "sent"}


@pytest.mark.django_db
def test_a_hold_whose_push_cannot_be_written_fails_alone_and_the_other_holds_are_pushed(
    push_service, platform_state, platform_client, alice, bob, monkeypatch
):
    alices, bobs = device_of(alice, push_service), device_of(bob, push_service, name="Bob's phone")
    bad, good = (a_hold(platform_state, platform_client, hold_id) for hold_id in ("h_bad", "h_good"))
    lifecycle.claim(bad, alice)  # each reminder goes to its claimant alone: two pushes in one batch, one per device
    lifecycle.claim(good, bob)
    real = hold_links.amounts_of

    def failing_for_bad(hold, **options):  # a failure forced on one hold
        if hold.pk == bad.pk:
            raise RuntimeError("a failure forced on one hold")
        return real(hold, **options)

    monkeypatch.setattr(hold_links, "amounts_of", failing_for_bad)
    notify.expiring_soon([bad, good], timezone.now())
    send_all()

    assert push_service.to(alices.endpoint) == [] and len(push_service.to(bobs.endpoint)) == 1
    assert dict(pushes().values_list("hold__hold_id", "status")) == {"h_bad": "failed", "h_good": "sent"}


@pytest.mark.django_db
def test_pushes_folded_into_one_the_service_refused_for_now_wait_their_turn_not_a_lease(
    push_service, platform_state, platform_client, alice
):
    phone = device_of(alice, push_service)
    push_service.answer(phone.endpoint, 503)
    holds = [a_hold(platform_state, platform_client, f"h_{number}") for number in range(3)]

    notify.expiring_soon(holds, timezone.now())
    send_all()

    assert sorted(pushes().values_list("status", flat=True)) == ["pending"] * 3  # none left sending for 10 minutes


@pytest.mark.django_db
def test_a_browser_subscribed_by_someone_else_takes_nothing_meant_for_the_previous_owner(
    push_service, platform_state, platform_client, alice, bob
):
    subscription = push_service.device()
    push_devices.add(alice, push_devices.read({"subscription": subscription}))
    notify.expiring_soon([a_hold(platform_state, platform_client)], timezone.now())

    push_devices.add(bob, push_devices.read({"subscription": subscription}))
    send_all()

    assert push_service.to(subscription["endpoint"]) == []
    assert pushes().get(user=alice).status == "resolved"


@pytest.mark.django_db
def test_a_digest_push_whose_holds_all_left_the_queue_is_not_sent(
    push_service, platform_state, platform_client, alice, alice_client
):
    alice_client.post(reverse("notification-preferences"), {"new_holds": ["push"]})
    phone = device_of(alice, push_service)
    hold = a_hold(platform_state, platform_client)
    notify.new_holds_digest([hold], timezone.now())
    Hold.objects.filter(pk=hold.pk).update(status=Hold.Status.CANCELLED)  # what the platform said meanwhile

    send_all()

    assert push_service.to(phone.endpoint) == []
    assert pushes("new_holds").get().last_error == "" and pushes("new_holds").get().status == "resolved"


# Pace and quiet hours, on a moving clock


@pytest.mark.django_db
def test_pushes_are_paced_and_what_waited_folds_into_one(push_service, platform_state, platform_client, alice):
    phone = device_of(alice, push_service)
    holds = [a_hold(platform_state, platform_client, f"h_{number}") for number in range(4)]
    start = timezone.now()

    with time_machine.travel(start, tick=False) as clock:
        notify.expiring_soon(holds[:1], timezone.now())
        send_all()
        clock.shift(timedelta(seconds=5))
        notify.expiring_soon(holds[1:], timezone.now())
        waits = send_all()
        assert len(push_service.to(phone.endpoint)) == 1  # the first at once, the others wait for the pace
        assert waits == pytest.approx(25.0)
        clock.shift(timedelta(seconds=25))
        send_all()

    first, second = push_service.to(phone.endpoint)
    assert first.content["hold"] == holds[0].pk
    assert second.content["body"].endswith("2 more holds waiting")
    assert sorted(pushes().values_list("status", flat=True)) == ["folded", "folded", "sent", "sent"]


@pytest.mark.django_db
def test_nothing_is_pushed_in_quiet_hours_and_what_came_arrives_as_one_push_when_they_end(
    push_service, platform_state, platform_client, alice, alice_client
):
    alice_client.post(reverse("notification-preferences"), {"time_zone": "Europe/Paris"})
    alice_client.post(reverse("notification-preferences"), {"quiet_from": "22:00", "quiet_until": "07:00"})
    phone = device_of(alice, push_service)
    paris = ZoneInfo("Europe/Paris")
    night = datetime(2026, 12, 7, 23, 30, tzinfo=paris)

    with time_machine.travel(night, tick=False) as clock:
        holds = [a_hold(platform_state, platform_client, f"h_{number}", minutes_left=600) for number in range(2)]
        notify.expiring_soon(holds, timezone.now())
        assert send_all() is None and push_service.received == []
        assert set(pushes().values_list("next_attempt_at", flat=True)) == {datetime(2026, 12, 8, 7, 0, tzinfo=paris)}
        clock.move_to(datetime(2026, 12, 8, 7, 0, 20, tzinfo=paris))
        assert set(pushes().values_list("pk", flat=True)) <= set(sending.due_for_requeue())  # as beat's re-queue
        send_all()

    [morning] = push_service.to(phone.endpoint)
    assert morning.content["body"].endswith("1 more hold waiting")


@pytest.mark.parametrize(
    "start, end, local, ends",
    [
        (time(22), time(7), datetime(2026, 3, 1, 23, 0), datetime(2026, 3, 2, 7, 0)),
        (time(22), time(7), datetime(2026, 3, 2, 6, 59), datetime(2026, 3, 2, 7, 0)),
        (time(22), time(7), datetime(2026, 3, 2, 7, 0), None),
        (time(22), time(7), datetime(2026, 3, 2, 21, 59), None),
        (time(12), time(14), datetime(2026, 3, 2, 13, 0), datetime(2026, 3, 2, 14, 0)),
        (time(12), time(14), datetime(2026, 3, 2, 14, 0), None),
        (time(9), time(9), datetime(2026, 3, 2, 9, 0), None),
    ],
)
def test_quiet_hours_end_at_their_end_across_midnight(start, end, local, ends):
    zone = ZoneInfo("America/New_York")
    expected = ends.replace(tzinfo=zone) if ends else None
    assert push_pacing.end_of_quiet(start, end, local.replace(tzinfo=zone)) == expected


def test_quiet_hours_ending_in_the_hour_a_clock_goes_back_end_after_now_at_its_second_pass():
    zone = ZoneInfo("America/New_York")
    second_pass = datetime(2026, 11, 1, 6, 10, tzinfo=UTC).astimezone(zone)  # 01:10 EST, after 01:10 EDT

    ends = push_pacing.end_of_quiet(time(22), time(1, 30), second_pass)

    assert ends.astimezone(UTC) == datetime(2026, 11, 1, 6, 30, tzinfo=UTC)


@pytest.mark.django_db
def test_the_quiet_hours_form_refuses_half_a_range_with_a_field_error(push_service, alice_client):
    answer = alice_client.post(reverse("notification-preferences"), {"quiet_from": "22:00", "quiet_until": ""})

    assert answer.status_code == 400 and "give both times, or neither" in answer.content.decode()
    answer = alice_client.post(reverse("notification-preferences"), {"quiet_from": "25:99", "quiet_until": "7"})
    assert answer.status_code == 400 and "a time such as 22:00 is needed" in answer.content.decode()


# Away, and the events a person chose


@pytest.mark.django_db
def test_while_away_the_delegates_device_is_told_instead(push_service, platform_state, platform_client, alice, bob):
    alices, bobs = device_of(alice, push_service), device_of(bob, push_service, name="Bob's phone")
    away.save(alice, timezone.now() + timedelta(days=1), bob, by=alice)
    hold = a_hold(platform_state, platform_client)

    notify.expiring_soon([hold], timezone.now())  # to every reviewer: Bob is told once, for himself
    send_all()

    assert push_service.to(alices.endpoint) == [] and len(push_service.to(bobs.endpoint)) == 1
