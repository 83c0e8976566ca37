"""One tap under four eyes, a claim, an undo and two taps at once: a link records what it may and sends once."""

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from approvals import approving
from approvals.models import Approval
from audit.models import AuditEvent, EventKind
from holds import lifecycle
from holds.deciding import deciders, decisions
from holds.links import action_links
from holds.models import ActionLinkUse, Decision
from reviewqueue import roles
from teams import scopes
from tests.helpers.action_links import posted, sent_decisions, signed_in
from tests.helpers.concurrently import at_once
from tests.helpers.users import make_user


@pytest.mark.django_db
def test_four_eyes_through_two_links_records_one_approval_each_and_the_second_sends(
    alice,
    bob,
    large_refunds,
    refund,
):
    large_refunds.later_approver_group = Group.objects.create(name="Finance leads")
    large_refunds.save()
    fiona = make_user("fiona", roles.REVIEWERS, "Finance leads")
    alices = signed_in(alice)
    alices_link = reverse("action-link", args=[action_links.make(refund, "approve", alice)])

    first = posted(alices, alices_link)
    recorded = alices.get(first["Location"]).content.decode()
    bobs_page = (
        signed_in(bob).get(reverse("action-link", args=[action_links.make(refund, "approve", bob)])).content.decode()
    )
    assert "1 of 2 approvals: yours is recorded; the next approval can come from Finance leads" in recorded
    assert Approval.objects.count() == 1 and not Decision.objects.exists()
    assert "must come from a member of Finance leads" in bobs_page and ">Send</button>" not in bobs_page
    replay = alices.post(alices_link, {"round": "0"})
    assert replay.status_code == 200 and Approval.objects.count() == 1

    posted(signed_in(fiona), reverse("action-link", args=[action_links.make(refund, "approve", fiona)]))

    decision = Decision.objects.get()
    assert decision.reviewer == fiona and approving.decided_by(decision, deciders.platform_name) == (
        "alice@example.com, fiona@example.com"
    )
    given = AuditEvent.objects.filter(kind=EventKind.APPROVAL_GIVEN).order_by("sequence")
    assert [event.payload["channel"] for event in given] == ["email_link", "email_link"]


@pytest.mark.django_db
def test_a_claim_held_by_someone_else_is_refused_with_their_name_and_the_link_still_works_later(samples, alice, bob):
    hold = samples["h_17"]
    link = reverse("action-link", args=[action_links.make(hold, "approve", alice)])
    lifecycle.claim(hold, bob)
    alices = signed_in(alice)

    page = alices.get(link).content.decode()
    sent = alices.post(link, {"round": "0"})

    assert "Bob Brown" in page and "is reviewing this hold now" in page and ">Send</button>" not in page
    assert sent.status_code == 409 and "Bob Brown is reviewing this hold" in sent.content.decode()
    assert not Decision.objects.exists() and not ActionLinkUse.objects.exists()
    lifecycle.release_claim(hold, bob)
    assert alices.post(link, {"round": "0"}).status_code == 302 and len(sent_decisions(hold)) == 1


@pytest.mark.django_db
def test_undo_from_the_outcome_withdraws_and_the_link_stays_used(samples, alice):
    hold = samples["h_17"]
    link = reverse("action-link", args=[action_links.make(hold, "approve", alice)])
    alices = signed_in(alice)
    posted(alices, link)
    decision = Decision.objects.get()

    alices.post(reverse("decision-undo", args=[hold.pk]), {"decision": decision.pk})
    again = alices.post(link, {"round": "0"})

    decision.refresh_from_db()
    assert decision.state == Decision.State.WITHDRAWN
    assert again.status_code == 200 and "Undone at" in again.content.decode()
    assert Decision.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_taps_on_one_chat_link_at_the_same_moment_send_one_decision(samples, alice, bob):
    token = action_links.make(samples["h_17"], "approve")

    def tap(user):
        def send():
            try:
                return action_links.send(token, scopes.viewer_of(user), round_shown=0)
            except (action_links.Refused, decisions.DecisionRefused) as refused:
                return refused

        return send

    outcomes = at_once(tap(alice), tap(bob), tap(alice))

    assert sum(isinstance(outcome, Decision) for outcome in outcomes) == 1
    assert Decision.objects.count() == 1 and ActionLinkUse.objects.count() == 1
