"""Assigning a hold to a person or a group, with a note, from the hold page and the queue; and notes kept."""

import pytest
from django.contrib.auth.models import Group
from django.db import DatabaseError, transaction
from django.urls import reverse

from audit.models import AuditEvent, EventKind
from holds.deciding import decisions
from holds.handover import assignments, notes
from holds.models import Assignment, Note
from notifications.models import Notification
from reviewqueue import roles
from tests.helpers.approvals_setup import signed_in
from tests.helpers.handoff import Channel, Event, approve_all, told
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db


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
