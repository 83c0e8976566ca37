"""When a round of approvals ends and who may join it: the platform changing the hold, a round changing under a
reviewer's page, a person approving a hold once, bulk approves beside an edit, and a policy lowered meanwhile."""

import pytest
from django.urls import reverse

from approvals import approving
from approvals.models import Approval
from holds.deciding import decisions, delivery
from holds.models import Decision
from reviewqueue import roles
from tests.helpers.approval_history import raise_on_the_platform
from tests.helpers.approvals_setup import approve_as_it_is, confirm, decision_posts, lowered_to, signed_in
from tests.helpers.duplicates import every_duplicate
from tests.helpers.forms import fields_of
from tests.helpers.reviewing import review_form
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def carol(db):
    return make_user("carol", roles.REVIEWERS)


def test_an_approval_given_before_the_platform_changed_the_hold_no_longer_counts(
    alice, bob, carol, large_refunds, refund, platform_state, platform_client, immediate_delivery
):
    confirm(signed_in(alice), refund)  # alice approves the 1,200.00 refund as the agent asked
    alices_approval = Approval.objects.get()
    bobs = signed_in(bob)
    bobs_stale_page = bobs.get(reverse("hold", args=[refund.pk])).content.decode()

    changed = raise_on_the_platform(platform_state, platform_client, refund, "5000.00")
    bobs_page = bobs.get(reverse("hold", args=[refund.pk])).content.decode()
    stale_click = bobs.post(reverse("hold-approve", args=[refund.pk]), fields_of(bobs_stale_page, "approve-as-is-form"))
    bob_approves_anew = confirm(bobs, changed)
    approve_as_it_is(signed_in(carol), changed)
    decision = Decision.objects.get()
    delivery.deliver(decision.pk, platform_client)

    assert changed.payload_digest != alices_approval.payload_digest == refund.payload_digest
    assert "The hold changed on the platform since the earlier approvals" in bobs_page
    assert "alice approved" in bobs_page and 'id="approve-as-is-form"' not in bobs_page
    assert (
        stale_click.status_code == 409
        and "The decision changed since this page showed it" in stale_click.content.decode()
    )
    assert bob_approves_anew.status_code == 302
    assert list(decision.approvals.values_list("approver__username", "round", "position")) == [
        ("bob", 2, 1),
        ("carol", 2, 2),
    ]
    assert decision_posts(platform_state)[0]["body"] == {
        "items": [{"id": "call_1", "action": "approve"}],
        "decided_by": "bob@example.com, carol@example.com",
    }


def test_a_summary_confirmed_after_someone_changed_the_round_is_refused_and_records_nothing(
    alice, bob, carol, large_refunds, refund, immediate_delivery
):
    confirm(signed_in(alice), refund, **lowered_to(refund, "1000.00"))
    bobs = signed_in(bob)
    url = reverse("hold-review", args=[refund.pk])
    summary = bobs.post(url, review_form(refund, **lowered_to(refund, "1000.00")))  # he agrees with alice's 1,000.00

    confirm(signed_in(carol), refund, **lowered_to(refund, "900.00"))  # carol restarts the count meanwhile
    sent = bobs.post(url, {**fields_of(summary.content.decode(), "confirm-form"), "confirm": "yes"})

    assert sent.status_code == 409 and "The decision changed since this page showed it" in sent.content.decode()
    assert list(Approval.objects.values_list("approver__username", flat=True)) == ["alice", "carol"]
    assert not Decision.objects.exists()


def test_approve_as_it_is_checks_the_round_again_under_the_holds_lock(
    alice, bob, carol, large_refunds, refund, immediate_delivery
):
    confirm(signed_in(alice), refund, **lowered_to(refund, "1000.00"))
    shown = Approval.objects.get()
    as_bob_saw_it = [decisions.ItemChoice(**choice) for choice in approving.choices_to_approve(refund, shown.pk)]

    confirm(signed_in(carol), refund, **lowered_to(refund, "900.00"))  # between bob's read and his submit

    with pytest.raises(decisions.DecisionRefused, match="The decision changed since this page showed it"):
        decisions.submit(refund, bob, as_bob_saw_it, round_shown=shown.pk, duplicates_checked=every_duplicate(refund))
    assert Approval.objects.count() == 2 and not Decision.objects.exists()


def test_after_a_restart_the_earlier_approver_may_not_approve_the_new_round_but_may_reject_it(
    alice, bob, carol, large_refunds, refund, platform_state, platform_client, immediate_delivery
):
    alices = signed_in(alice)
    confirm(alices, refund, **lowered_to(refund, "1000.00"))
    confirm(signed_in(bob), refund, **lowered_to(refund, "900.00"))  # bob restarts the count

    page = alices.get(reverse("hold", args=[refund.pk])).content.decode()
    forged_button = alices.post(
        reverse("hold-approve", args=[refund.pk]), {"approval": Approval.objects.get(approver=bob).pk}
    )
    forged_form = confirm(alices, refund, **lowered_to(refund, "900.00"))
    for_alice = alices.get(reverse("queue"), {"approval": "mine"}).content.decode()
    for_carol = signed_in(carol).get(reverse("queue"), {"approval": "mine"}).content.decode()
    rejected = alices.post(
        reverse("hold-reject", args=[refund.pk]), fields_of(page, "reject-only-form") | {"comment": "Too much"}
    )
    decision = Decision.objects.get()
    delivery.deliver(decision.pk, platform_client)

    assert "You approved this hold before, and a person approves a hold once" in page
    assert 'id="approve-as-is-form"' not in page and 'id="decide-form"' not in page and 'id="reject-only-form"' in page
    for response in (forged_button, forged_form):
        assert response.status_code == 409 and "another person must give the next one" in response.content.decode()
    assert f'id="row-{refund.pk}"' not in for_alice and f'id="row-{refund.pk}"' in for_carol
    assert rejected.status_code == 302 and decision.reviewer == alice
    assert decision_posts(platform_state)[0]["body"] == {
        "items": [{"id": "call_1", "action": "reject", "comment": "Too much"}],
        "decided_by": "alice@example.com",
    }


def test_the_first_approver_rejects_from_the_form_offered_to_them_and_undoing_it_keeps_their_approval(
    alice, large_refunds, refund, settings
):
    settings.UNDO_SECONDS = 10
    alices = signed_in(alice)
    confirm(alices, refund, **lowered_to(refund, "1000.00"))
    page = alices.get(reverse("hold", args=[refund.pk])).content.decode()

    rejected = alices.post(
        reverse("hold-reject", args=[refund.pk]), fields_of(page, "reject-only-form") | {"comment": "On second thought"}
    )
    decision = Decision.objects.get()
    linked = list(decision.approvals.values_list("approver__username", flat=True))
    undone = alices.post(reverse("decision-undo", args=[refund.pk]), {"decision": decision.pk})

    assert rejected.status_code == 302 and [item.comment for item in decision.items.all()] == ["On second thought"]
    assert linked == ["alice"]  # the reject ended her round without counting in it
    assert undone.status_code == 302
    assert list(Approval.objects.values_list("approver__username", "decision")) == [("alice", None)]  # still 1 of 2


def test_a_hostile_reject_comment_is_a_400(alice, large_refunds, refund):
    response = signed_in(alice).post(reverse("hold-reject", args=[refund.pk]), {"comment": "bad\x00"})

    assert response.status_code == 400 and not Decision.objects.exists()


def test_a_bulk_approve_leaves_out_a_hold_waiting_for_approval_of_an_edit_and_one_i_approved(
    alice, bob, large_refunds, refund, samples, immediate_delivery
):
    from tests.helpers.bulk import BULK, selected
    from tests.helpers.bulk import confirm as confirm_bulk

    confirm(signed_in(alice), refund, **lowered_to(refund, "1000.00"))  # an edit waits for its second approval
    small = samples["h_17"]  # not h_12, an A-1001 refund: bulk leaves possible duplicates out

    bobs_summary = signed_in(bob).post(BULK, selected([refund, small], "approve"))
    sent = confirm_bulk(signed_in(bob), bobs_summary)
    alices_summary = signed_in(alice).post(BULK, selected([refund], "approve")).content.decode()

    assert "Waiting for approval of a changed decision: open it." in bobs_summary.content.decode()
    assert Decision.objects.filter(hold=small).exists() and not Decision.objects.filter(hold=refund).exists()
    assert "1 decision sent" in sent.content.decode()
    assert list(Approval.objects.values_list("approver__username", "round")) == [("alice", 1)]  # alice's edit untouched
    assert "You approved this hold before" in alices_summary


def test_after_the_policy_is_lowered_to_one_the_round_says_so_and_the_next_approval_sends_it(
    alice, bob, large_refunds, refund, platform_state, platform_client, immediate_delivery
):
    confirm(signed_in(alice), refund, **lowered_to(refund, "1000.00"))
    large_refunds.approvals_required = 1
    large_refunds.save()

    bobs_page = signed_in(bob).get(reverse("hold", args=[refund.pk])).content.decode()
    approve_as_it_is(signed_in(bob), refund)
    decision = Decision.objects.get()
    delivery.deliver(decision.pk, platform_client)

    assert "1 approval given: alice approved 1,200.00 → 1,000.00" in bobs_page and "1 of 1" not in bobs_page
    assert "Yours is the last approval needed" in bobs_page
    assert decision_posts(platform_state)[0]["body"]["decided_by"] == "alice@example.com, bob@example.com"
