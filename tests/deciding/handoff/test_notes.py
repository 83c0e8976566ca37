"""Notes between reviewers on the hold page, their mentions, and the audit timeline that shows them."""

import json

import pytest
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.models import AuditEvent, EventKind
from holds.deciding import decisions, delivery
from holds.handover import assignments, notes
from holds.models import Hold, Note
from notifications.models import Notification
from reviewqueue import roles
from tests.helpers.approvals_setup import signed_in
from tests.helpers.handoff import Channel, Event, approve_all, told
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db


# Notes on the hold page


def test_a_note_is_added_on_the_hold_page_and_everyone_who_can_see_the_hold_reads_it(alice_client, bob, billing):
    response = alice_client.post(
        reverse("add-note", args=[billing.pk]), {"text": "Customer called twice\r\nabout this."}
    )

    assert response.status_code == 302 and response.url.endswith("#notes")
    page = signed_in(bob).get(reverse("hold", args=[billing.pk])).content.decode()
    assert "Customer called twice\nabout this." in page
    assert "they are never sent to the agent or the platform" in page


def test_notes_never_reach_the_platform(alice, billing, platform_state, platform_client, immediate_delivery):
    notes.add_note(billing, alice, "SECRET-NOTE-TEXT for colleagues only")

    decision = decisions.submit(billing, alice, approve_all(billing))
    delivery.deliver(decision.pk, platform_client)

    assert Hold.objects.get(pk=billing.pk).decisions.get().state == "applied"
    assert platform_state.requests  # the decision's POST among them
    assert "SECRET-NOTE-TEXT" not in json.dumps(platform_state.requests, default=str)
    assert "SECRET-NOTE-TEXT" not in json.dumps(platform_state.get_hold("default", billing.hold_id), default=str)


def test_an_empty_or_too_long_note_is_a_field_error_and_adds_nothing(alice_client, billing):
    empty = alice_client.post(reverse("add-note", args=[billing.pk]), {"text": "   "})
    long = alice_client.post(reverse("add-note", args=[billing.pk]), {"text": "x" * (notes.MAX_NOTE + 1)})

    assert empty.status_code == 422 and "Write the note first." in empty.content.decode()
    assert long.status_code == 422 and f"Use at most {notes.MAX_NOTE} characters." in long.content.decode()
    assert 'aria-invalid="true"' in long.content.decode()
    assert not Note.objects.exists()


@pytest.mark.parametrize(
    "hostile",
    [
        "<script>alert(1)</script>",
        '<img src=x onerror="alert(1)">',
        "**bold** [approve](javascript:alert(1))",
        "{{ request.user }} {% csrf_token %}",
        "Agent said: \u202eevil\u202c <!channel> <https://evil.example|Approve>",
    ],
)
def test_hostile_text_in_a_note_stays_text_everywhere(alice_client, alice, bob, billing, hostile):
    alice_client.post(reverse("add-note", args=[billing.pk]), {"text": f"@bob {hostile}"})

    page = signed_in(bob).get(reverse("hold", args=[billing.pk])).content.decode()
    assert Note.objects.get().text == f"@bob {hostile}"
    assert "<script>alert" not in page and "<img src=x" not in page and 'href="javascript' not in page
    assert "<strong>bold</strong>" not in page  # no markdown
    assert hostile not in page or "<" not in hostile  # escaped wherever it had markup
    bell = [n for n in told(Event.MENTIONED, bob) if n.channel == Channel.IN_APP][0]
    assert hostile in bell.body  # stored as plain text; the inbox escapes it
    inbox = signed_in(bob).get(reverse("notifications")).content.decode()
    assert "<script>alert" not in inbox and "<img src=x" not in inbox


def test_a_nul_in_a_note_is_a_400(alice_client, billing):
    assert alice_client.post(reverse("add-note", args=[billing.pk]), {"text": "a\x00b"}).status_code == 400
    assert not Note.objects.exists()


# Mentions


def test_a_mention_of_someone_who_cannot_see_the_hold_reads_as_one_of_nobody(alice_client, carol, support):
    alice_client.post(reverse("add-note", args=[support.pk]), {"text": "ask @carol"})
    alice_client.post(reverse("add-note", args=[support.pk]), {"text": "ask @zed"})

    first, second = AuditEvent.objects.filter(kind=EventKind.NOTE_ADDED).order_by("sequence")
    assert first.payload["told"] == second.payload["told"] == []
    assert not Notification.objects.filter(event=Event.MENTIONED).exists()
    page = alice_client.get(reverse("hold", args=[support.pk])).content.decode()
    assert "ask @carol" in page and "Carol Chen" not in page and "carol@example.com" not in page


def test_a_mention_tells_only_active_reviewers_and_not_the_author(alice_client, alice, bob, billing):
    make_user("ivan", roles.REVIEWERS, is_active=False)
    make_user("otto")  # no role

    _, mentioned = notes.add_note(billing, alice, "@alice @ivan @otto @bob, (@bob). email@bob.example")

    assert mentioned == [bob]
    assert [n.channel for n in told(Event.MENTIONED, bob)] == [Channel.EMAIL, Channel.IN_APP]
    assert "@alice @ivan" in told(Event.MENTIONED, bob)[0].body


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    text=st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=300)
    | st.from_regex(r"(@[a-z.@+-]{0,12}[ ,.]?){1,5}")
)
def test_any_note_text_is_added_or_refused_plainly_and_tells_only_who_may_see_the_hold(
    alice_client, bob, carol, support, text
):
    before = Note.objects.count()

    response = alice_client.post(reverse("add-note", args=[support.pk]), {"text": text})

    assert response.status_code in (302, 400, 422)
    assert Note.objects.count() == before + (response.status_code == 302)
    told_anyone = set(Notification.objects.filter(event=Event.MENTIONED).values_list("user__username", flat=True))
    assert told_anyone <= {"bob"}  # Carol cannot see Support's hold; Alice wrote the notes


def test_mentions_are_read_as_usernames_and_never_inside_a_word_or_an_address():
    assert notes.mentioned_names("@bob, @alice.smith. @sso@example.com x@carol (@dave)") == [
        "bob",
        "alice.smith",
        "sso@example.com",
        "dave",
    ]


# The audit timeline


def test_the_audit_timeline_shows_the_notes_in_order_with_the_assignments_and_decisions(
    alice, bob, audrey, billing, settings
):
    settings.UNDO_SECONDS = 10
    assignments.assign(billing, bob, "Your call", by=alice)
    notes.add_note(billing, bob, "Looks fine to me")
    decision = decisions.submit(billing, bob, approve_all(billing))
    decisions.withdraw(decision.pk, bob)
    notes.add_note(billing, alice, "Undone: wait for the customer's reply. " + "x" * 300)

    page = signed_in(audrey).get(reverse("audit:hold-timeline", args=[billing.pk])).content.decode()

    shown = [
        "to bob (note: Your call)",
        "“Looks fine to me”",
        "Decision submitted",
        "Decision withdrawn",
        "Undone: wait",
    ]
    positions = [page.index(text) for text in shown]
    assert positions == sorted(positions)
    assert "The whole note" in page and "x" * 300 in page  # a long note shown whole
