"""Every path that needs fewer people waits for a person on a possible duplicate, and the audit says why once: a
0-people policy, a remembered approval, a default approve. The four A-1001 sample holds, mirrored by a real sync
from the simulator over HTTP, and the sweeps as beat runs them."""

from datetime import timedelta
from decimal import Decimal

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from approvals import alone, policies
from approvals.models import ApprovalPolicy, RememberAllowance
from audit.describe import summary
from audit.models import AuditEvent, EventKind
from holds.deciding import by_policy
from holds.mirror import sync
from holds.models import Decision, Hold
from holds.related import safeguard
from tests.helpers.bulk import BULK, selected
from tests.helpers.bulk import confirm as bulk_confirm
from tests.helpers.remembered import add_refund, approve_due_at, remembered

pytestmark = pytest.mark.django_db

A_1001 = ["h_12", "h_13", "h_14", "h_15"]


def at_most_50(**fields) -> ApprovalPolicy:
    values = {
        "name": "≤ 50",
        "capability_pattern": "*",
        "condition_key": "amount",
        "condition_operator": "lte",
        "condition_threshold": Decimal(50),
        "approvals_required": 0,
        "auto_wait_minutes": 0,
    }
    return ApprovalPolicy.objects.create(**(values | fields))


def held(hold_id: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(kind=EventKind.HELD_FOR_PEOPLE, hold_id=hold_id))


def test_a_0_people_policy_at_most_50_pays_none_of_the_a_1001_refunds_and_says_why_once(samples):
    at_most_50()
    made = by_policy.approve_due(timezone.now() + timedelta(minutes=1))
    again = by_policy.approve_due(timezone.now() + timedelta(minutes=2))

    decided = {decision.hold.hold_id for decision in made + again}
    assert decided.isdisjoint(A_1001)
    assert not Decision.objects.filter(hold__hold_id__in=A_1001).exists()
    assert held("h_13") == []  # its other refund, 129.00 on A-1002, is over 50: the policy does not apply
    for hold_id in ("h_12", "h_14", "h_15"):
        [event] = held(hold_id)
        assert event.payload["path"] == "0-people policy" and event.payload["reason"] == "possible_duplicate"
        assert sorted(event.payload["duplicates"]) == sorted(set(A_1001) - {hold_id})
        assert "‘≤ 50’ (0-people policy) left it to people: possible duplicate of" in summary(event)


def test_a_remembered_approval_pays_no_second_refund_of_the_same_order_but_pays_another_order(
    platform_client, platform_state, alice
):
    RememberAllowance.objects.create(agent_pattern="refund-bot", capability_pattern="refund", daily_cap_count=3)
    first = add_refund(platform_client, platform_state, "h_first", "12.00")  # on order A-h_first
    remembered(alice, first, None)
    retried = [{"id": "A-h_first", "title": "refund", "data": {"order_id": "A-h_first", "amount": "12.00"}}]
    again = add_refund(platform_client, platform_state, "h_again", "12.00", items=retried)  # a retry, say
    platform_state.add_hold(
        "default",
        {
            "hold_id": "h_other",
            "agent": "refund-bot",
            "capability": "refund",
            "items": [{"id": "A-2", "title": "refund", "data": {"order_id": "A-2", "amount": "12.00"}}],
        },
    )
    sync.sync_env(platform_client, "default")

    made = approve_due_at(Hold.objects.get(hold_id="h_other").first_seen_at + timedelta(minutes=1))

    assert [decision.hold.hold_id for decision in made] == ["h_other"]
    assert not Decision.objects.filter(hold=again).exists()
    [event] = held("h_again")
    assert event.payload["path"] == "remembered approval" and event.payload["duplicates"] == ["h_first"]


def test_a_default_approve_waits_for_a_person_too(samples):
    at_most_50(approvals_required=1, expiry_outcome="approve", expiry_outcome_minutes=10)
    hold = Hold.objects.get(hold_id="h_15")  # expires in 4 minutes
    with time_machine.travel(hold.expires_at - timedelta(minutes=1), tick=False):
        made = by_policy.send_default_outcomes()

    assert hold.pk not in {decision.hold_id for decision in made}
    assert not Decision.objects.filter(hold=hold).exists()
    [event] = held("h_15")
    assert event.payload["path"] == "default approve"


def test_a_bulk_approval_leaves_the_possible_duplicates_out_with_the_reason(samples, alice_client):
    picked = [samples[hold_id] for hold_id in (*A_1001, "h_17")]
    summary = alice_client.post(BULK, selected(picked, "approve"))
    page = summary.content.decode()

    plan = summary.context["plan"]
    assert [entry.hold.hold_id for entry in plan.included] == ["h_17"]
    assert {entry.hold.hold_id for entry in plan.left_out} == set(A_1001)
    assert all("possible duplicate of" in entry.reason for entry in plan.left_out)
    assert "Open it to check them and confirm" in page

    assert bulk_confirm(alice_client, summary).status_code in (200, 302)
    assert not Decision.objects.filter(hold__hold_id__in=A_1001).exists()
    assert Decision.objects.filter(hold__hold_id="h_17").exists()


def test_the_words_of_a_0_people_policy_say_a_possible_duplicate_waits_for_people(samples):
    """What the queue and the hold page may say of it (``approvals.alone.waiting_words``, asked with the guard)."""
    at_most_50()
    hold = samples["h_15"]
    need = policies.requirement(hold, policies.all_policies())
    duplicate = safeguard.guard(hold).needed

    words, why = alone.waiting_words(
        need, hold, timezone.now(), policies.DayTally(), approvable=True, possible_duplicate=duplicate
    )

    assert duplicate and words == "Waits for people"
    assert why == "‘≤ 50’ leaves it to people, as it is a possible duplicate"


def test_the_queue_and_the_hold_page_say_a_possible_duplicate_waits_for_people_under_a_0_people_policy(
    samples, alice_client
):
    at_most_50()

    queue = alice_client.get(reverse("queue")).content.decode()
    page = alice_client.get(reverse("hold", args=[samples["h_12"].pk])).content.decode()
    calm = alice_client.get(reverse("hold", args=[samples["h_17"].pk])).content.decode()

    link = f'href="{reverse("hold", args=[samples["h_12"].pk])}"'
    row = next(row for row in queue.split("<tr")[1:] if link in row.split("</tr>")[0]).split("</tr>")[0]
    assert "Waits for people" in row and "Approves itself" not in row
    assert "Waits for people" in page and "as it is a possible duplicate" in page
    assert "Approves itself at" in calm  # 15.00 on A-1004, a subject of its own: the policy pays it
