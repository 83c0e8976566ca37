"""Admins manage approval policies in the Django admin; each change is audited with its values before and after."""

from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from approvals.models import Approval, ApprovalPolicy
from audit import chain
from audit.models import AuditEvent, EventKind
from reviewqueue.admin import CappedCountPaginator
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db

ADD = reverse("admin:approvals_approvalpolicy_add")


@pytest.fixture
def root_client(client):
    client.force_login(make_user("root", is_superuser=True, is_staff=True))
    return client


def policy_form(**overrides):
    form = {
        "name": "Large refunds",
        "env_pattern": "",
        "agent_pattern": "",
        "capability_pattern": "refund*",
        "condition_key": "amount",
        "condition_operator": "gt",
        "condition_threshold": "500",
        "approvals_required": "2",
        "later_approver_group": "",
        "escalate_after_minutes": "",
        "escalate_at_percent": "",
        "escalation_group": "",
    }
    return form | overrides


def setting_events():
    return list(AuditEvent.objects.filter(kind=EventKind.SETTING_CHANGED).order_by("sequence"))


def test_an_admin_adds_a_policy_and_the_audit_records_every_value(root_client):
    response = root_client.post(ADD, policy_form())

    policy = ApprovalPolicy.objects.get()
    [event] = setting_events()
    assert response.status_code == 302
    assert (policy.condition_threshold, policy.approvals_required) == (Decimal(500), 2)
    assert event.payload["model"] == "approvals.approvalpolicy" and event.payload["action"] == "added"
    assert event.payload["changes"]["fields"]["capability_pattern"] == [None, "refund*"]
    assert event.payload["changes"]["fields"]["condition_threshold"] == [None, "500.0000"]


def test_a_change_is_audited_with_the_changed_fields_before_and_after(root_client):
    root_client.post(ADD, policy_form())
    policy = ApprovalPolicy.objects.get()
    finance = Group.objects.create(name="Finance leads")

    root_client.post(
        reverse("admin:approvals_approvalpolicy_change", args=[policy.pk]),
        policy_form(condition_threshold="750.50", approvals_required="3", later_approver_group=str(finance.pk)),
    )

    changed = setting_events()[-1]
    assert changed.payload["action"] == "changed"
    assert changed.payload["changes"]["fields"] == {
        "condition_threshold": ["500.0000", "750.5000"],
        "approvals_required": [2, 3],
        "later_approver_group": [None, "Finance leads"],
    }
    assert chain.verify().broken is None


def test_a_deleted_policy_leaves_its_values_in_the_audit(root_client):
    root_client.post(ADD, policy_form())
    policy = ApprovalPolicy.objects.get()

    root_client.post(reverse("admin:approvals_approvalpolicy_delete", args=[policy.pk]), {"post": "yes"})

    deleted = setting_events()[-1]
    assert not ApprovalPolicy.objects.exists()
    assert deleted.payload["action"] == "deleted" and deleted.payload["before"]["condition_key"] == "amount"


def test_an_incomplete_condition_is_refused_with_a_clear_message(root_client):
    response = root_client.post(ADD, policy_form(condition_operator="", condition_threshold=""))

    page = response.content.decode()
    assert response.status_code == 200 and not ApprovalPolicy.objects.exists()
    assert "A condition needs a key, a comparison and a threshold; give all three or none." in page


def test_a_count_outside_zero_to_three_is_refused_with_a_clear_message(root_client):
    for count in ("-1", "4"):
        response = root_client.post(ADD, policy_form(approvals_required=count))
        assert "A policy needs 0, 1, 2 or 3 people." in response.content.decode()
    assert not ApprovalPolicy.objects.exists()


def test_hostile_values_are_field_errors_not_errors_of_the_server(root_client):
    response = root_client.post(ADD, policy_form(condition_threshold="1e999", approvals_required="x", name="a\x00b"))

    assert response.status_code in (200, 400) and not ApprovalPolicy.objects.exists()


def test_approvals_are_read_only_in_the_admin(root_client):
    listing = root_client.get(reverse("admin:approvals_approval_changelist"))
    adding = root_client.get(reverse("admin:approvals_approval_add"))

    assert listing.status_code == 200 and adding.status_code == 403
    assert not Approval.objects.exists()


def test_the_approvals_list_filters_by_the_policies_names_without_counting_the_table(
    root_client, platform_client, platform_state
):
    from holds.mirror import sync
    from holds.models import Hold

    platform_state.add_hold("default", {"hold_id": "h_big", "items": [{"id": "A-1", "data": {"amount": "1200.00"}}]})
    sync.sync_env(platform_client, "default")
    large = ApprovalPolicy.objects.create(name="Large refunds", approvals_required=2)
    ApprovalPolicy.objects.create(name="Payouts", approvals_required=3)
    approver = make_user("alice")
    for name in ("Large refunds", "Renamed since"):
        Approval.objects.create(
            hold=Hold.objects.get(),
            policy=large,
            policy_name=name,
            approvals_required=2,
            approver=approver,
            round=1 if name == "Large refunds" else 2,
            position=1,
            created_at="2026-11-30T12:00:00Z",
            items=[],
        )
    changelist = reverse("admin:approvals_approval_changelist")

    everything = root_client.get(changelist)
    filtered = root_client.get(changelist, {"policy_name": "Large refunds"})
    hostile = root_client.get(changelist, {"policy_name": "\x00"})

    choices = [
        choice["display"] for choice in everything.context["cl"].filter_specs[0].choices(everything.context["cl"])
    ]
    assert choices == ["All", "Large refunds", "Payouts"]
    assert not everything.context["cl"].show_full_result_count
    assert isinstance(everything.context["cl"].paginator, CappedCountPaginator)
    assert [a.policy_name for a in filtered.context["cl"].result_list] == ["Large refunds"]
    assert hostile.status_code == 400


# Policies that decide by themselves


def test_the_admin_shows_people_needed_and_saves_a_policy_needing_nobody(root_client):
    page = root_client.get(ADD).content.decode()
    response = root_client.post(
        ADD, policy_form(approvals_required="0", condition_operator="lte", condition_threshold="50")
    )

    assert "People needed:" in page
    assert response.status_code == 302
    assert ApprovalPolicy.objects.get().approvals_required == 0


def test_a_policy_needing_nobody_that_matches_every_hold_needs_the_box_ticked(root_client):
    every_hold = policy_form(
        approvals_required="0", capability_pattern="", condition_key="", condition_operator="", condition_threshold=""
    )

    refused = root_client.post(ADD, every_hold)
    meant = root_client.post(ADD, every_hold | {"every_hold_confirmed": "on"})

    assert "this policy approves every hold by itself" in refused.content.decode()
    assert meant.status_code == 302
    assert ApprovalPolicy.objects.get().every_hold_confirmed


def test_a_default_approve_is_refused_on_a_policy_needing_two_people(root_client):
    response = root_client.post(ADD, policy_form(expiry_outcome="approve", expiry_outcome_minutes="10"))

    assert response.status_code == 200
    assert "A default approve is allowed only on a policy needing at most one person." in response.content.decode()
    assert not ApprovalPolicy.objects.exists()


def test_a_default_outcome_needs_its_minutes(root_client):
    response = root_client.post(ADD, policy_form(approvals_required="1", expiry_outcome="reject"))

    assert "Say how many minutes before the expiry the default outcome is sent." in response.content.decode()
    assert not ApprovalPolicy.objects.exists()
