"""Four eyes on large refunds: approvals counted through the hold page until the policy is satisfied, then one
decision."""

from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth.models import Group
from django.urls import reverse
from django.utils import timezone

from approvals.models import Approval
from audit.models import AuditEvent, EventKind
from holds.deciding import delivery
from holds.models import Decision, Hold
from reviewqueue import roles
from tests.helpers.approvals_setup import approve_as_it_is, confirm, decision_posts, lowered_to, signed_in
from tests.helpers.forms import fields_of
from tests.helpers.reviewing import review_form
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db


def test_the_first_approval_is_stored_and_nothing_is_sent(
    alice, bob, large_refunds, refund, platform_state, immediate_delivery
):
    alices = signed_in(alice)
    response = confirm(alices, refund, **lowered_to(refund, "1000.00"))

    approval = Approval.objects.get(hold=refund)
    given = AuditEvent.objects.get(kind=EventKind.APPROVAL_GIVEN)
    bobs_page = signed_in(bob).get(reverse("hold", args=[refund.pk])).content.decode()
    assert response.status_code == 302
    assert not Decision.objects.exists() and decision_posts(platform_state) == []
    assert (approval.approver, approval.round, approval.position, approval.policy_name) == (
        alice,
        1,
        1,
        "Large refunds",
    )
    assert given.payload | {"items": None} == {
        "approval": approval.pk,
        "policy": "Large refunds",
        "round": 1,
        "position": 1,
        "required": 2,
        "restarted": False,
        "items": None,
        "channel": "page",
        "why": "amount 1,200.00 > 500",  # why the policy asks for two
    }
    assert given.payload["items"][0]["data"]["amount"] == "1000.00" and given.payload["items"][0]["action"] == "edit"
    assert Hold.objects.get(pk=refund.pk).claimed_by is None  # free for the next approver
    assert "Needs 2 approvals: amount 1,200.00 &gt; 500" in bobs_page
    assert "1 of 2 approvals: alice approved 1,200.00 → 1,000.00" in bobs_page
    assert 'id="approve-as-is-form"' in bobs_page and "Yours is the last approval needed" in bobs_page


def test_the_summary_says_that_an_approval_sends_nothing_yet(alice, large_refunds, refund):
    summary = signed_in(alice).post(
        reverse("hold-review", args=[refund.pk]), review_form(refund, **lowered_to(refund, "1000.00"))
    )

    assert "Needs 2 approvals: amount 1,200.00 &gt; 500. Sending an approval records it" in summary.content.decode()


def test_the_second_approval_sends_one_decision_naming_both_approvers(
    alice, bob, large_refunds, refund, platform_state, platform_client, immediate_delivery
):
    confirm(signed_in(alice), refund, **lowered_to(refund, "1000.00"))

    response = approve_as_it_is(signed_in(bob), refund)
    decision = Decision.objects.get(hold=refund)
    delivery.deliver(decision.pk, platform_client)

    submitted = AuditEvent.objects.get(kind=EventKind.DECISION_SUBMITTED)
    assert response.status_code == 302
    assert decision.reviewer == bob
    assert list(decision.approvals.order_by("position").values_list("approver__username", flat=True)) == [
        "alice",
        "bob",
    ]
    assert [entry["approver"] for entry in submitted.payload["approvals"]] == ["alice", "bob"]
    assert [post["body"] for post in decision_posts(platform_state)] == [
        {
            "items": [{"id": "call_1", "action": "edit", "data": {"order_id": "A-9001", "amount": "1000.00"}}],
            "decided_by": "alice@example.com, bob@example.com",
        }
    ]
    assert decision_posts(platform_state)[0]["headers"]["idempotency-key"] == str(decision.idempotency_key)


def test_the_same_reviewer_cannot_count_twice_on_the_page_or_by_a_forged_post(
    alice, large_refunds, refund, immediate_delivery
):
    alices = signed_in(alice)
    confirm(alices, refund, **lowered_to(refund, "1000.00"))
    first = Approval.objects.get()

    page = alices.get(reverse("hold", args=[refund.pk])).content.decode()
    forged_button = alices.post(reverse("hold-approve", args=[refund.pk]), {"approval": first.pk})
    forged_form = confirm(alices, refund, **lowered_to(refund, "1000.00"))
    forged_change = confirm(alices, refund, **lowered_to(refund, "900.00"))

    assert 'id="approve-as-is-form"' not in page and 'id="decide-form"' not in page
    assert "You gave approval 1 of 2 of this decision; another person must give the next one." in page
    for response in (forged_button, forged_form, forged_change):
        assert response.status_code == 409
        assert "another person must give the next" in response.content.decode()
    assert list(Approval.objects.all()) == [first] and not Decision.objects.exists()


def test_a_take_over_does_not_let_the_first_approver_count_again(alice, bob, large_refunds, refund, immediate_delivery):
    from holds import lifecycle

    confirm(signed_in(alice), refund, **lowered_to(refund, "1000.00"))
    first = Approval.objects.get()
    lifecycle.claim(refund, bob)
    lifecycle.take_over(refund, alice)  # alice takes the hold from the second approver

    alices_try = signed_in(alice).post(reverse("hold-approve", args=[refund.pk]), {"approval": first.pk})
    bobs_try = signed_in(bob).post(reverse("hold-approve", args=[refund.pk]), {"approval": first.pk})

    assert alices_try.status_code == 409 and "another person must give the next one" in alices_try.content.decode()
    assert (
        bobs_try.status_code == 409
        and "Alice Adams is reviewing this hold; take it over first." in bobs_try.content.decode()
    )
    assert list(Approval.objects.all()) == [first] and not Decision.objects.exists()


def test_changing_the_decision_restarts_the_count_and_someone_who_has_not_approved_completes_it(
    alice, bob, large_refunds, refund, platform_state, platform_client, immediate_delivery
):
    carol = make_user("carol", roles.REVIEWERS)
    confirm(signed_in(alice), refund, **lowered_to(refund, "1000.00"))

    confirm(signed_in(bob), refund, **lowered_to(refund, "900.00"))
    restarted = AuditEvent.objects.filter(kind=EventKind.APPROVAL_GIVEN).order_by("pk").last()
    carols_page = signed_in(carol).get(reverse("hold", args=[refund.pk])).content.decode()
    alices_try = signed_in(alice).post(  # she approved the hold once already
        reverse("hold-approve", args=[refund.pk]), {"approval": Approval.objects.get(approver=bob).pk}
    )
    approve_as_it_is(signed_in(carol), refund)
    decision = Decision.objects.get()
    delivery.deliver(decision.pk, platform_client)

    assert (restarted.payload["round"], restarted.payload["position"], restarted.payload["restarted"]) == (2, 1, True)
    assert "1 of 2 approvals: bob approved 1,200.00 → 900.00" in carols_page
    assert alices_try.status_code == 409 and "You approved this hold before" in alices_try.content.decode()
    assert decision_posts(platform_state)[0]["body"]["items"][0]["data"]["amount"] == "900.00"
    assert decision_posts(platform_state)[0]["body"]["decided_by"] == "bob@example.com, carol@example.com"
    assert list(Approval.objects.filter(decision=decision).values_list("round", "position")) == [(2, 1), (2, 2)]
    assert Approval.objects.get(round=1).decision is None  # the first round was superseded, never sent


def test_a_later_approver_who_rejects_sends_the_reject_at_once_with_their_comment(
    alice, bob, large_refunds, refund, platform_state, platform_client, immediate_delivery
):
    confirm(signed_in(alice), refund, **lowered_to(refund, "1000.00"))

    confirm(signed_in(bob), refund, **{"item-0-action": "reject", "item-0-comment": "Refund policy caps at 500"})
    decision = Decision.objects.get()
    delivery.deliver(decision.pk, platform_client)

    assert decision.reviewer == bob and decision.approvals.get().approver == alice
    assert decision_posts(platform_state)[0]["body"] == {
        "items": [{"id": "call_1", "action": "reject", "comment": "Refund policy caps at 500"}],
        "decided_by": "bob@example.com",
    }


def test_rejecting_everything_needs_no_second_pair_of_eyes(alice, large_refunds, refund, immediate_delivery):
    confirm(signed_in(alice), refund, **{"item-0-action": "reject", "item-0-comment": "no"})

    assert Decision.objects.get().reviewer == alice and not Approval.objects.exists()


def test_a_hold_no_policy_covers_is_decided_by_one_person_as_before(alice, large_refunds, samples, immediate_delivery):
    small = samples["h_12"]

    confirm(signed_in(alice), small)

    assert Decision.objects.filter(hold=small).exists() and not Approval.objects.exists()


def test_the_later_approvals_need_the_policys_group(alice, bob, large_refunds, refund, immediate_delivery):
    large_refunds.later_approver_group = Group.objects.create(name="Finance leads")
    large_refunds.save()
    fiona = make_user("fiona", roles.REVIEWERS, "Finance leads")
    confirm(signed_in(alice), refund, **lowered_to(refund, "1000.00"))
    first = Approval.objects.get()

    bobs_page = signed_in(bob).get(reverse("hold", args=[refund.pk])).content.decode()
    forged = signed_in(bob).post(reverse("hold-approve", args=[refund.pk]), {"approval": first.pk})
    approved = approve_as_it_is(signed_in(fiona), refund)

    assert 'id="approve-as-is-form"' not in bobs_page
    assert "The next approval must come from a member of Finance leads." in bobs_page
    assert forged.status_code == 409 and "must come from a member of Finance leads" in forged.content.decode()
    assert approved.status_code == 302 and Decision.objects.get().reviewer == fiona


def test_a_stale_approve_button_is_refused_when_the_decision_changed_meanwhile(
    alice, bob, large_refunds, refund, immediate_delivery
):
    carol = make_user("carol", roles.REVIEWERS)
    confirm(signed_in(alice), refund, **lowered_to(refund, "1000.00"))
    carols_page = signed_in(carol).get(reverse("hold", args=[refund.pk])).content.decode()
    confirm(signed_in(bob), refund, **lowered_to(refund, "900.00"))

    late = signed_in(carol).post(
        reverse("hold-approve", args=[refund.pk]), fields_of(carols_page, "approve-as-is-form")
    )

    assert late.status_code == 409 and "The decision changed since this page showed it" in late.content.decode()
    assert Approval.objects.count() == 2 and not Decision.objects.exists()


def test_a_hostile_approval_value_is_a_400(alice, large_refunds, refund):
    for value in ("", "abc", "1" * 40, "-3"):
        assert signed_in(alice).post(reverse("hold-approve", args=[refund.pk]), {"approval": value}).status_code in (
            400,
            409,
        )
    assert signed_in(alice).post(reverse("hold-approve", args=[refund.pk]), {"approval": "x\x00"}).status_code == 400


def test_undoing_the_final_approval_opens_the_round_again_one_short(
    alice, bob, large_refunds, refund, settings, platform_state
):
    settings.UNDO_SECONDS = 10
    confirm(signed_in(alice), refund, **lowered_to(refund, "1000.00"))
    bobs = signed_in(bob)
    approve_as_it_is(bobs, refund)
    decision = Decision.objects.get()

    undone = bobs.post(reverse("decision-undo", args=[refund.pk]), {"decision": decision.pk})
    page = bobs.get(reverse("hold", args=[refund.pk])).content.decode()

    withdrawn = AuditEvent.objects.get(kind=EventKind.WITHDRAWN)
    assert undone.status_code == 302
    assert Decision.objects.get().state == "withdrawn" and decision_posts(platform_state) == []
    assert list(Approval.objects.values_list("approver__username", "decision")) == [("alice", None)]
    assert "1 of 2 approvals: alice approved 1,200.00 → 1,000.00" in page and 'id="approve-as-is-form"' in page
    assert "approval_withdrawn" in withdrawn.payload

    approve_as_it_is(bobs, refund)  # bob may approve again: his approval was taken back
    assert Decision.objects.filter(state="sending").get().approvals.count() == 2


def test_a_bulk_approval_counts_once_per_hold(alice, bob, large_refunds, refund, samples, immediate_delivery):
    from tests.helpers.bulk import BULK, selected
    from tests.helpers.bulk import confirm as confirm_bulk

    small = samples["h_17"]  # h_12, an A-1001 refund, is a possible duplicate: bulk leaves it out
    alices, bobs = signed_in(alice), signed_in(bob)

    shown_before = alices.post(BULK, selected([refund], "approve"))  # a second tab, opened before she approved
    first = confirm_bulk(alices, alices.post(BULK, selected([refund, small], "approve")))
    summary_again = alices.post(BULK, selected([refund, samples["h_13"]], "approve")).content.decode()
    again = confirm_bulk(alices, shown_before)
    approvals_before_bob = Approval.objects.count()
    second = confirm_bulk(bobs, bobs.post(BULK, selected([refund], "approve")))

    assert (
        "Approved, waiting for more approvals" in first.content.decode()
        and "1 of 2 approvals" in first.content.decode()
    )
    assert Decision.objects.filter(hold=small).exists()
    assert "another person must give the next" in summary_again  # left out on the summary already
    assert "another person must give the next" in again.content.decode() and approvals_before_bob == 1
    assert "1 decision sent" in second.content.decode()
    decision = Decision.objects.get(hold=refund)
    assert decision.reviewer == bob and list(decision.approvals.values_list("approver__username", flat=True)) == [
        "alice",
        "bob",
    ]


def test_a_bulk_summary_lists_a_hold_waiting_for_the_later_approvers_group_as_waiting_not_as_sent(
    alice, bob, large_refunds, refund, samples, immediate_delivery
):
    from tests.helpers.bulk import BULK, selected
    from tests.helpers.bulk import confirm as confirm_bulk

    large_refunds.later_approver_group = Group.objects.create(name="Finance leads")
    large_refunds.save()
    fiona = make_user("fiona", roles.REVIEWERS, "Finance leads")
    small = samples["h_17"]  # not h_12, an A-1001 refund: bulk leaves possible duplicates out
    confirm(signed_in(alice), refund)  # 1 of 2: the next approval must come from Finance leads
    bobs, fionas = signed_in(bob), signed_in(fiona)

    bobs_summary = bobs.post(BULK, selected([refund, small], "approve"))
    bobs_result = confirm_bulk(bobs, bobs_summary)
    fionas_summary = fionas.post(BULK, selected([refund], "approve"))
    fionas_result = confirm_bulk(fionas, fionas_summary)

    will_be_sent, left_out = bobs_summary.content.decode().split('id="confirm-form"')[0].split("<h2>Left out</h2>")
    assert refund.question not in will_be_sent and small.question in will_be_sent
    assert refund.question in left_out and "Waits for approval by Finance leads" in left_out
    assert fields_of(bobs_summary.content.decode(), "confirm-form")["hold"] == [str(small.pk)]
    assert "1 decision sent" in bobs_result.content.decode() and "Not sent" not in bobs_result.content.decode()
    assert refund.question in fionas_summary.content.decode().split("<h2>Left out</h2>")[0]
    assert "1 decision sent" in fionas_result.content.decode()
    assert Decision.objects.get(hold=refund).reviewer == fiona


def test_the_first_approver_may_take_their_approval_back_in_the_undo_window(
    alice, bob, large_refunds, refund, settings
):
    settings.UNDO_SECONDS = 10
    alices = signed_in(alice)
    confirm(alices, refund, **lowered_to(refund, "1000.00"))
    page = alices.get(reverse("hold", args=[refund.pk])).content.decode()
    form = fields_of(page, "approval-undo-form")

    bobs_try = signed_in(bob).post(reverse("approval-undo", args=[refund.pk]), form)
    taken_back = alices.post(reverse("approval-undo", args=[refund.pk]), form)
    again = alices.get(reverse("hold", args=[refund.pk])).content.decode()

    withdrawn = AuditEvent.objects.get(kind=EventKind.APPROVAL_WITHDRAWN)
    assert (
        bobs_try.status_code == 409
        and "Only the person who gave an approval can take it back." in bobs_try.content.decode()
    )
    assert taken_back.status_code == 302 and not Approval.objects.exists()
    assert (withdrawn.actor, withdrawn.decision, withdrawn.payload["approval"]) == (
        alice,
        None,
        int(form["approval"][0]),
    )
    assert not AuditEvent.objects.filter(kind=EventKind.WITHDRAWN).exists()  # no decision was withdrawn
    assert 'id="decide-form"' in again and "data-deciding" in again  # her claim is back: she decides anew
    assert not Decision.objects.exists()


def test_an_approval_cannot_be_taken_back_after_its_window_or_once_someone_built_on_it(
    alice, bob, large_refunds, refund, settings
):
    settings.UNDO_SECONDS = 10
    confirm(signed_in(alice), refund, **lowered_to(refund, "1000.00"))
    first = Approval.objects.get()

    with time_machine.travel(timezone.now() + timedelta(seconds=11)):
        late = signed_in(alice).post(reverse("approval-undo", args=[refund.pk]), {"approval": first.pk})
        page = signed_in(alice).get(reverse("hold", args=[refund.pk])).content.decode()
    confirm(signed_in(bob), refund, **lowered_to(refund, "900.00"))  # a new round: alice's is no longer the last
    superseded = signed_in(alice).post(reverse("approval-undo", args=[refund.pk]), {"approval": first.pk})

    assert late.status_code == 409 and "Too late to take this approval back" in late.content.decode()
    assert 'id="approval-undo-form"' not in page
    assert superseded.status_code == 409 and Approval.objects.count() == 2


def test_an_approval_is_taken_back_only_through_its_own_holds_page(alice, large_refunds, refund, samples, settings):
    settings.UNDO_SECONDS = 10
    confirm(signed_in(alice), refund, **lowered_to(refund, "1000.00"))
    approval = Approval.objects.get()

    elsewhere = signed_in(alice).post(reverse("approval-undo", args=[samples["h_12"].pk]), {"approval": approval.pk})

    assert elsewhere.status_code == 404 and Approval.objects.get() == approval
