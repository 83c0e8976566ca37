"""People are named one way everywhere, and each sees every time in the zone they chose, with the zone named."""

import re
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.template import Context, Template
from django.urls import reverse
from django.utils import timezone

from audit import events
from audit.models import AuditEvent, EventKind
from holds.models import Hold
from notifications import notify, sending, subscriptions
from notifications.models import Notification
from people import naming, zones
from people.models import Preference
from reviewqueue import readers, roles
from teams.scopes import viewer_of
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db

# Every <time> a page shows: the countdowns (time left, not a time of day) aside.
TIME_ELEMENT = re.compile(r"<time(?![^>]*class=\"(?:undo-)?countdown\")([^>]*)>(.*?)</time>", re.S)


def render(source: str, **context) -> str:
    return Template("{% load people %}" + source).render(Context(context))


@pytest.fixture
def in_winter():
    """The clock in December, before the samples are made: the zones' names these tests expect (CET, AEDT) are their
    winter names, and a hold's times, set from the clock, would otherwise take summer's from March on."""
    with time_machine.travel(datetime(2026, 12, 1, 12, tzinfo=UTC)):
        yield


def choose_zone(client, zone: str):
    return client.post(reverse("notification-preferences"), {"time_zone": zone})


def times_on(page: str) -> list[tuple[str, str]]:
    return TIME_ELEMENT.findall(page)


def assert_every_time_names_its_zone(page: str, abbreviation: str, zone: str):
    shown = times_on(page)
    assert shown, "the page shows no time"
    for attributes, text in shown:
        assert 'datetime="' in attributes, attributes
        assert 'title="' in attributes and f"({zone})" in attributes, attributes
        assert "data-relative" in attributes or text.endswith(f" {abbreviation}"), text


# Naming


def test_a_person_is_named_by_full_name_else_username(alice):
    nameless = make_user("carol")

    assert naming.name(alice) == "Alice Adams"
    assert naming.name(nameless) == "carol"
    assert naming.name(None) == "system"


def test_the_person_filter_puts_the_email_in_a_tooltip_and_escapes_the_name(alice):
    hostile = make_user("mallory", first_name="<b>Mal</b>")
    hostile.email = 'm"@example.com'

    assert (
        render("{{ user|person }}", user=alice) == '<span class="person" title="alice@example.com">Alice Adams</span>'
    )
    assert render("{{ user|person }}", user=hostile) == (
        '<span class="person" title="m&quot;@example.com">&lt;b&gt;Mal&lt;/b&gt;</span>'
    )


# The preference


def test_the_time_zone_is_the_sites_until_a_person_chooses_one(alice_client, alice, settings):
    settings.TIME_ZONE = "UTC"
    page = alice_client.get(reverse("notification-preferences")).content.decode()
    assert zones.zone_name_of(alice) == "UTC" and "<option selected>UTC</option>" in page

    response = choose_zone(alice_client, "Europe/Paris")

    assert response.status_code == 302
    assert Preference.objects.get(user=alice).time_zone == "Europe/Paris"
    assert (
        "<option selected>Europe/Paris</option>"
        in alice_client.get(reverse("notification-preferences")).content.decode()
    )


@pytest.mark.parametrize("hostile", ["Mars/Olympus_Mons", "../../etc/passwd", "europe/paris", "", "x" * 5000])
def test_a_zone_that_is_not_one_is_a_field_error_and_nothing_is_saved(alice_client, alice, hostile):
    response = choose_zone(alice_client, hostile)

    page = response.content.decode()
    assert response.status_code == 400
    assert 'aria-invalid="true"' in page and 'id="time-zone-error"' in page
    assert "Time zone: " in page and not Preference.objects.filter(user=alice).exists()


def test_a_nul_in_the_zone_is_refused_before_the_form(alice_client, alice):
    assert choose_zone(alice_client, "Europe/Paris\x00").status_code == 400
    assert not Preference.objects.filter(user=alice).exists()


def test_the_reader_and_the_model_refuse_the_same_zones(alice):
    with pytest.raises(readers.BadValue):
        readers.time_zone("Europe/Atlantis", "tz")
    assert readers.time_zone(" Asia/Tokyo ", "tz") == "Asia/Tokyo"

    with pytest.raises(Exception, match="not a time zone"):
        Preference(user=alice, time_zone="Europe/Atlantis").full_clean()


def test_saving_the_notification_choices_leaves_the_zone_alone(alice_client, alice):
    choose_zone(alice_client, "Asia/Tokyo")

    alice_client.post(reverse("notification-preferences"), {"expiring_soon": ["in_app"]})

    assert zones.zone_name_of(alice) == "Asia/Tokyo"


# The middleware and the pages


def test_each_request_is_shown_in_the_signed_in_persons_zone(client, alice, bob):
    Preference.objects.create(user=alice, time_zone="America/New_York")
    client.force_login(alice)
    alices = client.get(reverse("notification-preferences")).content.decode()
    client.force_login(bob)
    bobs = client.get(reverse("notification-preferences")).content.decode()

    assert '<body data-time-zone="America/New_York"' in alices
    assert '<body data-time-zone="UTC"' in bobs
    assert timezone.get_current_timezone_name() == "UTC"  # nothing leaks out of a request


def test_every_time_on_the_hold_page_names_the_zone_chosen(in_winter, alice_client, samples):
    choose_zone(alice_client, "Europe/Paris")
    hold = samples["h_12"]

    page = alice_client.get(reverse("hold", args=[hold.pk])).content.decode()

    assert_every_time_names_its_zone(page, "CET", "Europe/Paris")
    paris = timezone.localtime(hold.created_at, zones.ZoneInfo("Europe/Paris"))
    assert f"{paris:%Y-%m-%d %H:%M:%S} CET</time>" in page


def test_every_time_on_the_audit_list_names_the_zone_chosen(client, alice, samples):
    auditor = make_user("ada", roles.AUDITORS)
    client.force_login(auditor)
    choose_zone(client, "Asia/Kolkata")
    events.record(EventKind.CLAIMED, actor=alice, hold=samples["h_12"])

    page = client.get(reverse("audit:list"), {"view": "all"}).content.decode()

    assert_every_time_names_its_zone(page, "IST", "Asia/Kolkata")
    claimed = AuditEvent.objects.filter(kind=EventKind.CLAIMED).get()
    kolkata = timezone.localtime(claimed.at, zones.ZoneInfo("Asia/Kolkata"))
    assert f">{kolkata:%Y-%m-%d %H:%M:%S} IST</time>" in page


def test_a_relative_time_carries_the_exact_time_for_the_script_and_the_tooltip(in_winter, alice):
    at = timezone.now() - timedelta(minutes=3)
    with timezone.override(zones.ZoneInfo("Europe/Paris")):
        shown = render("{{ at|relative_time }}", at=at)

    assert shown.startswith(f'<time datetime="{at.isoformat()}" title="')
    assert "CET (Europe/Paris)" in shown and "data-relative>3\xa0minutes ago</time>" in shown


# Emails


def test_emails_write_times_in_each_recipients_own_zone(samples, audrey, mailoutbox):
    other_auditor = make_user("otto", roles.AUDITORS)
    Preference.objects.create(user=audrey, time_zone="Asia/Tokyo")
    hold = samples["h_12"]
    Hold.objects.filter(pk=hold.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    hold.refresh_from_db()

    notify.expired([hold])
    for email in Notification.objects.filter(event="expired", channel=Notification.Channel.EMAIL):
        sending.send(email.pk)

    tokyo = f"{timezone.localtime(hold.expires_at, zones.ZoneInfo('Asia/Tokyo')):%Y-%m-%d %H:%M} JST"
    utc = f"{timezone.localtime(hold.expires_at, zones.ZoneInfo('UTC')):%Y-%m-%d %H:%M} UTC"
    sent = {message.to[0]: message.body for message in mailoutbox}
    assert tokyo in sent[audrey.email] and utc in sent[other_auditor.email]


def test_a_new_holds_digest_lists_expiries_in_each_reviewers_zone(in_winter, samples, alice, bob):
    Preference.objects.create(user=alice, time_zone="Australia/Sydney")
    for reviewer in (alice, bob):
        subscriptions.save_preferences(viewer_of(reviewer), {"new_holds": ["in_app"]})  # a digest is opt-in
    waiting = [hold for hold in Hold.objects.filter(status=Hold.Status.OPEN, expires_at__isnull=False).order_by("pk")]

    notify.new_holds_digest(waiting, timezone.now())

    first_expiry = waiting[0].expires_at
    alices = Notification.objects.get(event="new_holds", user=alice, channel=Notification.Channel.IN_APP)
    bobs = Notification.objects.get(event="new_holds", user=bob, channel=Notification.Channel.IN_APP)
    sydney = timezone.localtime(first_expiry, zones.ZoneInfo("Australia/Sydney"))
    assert alices.holds[0]["expires_at"] == f"{sydney:%Y-%m-%d %H:%M} AEDT"
    assert bobs.holds[0]["expires_at"] == f"{first_expiry:%Y-%m-%d %H:%M} UTC"
    assert f"expires {sydney:%Y-%m-%d %H:%M} AEDT" in alices.body
