"""Handing holds to each other: assigning a hold to a person or a group with a note, and notes between reviewers.

Billing's agent ``billing-bot`` and Support's ``support-bot`` share the platform. Alice and Bob see every hold;
Carol reviews for Billing only, so Support's holds are out of her scope.
"""

import pytest
from django.contrib.auth.models import Group
from django.db import DatabaseError, transaction

from audit.models import AuditEvent, EventKind
from holds import assignments, notes
from holds.models import Assignment, Note
from notifications.models import Notification
from reviewqueue import roles
from tests.conftest import make_user
from tests.test_team_scopes import add_hold, scoped_group

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


def told(event: str, user) -> list[Notification]:
    return list(Notification.objects.filter(event=event, user=user).order_by("channel"))


# Assigning


def test_assigning_a_hold_to_a_colleague_tells_them_and_audits_the_note(alice, bob, billing):
    assignment = assignments.assign(billing, bob, "Can you check the order history?", by=alice)

    assert assignments.current(billing) == assignment
    assert [n.channel for n in told(Event.ASSIGNED, bob)] == [Channel.EMAIL, Channel.IN_APP]
    assert "Can you check the order history?" in told(Event.ASSIGNED, bob)[0].body
    assert told(Event.ASSIGNED, alice) == []  # whoever assigns is not told of it
    event = AuditEvent.objects.get(kind=EventKind.ASSIGNED)
    assert (event.actor, event.payload["assignee"], event.payload["note"]) == (
        alice, "bob", "Can you check the order history?"
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
        "Billing", "Everyone", "Reviewers"
    ]
    assert [c.label for c in assignments.choices([support], alice) if c.key.startswith("group:")] == [
        "Everyone", "Reviewers"
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
