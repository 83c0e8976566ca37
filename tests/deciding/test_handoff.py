"""Handing holds to each other: assigning a hold to a person or a group with a note, and notes between reviewers.

Billing's agent ``billing-bot`` and Support's ``support-bot`` share the platform. Alice and Bob see every hold;
Carol reviews for Billing only, so Support's holds are out of her scope.
"""

import json
from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth.models import Group
from django.db import DatabaseError, transaction
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.models import AuditEvent, EventKind
from holds.deciding import decisions, delivery
from holds.deciding.decisions import ItemChoice
from holds.handover import assignments, notes
from holds.models import Assignment, Hold, Note
from holds.sweeps import expiry
from notifications.models import Notification, WebhookChannel
from reviewqueue import roles
from tests.helpers.users import add_hold, make_user, scoped_group
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.django_db

Event = Notification.Event
Channel = Notification.Channel


@pytest.fixture
def billing(platform_state, platform_client):
    return add_hold(platform_state, platform_client, "billing-bot", capability="refund")


@pytest.fixture
def support(platform_state, platform_client):
    return add_hold(platform_state, platform_client, "support-bot", capability="reply")


@pytest.fixture
def carol(db):
    carol = make_user("carol", roles.REVIEWERS, first_name="Carol", last_name="Chen")
    carol.groups.add(scoped_group("Billing", agent="billing-*"))
    return carol


@pytest.fixture
def alice_client(alice):
    client = Client()
    client.force_login(alice)
    return client


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def told(event: str, user) -> list[Notification]:
    return list(Notification.objects.filter(event=event, user=user).order_by("channel"))


def approve_all(hold: Hold) -> list[ItemChoice]:
    return [ItemChoice(item_id=item.item_id, action="approve") for item in hold.items.all()]


def queue_page(client, query: str = "") -> str:
    response = client.get(reverse("queue") + query)
    assert response.status_code == 200
    return response.content.decode()


def listed(client, query: str = "") -> list[int]:
    return [row.hold.pk for row in client.get(reverse("queue") + query).context["rows"]]


# Assigning


def test_assigning_a_hold_to_a_colleague_tells_them_and_audits_the_note(alice, bob, billing):
    assignment = assignments.assign(billing, bob, "Can you check the order history?", by=alice)

    assert assignments.current(billing) == assignment
    assert [n.channel for n in told(Event.ASSIGNED, bob)] == [Channel.EMAIL, Channel.IN_APP]
    assert "Can you check the order history?" in told(Event.ASSIGNED, bob)[0].body
    assert told(Event.ASSIGNED, alice) == []  # whoever assigns is not told of it
    event = AuditEvent.objects.get(kind=EventKind.ASSIGNED)
    assert (event.actor, event.payload["assignee"], event.payload["note"]) == (
        alice,
        "bob",
        "Can you check the order history?",
    )


def test_reassigning_ends_the_first_assignment_and_resolves_what_its_assignee_was_told(alice, bob, carol, billing):
    first = assignments.assign(billing, bob, "", by=alice)
    second = assignments.assign(billing, carol, "Carol knows this customer", by=bob)

    first.refresh_from_db()
    assert (first.ended_at is not None, first.ended_by) == (True, bob)
    assert assignments.current(billing) == second
    assert all(n.resolved_reason == "reassigned to carol" for n in told(Event.ASSIGNED, bob))
    assert AuditEvent.objects.get(kind=EventKind.REASSIGNED).payload["from"] == "bob"


def test_unassigning_ends_it_is_audited_and_resolves_the_message(alice, bob, billing):
    assignments.assign(billing, bob, "", by=alice)

    assert assignments.unassign(billing, alice, "Solved it myself")
    assert assignments.current(billing) is None
    assert all(n.resolved_at for n in told(Event.ASSIGNED, bob))
    assert AuditEvent.objects.get(kind=EventKind.UNASSIGNED).payload == {"from": "bob", "note": "Solved it myself"}
    assert not assignments.unassign(billing, alice)


def test_a_person_out_of_the_holds_scope_cannot_be_assigned_it(alice, carol, support):
    assert "carol" not in [choice.label for choice in assignments.choices([support], alice)]
    with pytest.raises(assignments.NotAssignable):
        assignments.assign(support, carol, "", by=alice)
    assert not Assignment.objects.exists()


def test_a_group_is_offered_only_when_its_scope_admits_the_hold(alice, carol, billing, support):
    Group.objects.get_or_create(name="Everyone")

    assert [c.label for c in assignments.choices([billing], alice) if c.key.startswith("group:")] == [
        "Billing",
        "Everyone",
        "Reviewers",
    ]
    assert [c.label for c in assignments.choices([support], alice) if c.key.startswith("group:")] == [
        "Everyone",
        "Reviewers",
    ]


# Notes


def test_a_note_tells_the_people_it_mentions_who_may_see_the_hold_and_nobody_else(alice, bob, carol, support):
    note, mentioned = notes.add_note(support, alice, "@bob and @carol, and @nobody-here: look at the refund.")

    assert mentioned == [bob]
    assert list(note.mentioned.all()) == [bob]
    assert told(Event.MENTIONED, carol) == []
    assert AuditEvent.objects.get(kind=EventKind.NOTE_ADDED).payload["told"] == ["bob"]


def test_a_note_is_never_changed_nor_deleted_even_in_sql(alice, billing):
    note, _ = notes.add_note(billing, alice, "First thought")

    with pytest.raises(DatabaseError), transaction.atomic():
        Note.objects.filter(pk=note.pk).update(text="Rewritten")
    with pytest.raises(DatabaseError), transaction.atomic():
        Note.objects.filter(pk=note.pk).delete()
    assert Note.objects.get(pk=note.pk).text == "First thought"


# Assigning from the hold page and from the queue


def test_the_assign_page_offers_only_people_and_groups_who_can_see_the_hold(alice_client, bob, carol, support):
    page = alice_client.get(reverse("assign-hold", args=[support.pk])).content.decode()

    assert f'<option value="user:{bob.pk}">bob</option>' in page
    assert "carol" not in page and "Billing" not in page  # Carol and her group are Billing's only


def test_assigning_from_the_hold_page_shows_it_first_to_whoever_opens_the_hold(alice_client, bob, billing):
    response = alice_client.post(
        reverse("assign-hold", args=[billing.pk]), {"assignee": f"user:{bob.pk}", "note": "Is the amount right?"}
    )

    assert response.status_code == 302 and response.url == reverse("hold", args=[billing.pk])
    page = signed_in(bob).get(reverse("hold", args=[billing.pk])).content.decode()
    assert "Assigned to bob</strong> (note: <span" in page and "Is the amount right?" in page
    assert page.index('id="assignment"') < page.index('id="decide-form"')  # first; and the form is still there
    assert "Notifications: 1 unread" in signed_in(bob).get(reverse("notification-bell")).content.decode()


def test_an_assignment_locks_nothing_anyone_may_still_decide(alice, bob, billing):
    assignments.assign(billing, bob, "", by=alice)

    decisions.submit(billing, alice, approve_all(billing))

    assert billing.decisions.count() == 1


def test_a_forged_post_naming_someone_out_of_scope_is_refused_and_assigns_nothing(alice_client, carol, support):
    billing_group = Group.objects.get(name="Billing")
    for forged in (f"user:{carol.pk}", f"group:{billing_group.pk}", "user:999999", "user:", "bob", "group:1 OR 1=1"):
        response = alice_client.post(reverse("assign-hold", args=[support.pk]), {"assignee": forged, "note": ""})
        assert response.status_code == 400, forged

    assert not Assignment.objects.exists()
    assert not AuditEvent.objects.filter(kind=EventKind.ASSIGNED).exists()


def test_a_reviewer_cannot_assign_nor_annotate_a_hold_out_of_their_scope(carol, alice, support):
    carol_client = signed_in(carol)

    assert carol_client.get(reverse("assign-hold", args=[support.pk])).status_code == 404
    assert (
        carol_client.post(reverse("assign-hold", args=[support.pk]), {"assignee": f"user:{alice.pk}"}).status_code
        == 404
    )
    assert carol_client.post(reverse("add-note", args=[support.pk]), {"text": "hello"}).status_code == 404
    assert carol_client.post(reverse("unassign-hold", args=[support.pk])).status_code == 404
    assert not Assignment.objects.exists() and not Note.objects.exists()


def test_a_decided_hold_cannot_be_assigned(alice_client, alice, bob, billing):
    decisions.submit(billing, alice, approve_all(billing))

    response = alice_client.post(reverse("assign-hold", args=[billing.pk]), {"assignee": f"user:{bob.pk}"})

    assert response.status_code == 409
    assert not Assignment.objects.exists()


def test_a_bulk_assign_offers_those_who_see_every_selected_hold_and_assigns_each(
    alice_client, bob, carol, billing, support
):
    choosing = alice_client.post(reverse("bulk-assign"), {"hold": [billing.pk, support.pk]}).content.decode()
    assert f'value="user:{bob.pk}"' in choosing and f'value="user:{carol.pk}"' not in choosing

    response = alice_client.post(
        reverse("bulk-assign"),
        {"hold": [billing.pk, support.pk], "confirm": "yes", "assignee": f"user:{bob.pk}", "note": "Both yours"},
    )

    assert response.status_code == 302
    assert {a.hold_id for a in Assignment.objects.filter(user=bob, note="Both yours")} == {billing.pk, support.pk}
    assert AuditEvent.objects.filter(kind=EventKind.ASSIGNED).count() == 2
    assert len(told(Event.ASSIGNED, bob)) == 4  # each hold, in the bell and by email


def test_a_forged_bulk_assign_to_someone_who_cannot_see_one_of_the_holds_assigns_none(
    alice_client, carol, billing, support
):
    response = alice_client.post(
        reverse("bulk-assign"), {"hold": [billing.pk, support.pk], "confirm": "yes", "assignee": f"user:{carol.pk}"}
    )

    assert response.status_code == 400
    assert not Assignment.objects.exists()


def test_a_bulk_assign_treats_another_teams_hold_as_unknown(carol, alice, billing, support):
    signed_in(carol).post(
        reverse("bulk-assign"), {"hold": [billing.pk, support.pk], "confirm": "yes", "assignee": f"user:{carol.pk}"}
    )

    assert [a.hold_id for a in Assignment.objects.all()] == [billing.pk]


def test_a_bulk_assign_leaves_out_a_hold_decided_meanwhile_and_assigns_the_others(
    alice_client, alice, bob, billing, support
):
    decisions.submit(support, alice, approve_all(support))

    alice_client.post(
        reverse("bulk-assign"), {"hold": [billing.pk, support.pk], "confirm": "yes", "assignee": f"user:{bob.pk}"}
    )

    assert [a.hold_id for a in Assignment.objects.all()] == [billing.pk]


def test_assigning_to_a_group_tells_its_members_who_may_see_the_hold(alice, carol, billing, support):
    dave = make_user("dave", roles.REVIEWERS)
    dave.groups.add(Group.objects.get(name="Billing"))
    team = Group.objects.create(name="Refund desk")
    carol.groups.add(team)
    dave.groups.add(team)
    make_user("root", is_superuser=True)  # sees every hold, but is not in the group
    make_user("audra", roles.AUDITORS).groups.add(team)  # in the group, but decides nothing

    assignments.assign(billing, team, "", by=alice)
    assignments.assign(support, team, "", by=alice)  # an unscoped group: Carol and Dave cannot see Support's holds

    assert {n.hold_id for n in Notification.objects.filter(event=Event.ASSIGNED, channel=Channel.IN_APP)} == {
        billing.pk
    }
    assert {n.user for n in Notification.objects.filter(event=Event.ASSIGNED, channel=Channel.IN_APP)} == {carol, dave}


# Telling the assignee, by each channel


@pytest.mark.django_db(transaction=True)
def test_the_assignee_hears_of_it_in_the_bell_by_email_and_through_a_webhook(
    celery_processes,
    smtp_server,
    webhook_receiver,
    settings,
    alice,
    bob,
    billing,
):
    controller, inbox = smtp_server
    WebhookChannel.objects.create(name="chat", url=webhook_receiver.url, secret="s", events=["assigned"])
    celery_processes(
        "worker",
        EMAIL_BACKEND="smtp",
        EMAIL_HOST="127.0.0.1",
        EMAIL_PORT=str(controller.port),
        SITE_URL="https://review.example.com",
    )
    settings.SITE_URL = "https://review.example.com"

    assignments.assign(billing, bob, "Please check the customer's history", by=alice)

    wait_until(lambda: inbox and webhook_receiver.received)
    link = f"https://review.example.com/holds/{billing.pk}/"
    mail = inbox[0]
    text = (
        next(part for part in mail.walk() if part.get_content_type() == "text/plain").get_payload(decode=True).decode()
    )
    assert mail["To"] == "bob@example.com"
    assert " ".join(mail["Subject"].split()).startswith("[Review Queue] Assigned to bob by Alice Adams:")
    assert "Please check the customer's history" in text and f"Open the hold: {link}" in text
    webhook = json.loads(webhook_receiver.received[0][1])
    assert webhook["event"] == "assigned" and "Assigned to bob" in webhook["text"]
    assert "Notifications: 1 unread" in signed_in(bob).get(reverse("notification-bell")).content.decode()


def test_the_assignee_may_turn_the_email_off_in_their_preferences(alice, bob, billing):
    signed_in(bob).post(reverse("notification-preferences"), {"assigned": ["in_app"]})

    assignments.assign(billing, bob, "", by=alice)

    assert [n.channel for n in told(Event.ASSIGNED, bob)] == [Channel.IN_APP]


# The assignment ends with the hold


def test_a_decision_ends_the_assignment_and_resolves_its_messages_and_an_undo_brings_both_back(
    alice, bob, billing, settings
):
    settings.UNDO_SECONDS = 10
    assignments.assign(billing, bob, "", by=alice)
    notes.add_note(billing, alice, "@bob have a look")
    bob_client = signed_in(bob)

    decision = decisions.submit(billing, alice, approve_all(billing))

    assert billing.pk not in listed(bob_client, "?assigned=me")
    assert all(n.resolved_at for n in Notification.objects.filter(user=bob))
    assert "Notifications: 0 unread" in bob_client.get(reverse("notification-bell")).content.decode()
    decisions.withdraw(decision.pk, alice)
    assert listed(bob_client, "?assigned=me") == [billing.pk]
    assert not any(n.resolved_at for n in Notification.objects.filter(user=bob))


def test_the_holds_expiry_ends_the_assignment_and_resolves_its_message(alice, bob, billing):
    assignments.assign(billing, bob, "", by=alice)

    with time_machine.travel(billing.expires_at + timedelta(seconds=1)):
        expiry.sweep()
        assert listed(signed_in(bob), "?assigned=me") == []

    assert all(n.resolved_reason == "expired" for n in told(Event.ASSIGNED, bob))


# The queue: its filter, its label, and n


def test_assigned_to_me_lists_the_holds_assigned_to_me_or_to_my_groups(
    alice, bob, carol, billing, support, platform_state, platform_client
):
    third = add_hold(platform_state, platform_client, "billing-bot", capability="refund")
    assignments.assign(billing, bob, "", by=alice)
    assignments.assign(support, Group.objects.get(name=roles.REVIEWERS), "", by=alice)
    assignments.assign(third, alice, "", by=alice)

    assert sorted(listed(signed_in(bob), "?assigned=me")) == sorted([billing.pk, support.pk])
    assert listed(signed_in(carol), "?assigned=me") == []  # Carol is a reviewer, but Support's hold is out of scope


def test_an_unknown_assigned_filter_is_a_400(alice_client):
    assert alice_client.get(reverse("queue") + "?assigned=bob").status_code == 400


def test_the_row_says_whom_a_hold_is_assigned_to_and_follows_a_reassignment(alice_client, alice, bob, carol, billing):
    assert "assigned to" not in queue_page(alice_client)

    assignments.assign(billing, bob, "", by=alice)
    assert '<span class="badge assigned">assigned to bob</span>' in queue_page(alice_client)
    assignments.assign(billing, Group.objects.get(name="Billing"), "", by=alice)
    assert '<span class="badge assigned">assigned to Billing</span>' in queue_page(alice_client)
    assignments.unassign(billing, alice)
    assert "assigned to" not in queue_page(alice_client)


def test_n_opens_the_holds_assigned_to_me_first(alice, bob, billing, support):
    Hold.objects.filter(pk=billing.pk).update(expires_at=support.expires_at - timedelta(minutes=30))  # first in queue
    assignments.assign(support, bob, "", by=alice)

    assert signed_in(bob).get(reverse("next-hold")).url == reverse("hold", args=[support.pk])
    assert signed_in(alice).get(reverse("next-hold")).url == reverse("hold", args=[billing.pk])


def test_n_skips_a_hold_assigned_to_me_that_someone_else_is_deciding(alice, bob, billing, support):
    from holds import lifecycle

    Hold.objects.filter(pk=billing.pk).update(expires_at=support.expires_at - timedelta(minutes=30))
    assignments.assign(support, bob, "", by=alice)
    lifecycle.claim(support, alice)

    assert signed_in(bob).get(reverse("next-hold")).url == reverse("hold", args=[billing.pk])


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
