"""System notifications from an open tab: the bell's fragment names the newest unread message worth one (a hold
handed to the person, about to expire or escalated to them), as text; a full page's bell names none, so pages cost
no query for it. The browser's side is tested in tests/browser/test_browser_desktop_notifications.py."""

import re

import pytest
from django.urls import reverse
from django.utils.html import escape

from holds.handover import assignments
from notifications.models import Notification
from tests.helpers.users import add_hold

pytestmark = pytest.mark.django_db


def desktop_attributes(page: str) -> dict[str, str]:
    bell = re.search(r'<a id="bell"[^>]*>', page)[0]
    return dict(re.findall(r'data-desktop-(\w+)="([^"]*)"', bell))


def test_the_bells_fragment_names_the_newest_hold_handed_to_the_person(
    alice_client, alice, bob, platform_state, platform_client
):
    first = add_hold(platform_state, platform_client, "support-agno", question="First <b>refund</b>?")
    second = add_hold(platform_state, platform_client, "support-agno", question='Second "refund"?')
    assignments.assign(first, alice, "", by=bob)
    assignments.assign(second, alice, "", by=bob)
    newest = Notification.objects.filter(user=alice, channel="in_app", hold=second).get()

    named = desktop_attributes(alice_client.get(reverse("notification-bell")).content.decode())

    assert named["id"] == str(newest.pk)
    assert named["title"] == escape(newest.title)  # agent text, as text
    assert named["link"] == newest.link


def test_read_messages_other_events_and_whole_pages_name_none(
    alice_client, alice, bob, platform_state, platform_client
):
    hold = add_hold(platform_state, platform_client, "support-agno")
    assignments.assign(hold, alice, "", by=bob)
    whole_page = alice_client.get(reverse("queue")).content.decode()
    Notification.objects.filter(user=alice).update(read_at=hold.first_seen_at)
    read = alice_client.get(reverse("notification-bell")).content.decode()
    Notification.objects.filter(user=alice).update(read_at=None, event=Notification.Event.NOT_APPLIED)
    other_event = alice_client.get(reverse("notification-bell")).content.decode()

    assert desktop_attributes(whole_page) == desktop_attributes(read) == desktop_attributes(other_event) == {}
    assert 'class="bell unread"' in whole_page and 'class="bell unread"' in other_event  # the bell itself counts them


def test_the_preferences_page_hands_the_newest_to_the_device_so_none_already_waiting_pops_up(
    alice_client, alice, bob, platform_state, platform_client
):
    hold = add_hold(platform_state, platform_client, "support-agno")
    assignments.assign(hold, alice, "", by=bob)
    newest = Notification.objects.get(user=alice, channel="in_app")

    page = alice_client.get(reverse("notification-preferences")).content.decode()

    assert f'id="desktop-notifications" data-newest="{newest.pk}"' in page
    assert "Notify me on this device" in page
