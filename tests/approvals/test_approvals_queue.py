"""The queue and the `n` key bring holds waiting for an approval to the people who may give it."""

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from holds.mirror import sync
from reviewqueue import roles
from tests.helpers.approvals_setup import confirm, lowered_to, signed_in
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db


def row_of(page: str, hold) -> str:
    start = page.index(f'id="row-{hold.pk}"')
    return page[start : page.index("</tr>", start)]


def test_a_row_shows_the_approvals_needed_and_then_how_many_were_given(alice, bob, large_refunds, refund, samples):
    bobs = signed_in(bob)
    before = bobs.get(reverse("queue")).content.decode()  # renders and caches the row

    confirm(signed_in(alice), refund, **lowered_to(refund, "1000.00"))
    after = bobs.get(reverse("queue")).content.decode()

    assert "Needs 2 approvals" in row_of(before, refund)
    assert "1 of 2 approvals" in row_of(after, refund) and "Needs 2 approvals" not in row_of(after, refund)
    assert "approvals" not in row_of(after, samples["h_12"])  # a small refund needs one person, as before


def test_approvals_cost_the_queue_no_query_of_their_own(alice, bob, large_refunds, refund, samples):
    confirm(signed_in(alice), refund, **lowered_to(refund, "1000.00"))
    bobs = signed_in(bob)
    bobs.get(reverse("queue"))  # reads the policies and works out each hold's requirement, then keeps them

    with CaptureQueriesContext(connection) as queries:
        page = bobs.get(reverse("queue")).content.decode()

    assert (
        '<span class="badge approvals">1 of 2 approvals</span> <span class="muted">(amount 1,200.00 &gt; 500)</span>'
        in row_of(page, refund)
    )
    touching = [query["sql"] for query in queries.captured_queries if "approvals_" in query["sql"]]
    assert len(touching) == 1 and touching[0].startswith('SELECT "holds_hold"."id"'), touching  # the page's own query
    # session, user, groups, holds, and the sync states with the bell and the possible duplicates: as without policies
    assert len(queries.captured_queries) == 5


def test_a_changed_policy_changes_the_badge_at_the_next_refresh(alice, bob, large_refunds, refund):
    bobs = signed_in(bob)
    assert "Needs 2 approvals" in row_of(bobs.get(reverse("queue")).content.decode(), refund)

    large_refunds.approvals_required = 3
    large_refunds.save()

    assert "Needs 3 approvals" in row_of(bobs.get(reverse("queue")).content.decode(), refund)


def test_needs_my_approval_lists_the_holds_whose_round_i_may_join(alice, bob, large_refunds, refund, samples):
    confirm(signed_in(alice), refund, **lowered_to(refund, "1000.00"))

    for_bob = signed_in(bob).get(reverse("queue"), {"approval": "mine"}).content.decode()
    for_alice = signed_in(alice).get(reverse("queue"), {"approval": "mine"}).content.decode()

    assert f'id="row-{refund.pk}"' in for_bob and f'id="row-{samples["h_12"].pk}"' not in for_bob
    assert f'id="row-{refund.pk}"' not in for_alice  # she gave the approval: it is someone else's turn


def test_needs_my_approval_leaves_out_holds_whose_later_approvers_must_be_in_a_group_i_am_not_in(
    alice, bob, large_refunds, refund
):
    large_refunds.later_approver_group = Group.objects.create(name="Finance leads")
    large_refunds.save()
    fiona = make_user("fiona", roles.REVIEWERS, "Finance leads")
    confirm(signed_in(alice), refund, **lowered_to(refund, "1000.00"))

    for_bob = signed_in(bob).get(reverse("queue"), {"approval": "mine"}).content.decode()
    for_fiona = signed_in(fiona).get(reverse("queue"), {"approval": "mine"}).content.decode()

    assert f'id="row-{refund.pk}"' not in for_bob and f'id="row-{refund.pk}"' in for_fiona


def test_a_bad_approval_filter_is_a_400(bob):
    for value in ("yes", "MINE", "mine\x00", "x" * 2000):
        assert signed_in(bob).get(reverse("queue"), {"approval": value}).status_code == 400


def test_next_brings_the_hold_waiting_for_my_approval_first_and_skips_the_one_i_approved(
    alice, bob, large_refunds, refund, samples
):
    confirm(signed_in(alice), refund, **lowered_to(refund, "1000.00"))

    bobs_next = signed_in(bob).get(reverse("next-hold"))
    alices_next = signed_in(alice).get(reverse("next-hold"))

    assert bobs_next.url == reverse("hold", args=[refund.pk])
    assert alices_next.url != reverse("hold", args=[refund.pk]) and alices_next.url.startswith("/holds/")


def test_once_the_platform_changes_the_hold_its_row_no_longer_counts_the_earlier_approval(
    alice, bob, large_refunds, refund, platform_state, platform_client
):
    confirm(signed_in(alice), refund)
    bobs = signed_in(bob)
    assert "1 of 2 approvals" in row_of(bobs.get(reverse("queue")).content.decode(), refund)

    platform_state.get_hold("default", refund.hold_id)["items"][0]["data"]["amount"] = "5000.00"
    sync.sync_env(platform_client, "default")
    row = row_of(bobs.get(reverse("queue")).content.decode(), refund)

    assert "Needs 2 approvals" in row and "(amount 5,000.00 &gt; 500)" in row and "1 of 2" not in row
