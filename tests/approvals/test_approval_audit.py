"""Each approval is its own audit event, and the decision page shows every approver in order.

Approvals are written here as the approval flow writes them (rows, and an ``approval_given``
event per approval, see ``audit.payloads``), so these tests read the audit, not the flow.
"""

import csv
import io
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from approvals.models import Approval, ApprovalPolicy
from audit import describe, events
from audit.models import AuditEvent, EventKind
from reviewqueue import roles
from tests.helpers.approval_history import ASKED, add_refunds, approve, decide, edit_to, link, rejected
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def carol(db):
    return make_user("carol", roles.REVIEWERS, first_name="Carol", last_name="Cole")


@pytest.fixture
def auditor(client, audrey):
    client.force_login(audrey)
    return client


@pytest.fixture
def large_refunds(db):
    return ApprovalPolicy.objects.create(name="Large refunds", approvals_required=2)


@pytest.fixture
def refund(platform_client, platform_state, db):
    return add_refunds(platform_client, platform_state, ["h_big"])[0]


def summary_of(approval) -> str:
    event = AuditEvent.objects.get(kind=EventKind.APPROVAL_GIVEN, payload__approval=approval.pk)
    return describe.summary(event)


# One line per approval


def test_an_approval_reads_as_who_gave_which_approval_under_which_policy_and_what_changed(refund, large_refunds, alice):
    given = approve(refund, large_refunds, alice, timezone.now(), edit_to("1000.00"))

    assert summary_of(given) == "alice gave approval 1 of 2 under “Large refunds”: amount 1,200.00 → 1,000.00"


def test_a_restart_is_worded_as_a_changed_decision(refund, large_refunds, alice, bob):
    approve(refund, large_refunds, alice, timezone.now(), edit_to("1000.00"))
    restart = approve(refund, large_refunds, bob, timezone.now(), edit_to("900.00"), round=2)

    assert summary_of(restart) == (
        "bob changed the earlier approvers' decision, starting round 2 with approval 1 of 2 under “Large refunds”: "
        "amount 1,200.00 → 900.00"
    )


def test_an_approval_without_changes_names_the_actions(refund, large_refunds, alice):
    items = [{"item_id": "A-1", "action": "approve", "original_data": ASKED, "data": None, "comment": ""}]

    assert summary_of(approve(refund, large_refunds, alice, timezone.now(), items)) == (
        "alice gave approval 1 of 2 under “Large refunds”: Approve A-1"
    )


def test_an_escalation_reads_as_to_whom_under_which_policy_and_why(refund):
    event = events.record(
        EventKind.ESCALATED,
        hold=refund,
        payload={
            "escalation": 1,
            "policy": "Large refunds",
            "group": "Finance leads",
            "reason": "not claimed 30 minutes after it arrived",
            "told": ["carol"],
        },
    )

    assert describe.summary(event) == (
        "to Finance leads under “Large refunds”: not claimed 30 minutes after it arrived — told carol"
    )
    assert event.actor_label == "system"


def test_a_payload_not_as_its_builder_writes_it_reads_as_its_message(refund, alice):
    """A row written before its kind's builder wrote a key (or mangled) must not fail the audit pages."""
    event = events.record(
        EventKind.APPROVAL_GIVEN,
        actor=alice,
        hold=refund,
        payload={"items": "nonsense", "policy": 7, "message": "as it was written"},
    )

    assert describe.summary(event) == "as it was written"


def test_the_audit_list_and_the_export_carry_approvals_and_escalations(auditor, refund, large_refunds, alice):
    approve(refund, large_refunds, alice, timezone.now(), edit_to("1000.00"))
    events.record(
        EventKind.ESCALATED,
        hold=refund,
        payload={"escalation": 1, "policy": "", "group": "Finance leads <b>", "reason": "waited", "told": []},
    )

    listed = auditor.get(reverse("audit:list")).content.decode()
    exported = auditor.get(reverse("audit:export")).getvalue().decode()

    assert "alice gave approval 1 of 2 under “Large refunds”: amount 1,200.00 → 1,000.00" in listed
    assert "to Finance leads &lt;b&gt;: waited — nobody in that group" in listed and "Finance leads <b>" not in listed
    rows = {row["kind"]: row for row in csv.DictReader(io.StringIO(exported))}
    assert (
        rows["approval_given"]["summary"].startswith("alice gave approval 1 of 2")
        and rows["approval_given"]["item_ids"] == "A-1"
    )
    assert rows["approval_given"]["actions"] == "edit"
    assert rows["escalated"]["summary"] == "to Finance leads <b>: waited — nobody in that group can see this hold"


# The decision page


def test_the_decision_page_shows_every_approver_in_order_with_what_they_approved(
    auditor, refund, large_refunds, alice, bob
):
    start = timezone.now() - timedelta(hours=1)
    first = approve(refund, large_refunds, alice, start, edit_to("1000.00"))
    second = approve(refund, large_refunds, bob, start + timedelta(minutes=20), edit_to("1000.00"), position=2)
    decision = decide(refund, bob, start + timedelta(minutes=20), edit_to("1000.00"))
    link(decision, first, second)

    page = auditor.get(reverse("audit:decision", args=[decision.pk])).content.decode()

    approvers = page[page.index("Approvers, in order") : page.index("<h2>Timing")]
    assert approvers.index("Alice Adams") < approvers.index("Bob Brown")
    assert "Round 1 · 1 of 2" in approvers and "Round 1 · 2 of 2" in approvers
    assert approvers.count("amount 1,200.00 → 1,000.00") == 2
    assert "Rejected the decision" not in approvers
    timeline = page[page.index("Audit events of this decision") :]
    assert timeline.count("Approval given") == 2 and "Decision submitted" in timeline


def test_the_decision_page_shows_a_restarted_round_before_the_one_that_counted(
    auditor, refund, large_refunds, alice, bob, carol
):
    start = timezone.now() - timedelta(hours=1)
    superseded = approve(refund, large_refunds, alice, start, edit_to("1000.00"))
    restart = approve(refund, large_refunds, bob, start + timedelta(minutes=5), edit_to("900.00"), round=2)
    last = approve(refund, large_refunds, carol, start + timedelta(minutes=9), edit_to("900.00"), round=2, position=2)
    decision = decide(refund, carol, start + timedelta(minutes=9), edit_to("900.00"))
    link(decision, restart, last)

    page = auditor.get(reverse("audit:decision", args=[decision.pk])).content.decode()

    approvers = page[page.index("Approvers, in order") : page.index("<h2>Timing")]
    assert approvers.index("Alice Adams") < approvers.index("Bob Brown") < approvers.index("Carol Cole")
    assert (
        "changed by the next round: did not count" in approvers and "changed the earlier round's decision" in approvers
    )
    assert superseded.decision_id is None
    assert page[page.index("Audit events of this decision") :].count("Approval given") == 3


def test_the_decision_page_says_when_a_later_approver_rejected_instead(auditor, refund, large_refunds, alice, bob):
    start = timezone.now() - timedelta(hours=1)
    first = approve(refund, large_refunds, alice, start, edit_to("1000.00"))
    decision = decide(refund, bob, start + timedelta(minutes=3), rejected())
    link(decision, first)

    page = auditor.get(reverse("audit:decision", args=[decision.pk])).content.decode()

    approvers = page[page.index("Approvers, in order") : page.index("<h2>Timing")]
    assert approvers.index("Alice Adams") < approvers.index("Bob Brown")
    assert "Rejected the decision instead of approving it" in approvers


def test_a_decision_without_approvals_shows_no_approvers(auditor, refund, alice):
    decision = decide(refund, alice, timezone.now(), rejected())

    page = auditor.get(reverse("audit:decision", args=[decision.pk])).content.decode()

    assert "Approvers, in order" not in page and "Decision submitted" in page


def test_approval_text_on_the_decision_page_is_shown_as_text(auditor, refund, large_refunds, alice, bob):
    hostile = "<script>alert(1)</script>"
    first = approve(refund, large_refunds, alice, timezone.now(), edit_to(hostile))
    decision = decide(refund, bob, timezone.now(), rejected())
    link(decision, first)

    page = auditor.get(reverse("audit:decision", args=[decision.pk])).content.decode()

    assert hostile not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_an_earlier_approvers_own_reject_reads_as_a_rejection_not_an_approval(auditor, refund, large_refunds, alice):
    start = timezone.now() - timedelta(hours=1)
    first = approve(refund, large_refunds, alice, start, edit_to("1000.00"))
    decision = decide(refund, alice, start + timedelta(minutes=3), rejected())
    link(decision, first)

    page = auditor.get(reverse("audit:decision", args=[decision.pk])).content.decode()

    approvers = page[page.index("Approvers, in order") : page.index("<h2>Timing")]
    assert approvers.count("Alice Adams") == 2 and "Rejected the decision instead of approving it" in approvers


def test_a_round_the_platforms_change_of_the_hold_ended_is_not_shown_as_restarted(
    auditor, refund, large_refunds, alice, bob, carol
):
    start = timezone.now() - timedelta(hours=1)
    lapsed = approve(refund, large_refunds, alice, start, edit_to("1000.00"))
    Approval.objects.filter(pk=lapsed.pk).update(payload_digest="before the change")
    second = approve(refund, large_refunds, bob, start + timedelta(minutes=5), edit_to("1000.00"), round=2)
    last = approve(refund, large_refunds, carol, start + timedelta(minutes=9), edit_to("1000.00"), round=2, position=2)
    decision = decide(refund, carol, start + timedelta(minutes=9), edit_to("1000.00"))
    link(decision, second, last)

    page = auditor.get(reverse("audit:decision", args=[decision.pk])).content.decode()

    approvers = page[page.index("Approvers, in order") : page.index("<h2>Timing")]
    assert "Alice Adams" not in approvers and "changed the earlier round's decision" not in approvers
    assert approvers.index("Bob Brown") < approvers.index("Carol Cole")
