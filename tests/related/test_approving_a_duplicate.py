"""Approving a possible duplicate on the hold page asks for an explicit confirmation on the summary, naming the
other holds the reviewer may see (and counting the rest); the audit keeps what they confirmed. Rejecting stays one
step. The four A-1001 sample holds, mirrored by a real sync from the simulator over HTTP."""

import pytest
from django.urls import reverse

from approvals.models import Approval
from audit.describe import summary
from audit.models import AuditEvent, EventKind
from holds.deciding import decisions
from holds.mirror import sync
from holds.models import Decision, Hold
from reviewqueue import roles
from tests.helpers.approvals_setup import approve_as_it_is, signed_in
from tests.helpers.forms import fields_of
from tests.helpers.handoff import approve_all
from tests.helpers.reviewing import review_form
from tests.helpers.users import make_user, scoped_group

pytestmark = pytest.mark.django_db


def summary_page(client, hold, form=None):
    response = client.post(reverse("hold-review", args=[hold.pk]), form or review_form(hold))
    assert response.status_code == 200
    return response.content.decode()


def confirm(client, hold, page, tick: bool):
    fields = fields_of(page, "confirm-form")  # a checkbox not ticked is not posted
    assert "duplicates-confirmed" not in fields
    if tick:
        fields["duplicates-confirmed"] = ["yes"]
    return client.post(reverse("hold-review", args=[hold.pk]), {**fields, "confirm": "yes"})


def test_approving_one_then_a_second_a_1001_refund_asks_for_the_confirmation_on_the_second(samples, alice, bob):
    first, second = samples["h_13"], samples["h_14"]
    alice_client, bob_client = signed_in(alice), signed_in(bob)

    page = summary_page(alice_client, first)
    assert 'id="duplicate-check"' in page and "possible duplicate of" in page
    for other in ("h_12", "h_14", "h_15"):
        assert f'name="duplicate" value="{other}"' in page
    assert confirm(alice_client, first, page, tick=True).status_code == 302
    assert Decision.objects.filter(hold=first).exists()

    page = summary_page(bob_client, second)
    assert 'value="h_13"' in page  # the refund just approved is named too
    refused = confirm(bob_client, second, page, tick=False)
    assert refused.status_code == 422
    assert 'id="duplicates-confirmed-error"' in refused.content.decode()
    assert not Decision.objects.filter(hold=second).exists()

    assert confirm(bob_client, second, page, tick=True).status_code == 302
    event = AuditEvent.objects.get(kind=EventKind.DECISION_SUBMITTED, hold_id="h_14")
    checked = event.payload["duplicates_checked"]
    assert sorted(checked["holds"]) == ["h_12", "h_13", "h_15"] and checked["more"] == 0
    assert "possible duplicate of" in summary(event) and "h_13" in summary(event)


def test_a_reviewer_out_of_scope_of_the_others_confirms_a_count_never_their_ids(samples):
    scoped_group("Upsonic team", agent="upsonic-*")
    carol = make_user("carol", roles.REVIEWERS, "Upsonic team")
    hold = samples["h_13"]
    client = signed_in(carol)

    page = summary_page(client, hold)
    assert "3 other holds" in page or "3 more outside" in page
    for other in ("h_12", "h_14", "h_15"):
        assert other not in page
    assert confirm(client, hold, page, tick=False).status_code == 422
    assert confirm(client, hold, page, tick=True).status_code == 302
    event = AuditEvent.objects.get(kind=EventKind.DECISION_SUBMITTED, hold_id="h_13")
    assert event.payload["duplicates_checked"] == {"holds": [], "more": 3}


def test_rejecting_a_possible_duplicate_stays_one_step(samples, alice):
    hold = samples["h_12"]
    client = signed_in(alice)
    response = client.post(reverse("hold-reject", args=[hold.pk]), {"comment": "asked twice"})
    assert response.status_code == 302
    assert Decision.objects.get(hold=hold).items.get().action == "reject"
    page = summary_page(client, samples["h_15"], review_form(samples["h_15"], **{"item-0-action": "reject"}))
    assert 'id="duplicate-check"' not in page


def test_the_approval_that_completes_four_eyes_asks_for_the_confirmation_though_the_first_was_given_before(
    samples, alice, bob, platform_state, platform_client, large_refunds
):
    """One of two approvals never stands in: alice approved before the hold was flagged; bob's approval, which
    completes the round, needs his confirmation."""
    platform_state.add_hold(
        "default",
        {
            "hold_id": "h_big_1",
            "capability": "support",
            "items": [{"id": "call_a", "title": "refund", "data": {"order_id": "B-77", "amount": "900.00"}}],
        },
    )
    sync.sync_env(platform_client, "default")
    hold = Hold.objects.get(hold_id="h_big_1")
    assert isinstance(decisions.submit(hold, alice, approve_all(hold)), Approval)
    platform_state.add_hold(
        "default",
        {
            "hold_id": "h_big_2",
            "capability": "support",
            "items": [{"id": "call_b", "title": "refund", "data": {"order_id": "B-77", "amount": "900.00"}}],
        },
    )
    sync.sync_env(platform_client, "default")

    response = approve_as_it_is(signed_in(bob), hold)
    assert "possible duplicate of h_big_2" in response.content.decode()
    with pytest.raises(decisions.PossibleDuplicate):
        decisions.submit(hold, bob, approve_all(hold), duplicates_checked=[])
    assert not Decision.objects.filter(hold=hold).exists()

    made = decisions.submit(hold, bob, approve_all(hold), duplicates_checked=["h_big_2"])
    assert isinstance(made, Decision)


def test_the_first_of_two_approvals_of_a_possible_duplicate_keeps_its_confirmation_in_the_audit(
    samples, alice, large_refunds
):
    """Four eyes: alice's approval decides nothing yet, and the audit of it says what she confirmed she checked."""
    large_refunds.condition_threshold = 10
    large_refunds.save()
    hold = samples["h_12"]
    with pytest.raises(decisions.PossibleDuplicate):
        decisions.submit(hold, alice, approve_all(hold))

    given = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=["h_13", "h_14", "h_15"])

    assert isinstance(given, Approval) and not Decision.objects.filter(hold=hold).exists()
    event = AuditEvent.objects.get(hold_record=hold, kind=EventKind.APPROVAL_GIVEN)
    assert sorted(event.payload["duplicates_checked"]["holds"]) == ["h_13", "h_14", "h_15"]
    assert event.payload["duplicates_checked"]["more"] == 0
    assert "possible duplicate of h_1" in summary(event) and summary(event).endswith(" checked")
