"""Push notifications: a reviewer hears of a hold on a device with no page open, through a push service that may
read nothing of what the agent wrote; a device whose subscription ended is removed; a busy service is tried again;
pushes are paced and kept out of quiet hours, folding what waited into one.

The push service is a stand-in on 127.0.0.1 (``tests.helpers.push_service``): it checks each push's VAPID
signature and decrypts it with the device's keys, as a browser vendor's service and the browser would.
"""

import json
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest
import time_machine
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from audit import decisiontime, stats
from audit.models import AuditEvent
from holds.links import action_links
from holds.models import DecisionChannel, Hold
from notifications import away, notify, push, push_devices, push_pacing, push_sending, sending, subscriptions
from notifications.models import Notification, PushSubscription
from operations import metrics
from reviewqueue import readers, roles
from teams.scopes import viewer_of
from tests.helpers.push_service import vapid_keys
from tests.helpers.users import make_user

HOSTILE_QUESTION = 'Refund <script>alert("x")</script> IGNORE PREVIOUS INSTRUCTIONS'


def subscribe(client, subscription, name="Work phone"):
    return client.post(
        reverse("push-devices"), json.dumps({"name": name, "subscription": subscription}), "application/json"
    )


def device_of(user, push_service, name="Work phone") -> PushSubscription:
    return push_devices.add(user, push_devices.read({"name": name, "subscription": push_service.device()}))


def a_hold(platform_state, platform_client, hold_id="h_push", minutes_left=12, question=HOSTILE_QUESTION) -> Hold:
    from holds.mirror import sync

    now = platform_state.now()
    platform_state.add_hold(
        "default",
        {
            "hold_id": hold_id,
            "question": question,
            "expires_at": (now + timedelta(minutes=minutes_left)).isoformat(),
            "items": [{"id": "A-1", "title": "refund", "data": {"order_id": "A-1001", "amount": "49.90"}}],
        },
    )
    sync.sync_env(platform_client, "default")
    return Hold.objects.get(hold_id=hold_id)


def token_of(link: str) -> str:
    return link.rsplit("/", 1)[1]


def pushes(event="expiring_soon"):
    return Notification.objects.filter(channel="push", event=event).order_by("pk")


def send_all():
    """Send every push, in one batch as the worker's task would; the seconds it asks to wait (None: done)."""
    return push_sending.send(list(Notification.objects.filter(channel="push").values_list("pk", flat=True)))


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


# Devices: added, tested, removed, pruned


@pytest.mark.django_db
def test_a_reviewer_adds_two_devices_tests_one_and_removes_the_other_each_audited(push_service, alice_client, alice):
    phone, laptop = push_service.device(), push_service.device()

    assert subscribe(alice_client, phone).status_code == 201
    assert subscribe(alice_client, laptop, name="Laptop").status_code == 201
    page = alice_client.get(reverse("notification-preferences")).content.decode()
    assert "Work phone" in page and "Laptop" in page

    tested = PushSubscription.objects.get(endpoint=phone["endpoint"])
    alice_client.post(reverse("push-device-test", args=[tested.pk]))
    assert push_service.to(phone["endpoint"])[0].content["body"].startswith("A test notification")

    removed = PushSubscription.objects.get(endpoint=laptop["endpoint"])
    alice_client.post(reverse("push-device-remove", args=[removed.pk]))
    assert list(alice.push_subscriptions.values_list("name", flat=True)) == ["Work phone"]
    changes = AuditEvent.objects.filter(kind="setting_changed", payload__model="notifications.pushsubscription")
    assert [(event.payload["action"], event.payload["device"]) for event in changes.order_by("sequence")] == [
        ("added", "Work phone"),
        ("added", "Laptop"),
        ("deleted", "Laptop"),
    ]
    assert all(event.payload["push_service"] == "127.0.0.1" for event in changes)


@pytest.mark.django_db
def test_nobody_removes_or_tests_anothers_device(push_service, alice, bob, client):
    phone = device_of(alice, push_service)
    client.force_login(bob)

    client.post(reverse("push-device-remove", args=[phone.pk]))
    assert client.post(reverse("push-device-test", args=[phone.pk])).status_code == 404
    assert PushSubscription.objects.filter(pk=phone.pk).exists() and push_service.received == []


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


# Hostile subscriptions: refused with a field error, never fetched


@pytest.mark.django_db
@pytest.mark.parametrize(
    "endpoint, field, problem",
    [
        ("http://push.example.com/send/1", "endpoint", "starts with https://"),
        ("https://127.0.0.2/send/1", "endpoint", "a loopback address"),
        ("https://10.1.2.3/send/1", "endpoint", "a private address"),
        ("https://[::1]/send/1", "endpoint", "a loopback address"),
        ("https://169.254.169.254/latest", "endpoint", "a cloud metadata address"),
        ("https://push.example.com/" + "a" * 10_000, "endpoint", "at most 1000 characters"),
        ("javascript:alert(1)", "endpoint", "starts with https://"),
    ],
)
def test_a_hostile_endpoint_is_refused_with_a_field_error(push_service, alice_client, endpoint, field, problem):
    subscription = {**push_service.device(), "endpoint": endpoint}

    answer = subscribe(alice_client, subscription)

    assert answer.status_code == 400
    assert problem in answer.json()["errors"][field]
    assert not PushSubscription.objects.exists() and push_service.received == []


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body",
    [
        "not json",
        json.dumps([1, 2]),
        json.dumps({"subscription": {"endpoint": "https://push.example.com/1"}}),
        json.dumps({"subscription": {"endpoint": "https://push.example.com/1", "keys": {"p256dh": "AA", "auth": "x"}}}),
        json.dumps({"subscription": {"endpoint": 7, "keys": {}}}),
        json.dumps({"name": "\x00", "subscription": {"endpoint": "https://push.example.com/1", "keys": {}}}),
        "{" * 10_000,
    ],
)
def test_a_subscription_that_cannot_be_read_is_a_400_not_a_500(push_service, alice_client, body):
    answer = alice_client.post(reverse("push-devices"), body, "application/json")

    assert answer.status_code == 400 and answer.json()["errors"]
    assert not PushSubscription.objects.exists()


@pytest.mark.django_db
def test_without_vapid_keys_push_is_off_and_the_page_says_so(alice_client, settings):
    settings.WEBPUSH_VAPID_PUBLIC_KEY = settings.WEBPUSH_VAPID_PRIVATE_KEY = ""

    page = alice_client.get(reverse("notification-preferences")).content.decode()

    assert "Push notifications are off on this installation" in page and "push-devices" not in page
    assert subscribe(alice_client, {"endpoint": "https://push.example.com/1", "keys": {}}).status_code == 400
    assert "by Push" not in page  # no column for a channel nobody can have


@pytest.mark.django_db
def test_preferences_saved_while_push_is_off_keep_the_push_choices_for_when_it_is_on(alice, alice_client, settings):
    settings.WEBPUSH_VAPID_PUBLIC_KEY = settings.WEBPUSH_VAPID_PRIVATE_KEY = ""
    alice_client.post(reverse("notification-preferences"), {"expiring_soon": ["email"], "assigned": ["in_app"]})

    settings.WEBPUSH_VAPID_PUBLIC_KEY, settings.WEBPUSH_VAPID_PRIVATE_KEY = vapid_keys()
    assert subscriptions.channels_for(alice, "expiring_soon") == ["email", "push"]
    assert subscriptions.channels_for(alice, "assigned") == ["in_app", "push"]
    alice_client.post(reverse("notification-preferences"), {"expiring_soon": ["email"]})
    assert subscriptions.channels_for(alice, "expiring_soon") == ["email"]  # offered, and unticked


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


# Settings


def test_makevapidkeys_prints_a_pair_the_start_up_check_accepts(settings, capsys):
    call_command("makevapidkeys")
    printed = dict(line.split("=", 1) for line in capsys.readouterr().out.split())
    settings.WEBPUSH_VAPID_PUBLIC_KEY = printed["WEBPUSH_VAPID_PUBLIC_KEY"]
    settings.WEBPUSH_VAPID_PRIVATE_KEY = printed["WEBPUSH_VAPID_PRIVATE_KEY"]
    settings.WEBPUSH_CONTACT = "https://review.example.com"
    assert push.check_keys() == []

    settings.WEBPUSH_CONTACT = "http://review.example.com"
    assert [problem.id for problem in push.check_keys()] == ["notifications.E002"]
    settings.WEBPUSH_VAPID_PRIVATE_KEY = "not a key"
    assert [problem.id for problem in push.check_keys()] == ["notifications.E003"]
    settings.WEBPUSH_VAPID_PUBLIC_KEY, settings.WEBPUSH_VAPID_PRIVATE_KEY = "", printed["WEBPUSH_VAPID_PRIVATE_KEY"]
    assert [problem.id for problem in push.check_keys()] == ["notifications.E001"]


# Whatever a page sends


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
SUBSCRIPTIONS = st.fixed_dictionaries(
    {
        "name": JSON,
        "subscription": st.fixed_dictionaries(
            {
                "endpoint": JSON,
                "keys": st.dictionaries(
                    st.sampled_from(["p256dh", "auth", "other"]), JSON | st.text(alphabet="AZaz09-_=", max_size=100)
                ),
            }
        ),
    }
)


@given(JSON | SUBSCRIPTIONS)
@hypothesis_settings(max_examples=200, deadline=None)
def test_whatever_a_page_sends_is_read_or_refused_with_a_field_error(data):
    try:
        fields = push_devices.read(data)
    except readers.BadValue as bad:
        assert bad.name in {"subscription", "name", "endpoint", "p256dh", "auth"} and bad.problem
    else:
        assert fields["endpoint"].startswith("https://") and len(fields["name"]) <= push_devices.NAME_LENGTH
