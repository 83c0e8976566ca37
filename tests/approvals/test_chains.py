"""Approval chains: on refunds over 1,000, one of the Support leads, then two of Finance alongside one of Legal; the
platform hears once, after the fourth person, whatever way each of them approved."""

import pytest
from django.urls import reverse

from approvals.models import Approval, AwaitedStage
from audit.models import AuditEvent, EventKind
from holds.deciding import delivery
from holds.models import Decision
from notifications.models import Notification
from tests.helpers.approvals_setup import approve_as_it_is, confirm, decision_posts, lowered_to, signed_in
from tests.helpers.chains import desk, queue_of

pytestmark = pytest.mark.django_db


def test_the_chain_sends_one_decision_after_the_fourth_person_and_refuses_a_fifth(
    chain, refund, platform_state, platform_client, immediate_delivery
):
    first = confirm(signed_in(chain.sam), refund)
    for_fay = queue_of(chain.fay, approval="mine")
    for_rex = queue_of(chain.rex, approval="mine")
    rexs_page = signed_in(chain.rex).get(reverse("hold", args=[refund.pk])).content.decode()
    approve_as_it_is(signed_in(chain.fay), refund)
    approve_as_it_is(signed_in(chain.lee), refund)
    assert not Decision.objects.exists() and decision_posts(platform_state) == []
    approve_as_it_is(signed_in(chain.fin), refund)
    decision = Decision.objects.get()
    delivery.deliver(decision.pk, platform_client)
    fifth = signed_in(chain.sam).post(
        reverse("hold-approve", args=[refund.pk]), {"approval": Approval.objects.order_by("pk").last().pk}
    )

    assert first.status_code == 302
    assert "Stage 2 of 3 · Finance · 0 of 2; Stage 3 of 3 · Legal · 0 of 1" in for_fay
    assert f'id="row-{refund.pk}"' in for_fay and f'id="row-{refund.pk}"' not in for_rex
    assert "The next approval must come from a member of Finance or Legal." in rexs_page
    posts = decision_posts(platform_state)
    assert len(posts) == 1 and posts[0]["body"]["decided_by"] == (
        "sam@example.com, fay@example.com, lee@example.com, fin@example.com"
    )
    assert list(Approval.objects.order_by("position").values_list("approver__username", "stage")) == [
        ("sam", 1),
        ("fay", 2),
        ("lee", 3),
        ("fin", 2),
    ]
    assert fifth.status_code in (404, 409) and Decision.objects.count() == 1
    completed = AuditEvent.objects.filter(kind=EventKind.STAGE_COMPLETED).order_by("pk")
    assert [(event.payload["stage"], event.payload["approvers"]) for event in completed] == [
        (1, ["sam"]),
        (3, ["lee"]),
        (2, ["fay", "fin"]),
    ]
    told = Notification.objects.filter(event=Notification.Event.STAGE_WAITING, channel="in_app")
    assert sorted(told.values_list("user__username", flat=True)) == ["fay", "fin", "lee"]


def test_someone_outside_the_open_stage_is_refused_and_nothing_is_stored(chain, refund):
    confirm(signed_in(chain.sam), refund)

    refused = confirm(signed_in(chain.rex), refund)
    sues_try = confirm(signed_in(chain.sue), refund)  # stage 1 is complete: Support leads are not asked again

    for response in (refused, sues_try):
        assert response.status_code == 409
        assert "The next approval must come from a member of Finance or Legal." in response.content.decode()
    assert Approval.objects.count() == 1


def test_the_first_stage_is_its_groups_alone(chain, refund):
    refused = confirm(signed_in(chain.fay), refund)

    assert refused.status_code == 409 and "must come from a member of Support leads" in refused.content.decode()
    assert not Approval.objects.exists()


def test_a_reject_by_legal_rejects_the_hold_with_its_comment_at_once(
    chain, refund, platform_state, platform_client, immediate_delivery
):
    confirm(signed_in(chain.sam), refund)
    approve_as_it_is(signed_in(chain.fay), refund)
    confirm(signed_in(chain.lee), refund, **{"item-0-action": "reject", "item-0-comment": "Not without the contract"})
    decision = Decision.objects.get()
    delivery.deliver(decision.pk, platform_client)

    assert decision_posts(platform_state)[0]["body"] == {
        "items": [{"id": "call_1", "action": "reject", "comment": "Not without the contract"}],
        "decided_by": "lee@example.com",
    }


def test_an_edit_in_a_later_stage_sends_the_new_data_back_to_the_first_stage(chain, refund, immediate_delivery):
    confirm(signed_in(chain.sam), refund)
    confirm(signed_in(chain.fay), refund, **lowered_to(refund, "1100.00"))  # finance changes the amount
    sues_page = signed_in(chain.sue).get(reverse("hold", args=[refund.pk])).content.decode()
    faysround = Approval.objects.get(round=2).pk
    sams_try = signed_in(chain.sam).post(reverse("hold-approve", args=[refund.pk]), {"approval": faysround})

    latest = list(Approval.objects.filter(round=2).values_list("approver__username", "stage"))
    assert latest == [("fay", 2)]  # fay keeps her stage; the Support leads approve the new data again
    assert "fay approved 1,200.00 → 1,100.00" in sues_page and 'id="approve-as-is-form"' in sues_page
    assert "Stage 1 of 3 · Support leads · 0 of 1" in sues_page
    assert sams_try.status_code == 409  # a person approves a hold once, in one stage
    approve_as_it_is(signed_in(chain.sue), refund)
    assert list(AwaitedStage.objects.filter(hold=refund).values_list("position", flat=True)) == [2, 3]


def test_undoing_the_last_approval_reopens_its_stage(chain, refund, settings):
    settings.UNDO_SECONDS = 10
    confirm(signed_in(chain.sam), refund)
    for person in (chain.fay, chain.lee, chain.fin):
        approve_as_it_is(signed_in(person), refund)
    decision = Decision.objects.get()

    undone = signed_in(chain.fin).post(reverse("decision-undo", args=[refund.pk]), {"decision": decision.pk})

    assert undone.status_code == 302
    assert list(Approval.objects.order_by("position").values_list("approver__username", flat=True)) == [
        "sam",
        "fay",
        "lee",
    ]
    assert list(AwaitedStage.objects.filter(hold=refund).values_list("position", flat=True)) == [2]
    assert "Stage 2 of 3 · Finance · 1 of 2" in queue_of(chain.fin, approval="mine")


def test_a_doubtful_amount_keeps_a_chain_whole_against_a_policy_of_more_people(db, platform_state, platform_client):
    from approvals import chains, policies
    from approvals.models import ApprovalPolicy
    from tests.helpers.approvals_setup import add_refund
    from tests.helpers.chains import chain_policy

    chain_policy([("Finance", 1, False), ("Legal", 1, False)], over="1000")  # 2 people, of two groups
    ApprovalPolicy.objects.create(name="three of anyone", capability_pattern="refund", approvals_required=3)
    doubtful = add_refund(platform_client, platform_state, "h_doubt", "1,5OO")  # a letter O: read for nothing

    need = policies.requirement(doubtful, policies.read_policies())

    assert need.policy.name == "large refunds" and need.approvals_required == 3
    assert chains.chain_words(chains.stages_for(need)) == "1 of Finance, then 1 of Legal, then 1 reviewer"


def test_the_admin_shows_a_chain_read_only_and_a_save_keeps_its_stages(chain):
    from approvals.models import ApprovalStage
    from tests.helpers.users import make_user

    admin = signed_in(make_user("root", is_superuser=True, is_staff=True))
    url = reverse("admin:approvals_approvalpolicy_change", args=[chain.policy.pk])
    page = admin.get(url).content.decode()
    form = {
        "name": "large refunds",
        "condition_key": "amount",
        "condition_operator": "gt",
        "condition_threshold": "1000",
        "approvals_required": "1",  # disabled: what the stages say stays
        "decide_within_minutes": "45",
        "enabled": "on",
    }

    saved = admin.post(url, form)

    assert "1 of Support leads, then 2 of Finance alongside 1 of Legal" in page
    assert "Set by the policy's stages: change them with manage.py loadpolicies." in page
    assert saved.status_code == 302
    chain.policy.refresh_from_db()
    assert (chain.policy.approvals_required, chain.policy.decide_within_minutes) == (4, 45)
    assert ApprovalStage.objects.filter(policy=chain.policy).count() == 3


def test_a_bulk_approve_leaves_out_a_chains_hold_outside_the_pressers_stage_and_counts_it_inside(
    chain, refund, samples, immediate_delivery
):
    from tests.helpers.bulk import BULK, selected
    from tests.helpers.bulk import confirm as confirm_bulk

    small = samples["h_17"]
    rexs_summary = signed_in(chain.rex).post(BULK, selected([refund, small], "approve")).content.decode()
    sams_summary = signed_in(chain.sam).post(BULK, selected([refund], "approve"))
    confirm_bulk(signed_in(chain.sam), sams_summary)

    assert "Waits for approval by Support leads" in rexs_summary
    assert list(Approval.objects.values_list("approver__username", "stage")) == [("sam", 1)]
    assert not Decision.objects.filter(hold=refund).exists()


def test_waiting_for_my_stage_lists_a_new_hold_for_its_first_stage_and_follows_the_chain(
    platform_state, platform_client
):
    from approvals import awaiting
    from tests.helpers.approval_history import raise_on_the_platform
    from tests.helpers.approvals_setup import add_refund

    people = desk()  # the chain exists before the holds arrive
    big = add_refund(platform_client, platform_state, "h_big1", "1500.00")
    small = add_refund(platform_client, platform_state, "h_small1", "15.00")

    sams, fays = queue_of(people.sam, approval="mine"), queue_of(people.fay, approval="mine")
    confirm(signed_in(people.sam), big)
    sams_after, fays_after = queue_of(people.sam, approval="mine"), queue_of(people.fay, approval="mine")

    assert f'id="row-{big.pk}"' in sams and f'id="row-{small.pk}"' not in sams
    assert f'id="row-{big.pk}"' not in fays
    assert f'id="row-{big.pk}"' not in sams_after and f'id="row-{big.pk}"' in fays_after

    raise_on_the_platform(platform_state, platform_client, big, "1600.00")  # the agent asks again: a new hold
    assert list(AwaitedStage.objects.filter(hold=big).values_list("position", flat=True)) == [1]  # the round is over

    later = add_refund(platform_client, platform_state, "h_big2", "2500.00")
    AwaitedStage.objects.filter(hold=later).delete()  # as though the chain were loaded after it arrived
    assert awaiting.refresh_all() == 1  # the holds nobody approved: big's approval is refreshed at once, not here
    assert f'id="row-{later.pk}"' in queue_of(people.sue, approval="mine")


def test_a_restart_on_a_round_complete_already_still_needs_a_stage_that_admits_its_giver(chain, refund):
    from tests.helpers.chains import chain_policy, member

    chain.policy.delete()
    chain_policy([(None, 1, False), ("Legal", None, False)])  # one reviewer, then everyone in Legal
    lara = member("lara", "Legal")
    confirm(signed_in(chain.rex), refund)
    approve_as_it_is(signed_in(chain.lee), refund)
    lara.is_active = False  # Legal shrinks to lee alone: the round is complete, yet open
    lara.save()

    mallory = confirm(signed_in(chain.fay), refund, **lowered_to(refund, "900.00"))  # not in Legal

    assert list(Approval.objects.filter(round=2).values_list("approver__username", "stage")) == [("fay", 1)]
    assert mallory.status_code == 302 and not Decision.objects.exists()


def test_a_policy_reordered_mid_round_never_moves_an_approval_to_another_group(chain, refund):
    from django.contrib.auth.models import Group

    from approvals.models import ApprovalStage

    confirm(signed_in(chain.sam), refund)  # stage 1, Support leads
    first, second = ApprovalStage.objects.filter(policy=chain.policy).order_by("position")[:2]
    first.group, second.group = Group.objects.get(name="Finance"), Group.objects.get(name="Support leads")
    first.save()
    second.save()  # now Finance first, then Support leads

    row = queue_of(chain.rex)
    fays = approve_as_it_is(signed_in(chain.fay), refund)

    assert "Stage 1 of 3 · Finance · 0 of 1" in row  # sam's approval was given for Support leads: it counts for no one
    assert fays.status_code == 302 and not Decision.objects.exists()


def test_everyone_in_a_group_means_its_members_now_not_a_count_of_approvals(chain, refund):
    from tests.helpers.chains import chain_policy, member

    chain.policy.delete()
    chain_policy([(None, 1, False), ("Legal", None, False)])
    lara, liam = member("lara", "Legal"), member("liam", "Legal")  # Legal: lee, lara, liam
    confirm(signed_in(chain.rex), refund)
    approve_as_it_is(signed_in(chain.lee), refund)
    approve_as_it_is(signed_in(lara), refund)
    chain.lee.is_active = False  # 2 of 2 by count, but liam has not approved
    chain.lee.save()

    latest = Approval.objects.order_by("pk").last().pk
    fays = signed_in(chain.fay).post(reverse("hold-approve", args=[refund.pk]), {"approval": latest})  # not in Legal
    page = queue_of(liam)
    approve_as_it_is(signed_in(liam), refund)

    assert fays.status_code == 409 and "must come from a member of Legal" in fays.content.decode()
    assert "Stage 2 of 2 · Legal · 1 of 2" in page  # of lara and liam, Legal now; lee's approval counts no more
    assert Decision.objects.get().reviewer == liam


def test_a_certain_chain_raised_by_a_doubtful_policy_of_more_people_stays_whole(db, platform_state, platform_client):
    from approvals import chains, policies
    from approvals.models import ApprovalPolicy
    from tests.helpers.approvals_setup import add_refund
    from tests.helpers.chains import chain_policy

    chain = chain_policy([(None, 1, False), ("Finance", 1, False)], name="refunds")
    ApprovalPolicy.objects.filter(pk=chain.pk).update(condition_key="", condition_operator="", condition_threshold=None)
    ApprovalPolicy.objects.create(
        name="three over 1000",
        condition_key="amount",
        condition_operator="gt",
        condition_threshold=1000,
        approvals_required=3,
    )
    doubtful = add_refund(platform_client, platform_state, "h_doubt2", "1,5OO")

    need = policies.requirement(doubtful, policies.read_policies())

    assert need.policy.name == "refunds" and need.approvals_required == 3
    assert chains.chain_words(chains.stages_for(need)) == "1 reviewer, then 1 of Finance, then 1 reviewer"


def test_a_chains_decision_the_platform_does_not_apply_starts_the_chain_again(chain, refund):
    from holds import lifecycle

    confirm(signed_in(chain.sam), refund)
    for person in (chain.fay, chain.lee, chain.fin):
        approve_as_it_is(signed_in(person), refund)
    decision = Decision.objects.get()

    lifecycle.delivered(decision, Decision.State.NOT_APPLIED, Decision.Outcome.INVALID, "the amount is over the limit")

    assert list(AwaitedStage.objects.filter(hold=refund).values_list("position", flat=True)) == [1]
    assert f'id="row-{refund.pk}"' in queue_of(chain.sue, approval="mine")
