"""A person's devices for push notifications: added, tested and removed, each audited; whatever a page sends as a
subscription read strictly (a field error, never a 500, never fetched); push off without VAPID keys, and the keys
themselves checked at start.
"""

import json

import pytest
from django.core.management import call_command
from django.urls import reverse
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from audit.models import AuditEvent
from notifications import push, push_devices, subscriptions
from notifications.models import PushSubscription
from reviewqueue import readers
from tests.helpers.push_service import vapid_keys
from tests.helpers.pushing import NOT_A_POINT, device_of, subscribe

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
def test_a_key_off_the_curve_is_refused_and_an_idna_host_is_no_500(push_service, alice_client):
    off_the_curve = push_service.device()
    off_the_curve["keys"]["p256dh"] = NOT_A_POINT

    assert subscribe(alice_client, off_the_curve).json()["errors"] == {
        "p256dh": "is not a P-256 public key, as a browser gives"
    }
    answer = subscribe(alice_client, {**push_service.device(), "endpoint": "https://xn--a.example/x"})
    assert answer.status_code in (201, 400) and "errors" in answer.json() or answer.json()["name"]


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
