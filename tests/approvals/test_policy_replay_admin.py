"""An admin replays a policy's unsaved values from its change page: the figures follow the form, nothing is saved."""

import pytest
from django.urls import reverse

from approvals.models import ApprovalPolicy
from approvals.policy_form import ApprovalPolicyForm
from tests.helpers.replaying import decided_hold, small_refunds
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def root_client(client):
    client.force_login(make_user("root", is_superuser=True, is_staff=True))
    return client


def form_values(policy, **overrides):
    """The change form's values as the browser posts them, from the saved policy."""
    form = ApprovalPolicyForm(instance=policy)
    values = {}
    for name in form.fields:
        value = form.initial.get(name)
        if isinstance(value, bool):
            if value:
                values[name] = "on"
            continue
        values[name] = "" if value is None else str(value)
    return values | overrides


def test_replaying_these_values_follows_the_unsaved_threshold_and_saves_nothing(root_client):
    policy = small_refunds("100", wait=0)
    decided_hold(1, "refund-bot", 50, "approve", decided_days_ago=3)
    decided_hold(2, "refund-bot", 400, "reject", decided_days_ago=3)
    replay_url = reverse("admin:approvals_approvalpolicy_replay", args=[policy.pk])

    as_saved = root_client.post(replay_url, form_values(policy, replay_days="7"))
    raised = root_client.post(replay_url, form_values(policy, condition_threshold="500", replay_days="7"))

    assert as_saved.status_code == raised.status_code == 200
    assert as_saved.context["replayed"].figures()["would_approve"] == 1
    assert raised.context["replayed"].figures() == {
        "matched": 2,
        "would_approve": 2,
        "would_need_more": 0,
        "would_default": 0,
        "people_rejected": ["h_2"],
        "people_edited": [],
    }
    assert "h_2" in raised.content.decode()
    assert ApprovalPolicy.objects.get(pk=policy.pk).condition_threshold == 100


def test_the_change_page_shows_the_saved_policys_replay(root_client):
    policy = small_refunds("100", wait=0)
    decided_hold(1, "refund-bot", 50, "approve", decided_days_ago=3)

    page = root_client.get(reverse("admin:approvals_approvalpolicy_change", args=[policy.pk]))

    assert page.status_code == 200
    assert page.context["saved_replay"].would_approve == 1
    assert "Replay these values" in page.content.decode()


def test_a_window_not_offered_is_a_400_and_a_get_is_refused(root_client):
    policy = small_refunds()
    replay_url = reverse("admin:approvals_approvalpolicy_replay", args=[policy.pk])

    assert root_client.post(replay_url, form_values(policy, replay_days="31")).status_code == 400
    assert (
        root_client.get(
            reverse("admin:approvals_approvalpolicy_change", args=[policy.pk]), {"replay_days": "x"}
        ).status_code
        == 400
    )
    assert root_client.get(replay_url).status_code == 405


def test_only_staff_may_replay(client):
    policy = small_refunds()
    client.force_login(make_user("alice"))

    answer = client.post(reverse("admin:approvals_approvalpolicy_replay", args=[policy.pk]), {"replay_days": "7"})

    assert answer.status_code == 302 and "/login/" in answer["Location"]
