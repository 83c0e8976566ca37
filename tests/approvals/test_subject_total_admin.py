"""An admin sets a policy's condition on a subject's total: validated, audited, and described wherever the policy's
condition is."""

from decimal import Decimal

import pytest
from django.urls import reverse

from approvals.models import ApprovalPolicy
from audit.models import AuditEvent, EventKind
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db

ADD = reverse("admin:approvals_approvalpolicy_add")


@pytest.fixture
def root_client(client):
    client.force_login(make_user("root", is_superuser=True, is_staff=True))
    return client


def policy_form(**overrides):
    form = {
        "name": "One order above 100 in 30 days",
        "capability_pattern": "refund",
        "subject_total_over": "100",
        "subject_total_days": "30",
        "approvals_required": "2",
    }
    return form | overrides


def test_an_admin_adds_the_condition_and_the_audit_and_the_list_say_it(root_client):
    response = root_client.post(ADD, policy_form())

    assert response.status_code == 302
    policy = ApprovalPolicy.objects.get()
    assert (policy.subject_total_over, policy.subject_total_days) == (Decimal(100), 30)
    [event] = AuditEvent.objects.filter(kind=EventKind.SETTING_CHANGED)
    assert event.payload["changes"]["fields"]["subject_total_over"] == [None, "100.0000"]
    listed = root_client.get(reverse("admin:approvals_approvalpolicy_changelist")).content.decode()
    assert "subject total &gt; 100 in 30 days" in listed


def test_blank_days_count_30(root_client):
    assert root_client.post(ADD, policy_form(subject_total_days="")).status_code == 302
    assert ApprovalPolicy.objects.get().subject_total_days == 30


def test_a_policy_needing_nobody_on_a_subject_total_does_not_approve_every_hold(root_client):
    form = policy_form(capability_pattern="", approvals_required="0", auto_wait_minutes="")

    assert root_client.post(ADD, form).status_code == 302  # no "I mean every hold" asked: the total is a condition


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("subject_total_days", "0", "A subject total counts 1 to 365 days."),
        ("subject_total_days", "366", "A subject total counts 1 to 365 days."),
        ("subject_total_over", "-1", "A subject total is compared with 0 or more."),
        ("subject_total_over", "1,5OO", "Enter a number."),
    ],
)
def test_a_condition_out_of_bounds_is_refused_with_a_clear_message(root_client, field, value, words):
    response = root_client.post(ADD, policy_form(**{field: value}))

    assert response.status_code == 200 and not ApprovalPolicy.objects.exists()
    assert words in response.content.decode()
