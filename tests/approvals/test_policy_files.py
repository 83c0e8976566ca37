"""Policies as code: an admin writes every policy to a file, reviews it in version control, and loads it on a second
installation, which then treats every hold the same; a file with any problem changes nothing and says where."""

import json
from datetime import UTC, datetime
from decimal import Decimal
from io import StringIO

import pytest
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command

from approvals import policies
from approvals.models import ApprovalPolicy
from audit.models import AuditEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def groups():
    return {name: Group.objects.create(name=name) for name in ("Support leads", "Finance", "Legal")}


@pytest.fixture
def desk(groups):
    """Three policies using most of what a policy can say."""
    ApprovalPolicy.objects.create(
        name="large refunds",
        capability_pattern="support",
        condition_key="amount",
        condition_operator="gt",
        condition_threshold=Decimal("1000"),
        currency="USD",
        approvals_required=3,
        later_approver_group=groups["Finance"],
        escalate_at_percent=50,
        escalation_group=groups["Support leads"],
        decide_within_minutes=30,
    )
    ApprovalPolicy.objects.create(
        name="small refunds",
        agent_pattern="refund-*",
        condition_key="amount",
        condition_operator="lte",
        condition_threshold=Decimal("49.90"),
        approvals_required=0,
        auto_wait_minutes=5,
        daily_cap_count=100,
        daily_cap_amount=Decimal("2500.50"),
        valid_until=datetime(2027, 1, 31, 18, 0, tzinfo=UTC),
    )
    ApprovalPolicy.objects.create(
        name="one person, default reject",
        env_pattern="prod-[ab]",
        approvals_required=1,
        subject_total_over=Decimal("100"),
        subject_total_days=7,
        expiry_outcome="reject",
        expiry_outcome_minutes=2,
        expiry_outcome_comment="Nobody decided in time.",
    )


def dumped() -> str:
    out = StringIO()
    call_command("dumppolicies", stdout=out)
    return out.getvalue()


def load(tmp_path, text: str, *options) -> str:
    path = tmp_path / "policies.json"
    path.write_text(text, encoding="utf-8")
    out = StringIO()
    call_command("loadpolicies", str(path), *options, stdout=out)
    return out.getvalue()


def requirements(samples) -> dict:
    """What each sample hold needs, and under which policy."""
    found = {hold_id: policies.requirement(hold, ApprovalPolicy.objects.all()) for hold_id, hold in samples.items()}
    return {hold_id: (need.policy.name, need.approvals_required) if need else None for hold_id, need in found.items()}


def test_a_dump_loaded_on_a_fresh_installation_gives_the_same_policies_and_the_same_behaviour(desk, samples, tmp_path):
    file = dumped()
    before = requirements(samples)
    ApprovalPolicy.objects.all().delete()  # the second installation: the same groups, no policy yet

    said = load(tmp_path, file)

    assert said.splitlines()[-1] == "3 policies changed"
    assert dumped() == file
    assert requirements(samples) == before and set(before.values()) != {None}
    large = json.loads(file)["policies"][0]
    assert large["name"] == "large refunds" and large["when"] == {"key": "amount", "op": "gt", "value": "1000"}
    assert large["stages"] == [{"approvals": 1}, {"group": "Finance", "approvals": 2}]
    assert json.loads(file)["policies"][2]["daily_cap_amount"] == "2500.5"


def test_a_load_adds_changes_and_removes_each_audited_and_a_second_load_changes_nothing(desk, tmp_path):
    wanted = json.loads(dumped())
    wanted["policies"] = [policy for policy in wanted["policies"] if policy["name"] != "small refunds"]
    wanted["policies"][0]["stages"] = [{"approvals": 2}]  # large refunds: two of anyone, no later group
    wanted["policies"].append({"name": "legal review", "agent": "contracts-*", "stages": [{"approvals": 1}]})

    said = load(tmp_path, json.dumps(wanted))

    assert said.splitlines() == [
        "change large refunds (approvals_required: 3 -> 2; later_approver_group: 'Finance' -> None)",
        "add legal review",
        "remove small refunds",
        "3 policies changed",
    ]
    assert sorted(ApprovalPolicy.objects.values_list("name", flat=True)) == [
        "large refunds",
        "legal review",
        "one person, default reject",
    ]
    assert ApprovalPolicy.objects.get(name="legal review").enabled  # a key left out: the admin's default
    events = AuditEvent.objects.filter(kind="setting_changed", payload__model="approvals.approvalpolicy")
    actions = sorted((event.payload["action"], event.payload["object"]) for event in events)
    assert actions == [("added", "legal review"), ("changed", "large refunds"), ("deleted", "small refunds")]
    assert all(event.actor is None for event in events)
    assert load(tmp_path, json.dumps(wanted)).splitlines() == ["0 policies changed"]


def test_a_dry_run_says_what_would_change_and_changes_nothing(desk, tmp_path):
    said = load(tmp_path, json.dumps({"policies": []}), "--dry-run")

    assert said.splitlines()[-1] == "3 policies would change"
    assert ApprovalPolicy.objects.count() == 3 and not AuditEvent.objects.exists()


@pytest.mark.parametrize(
    "policy, line, problem",
    [
        ({"name": "p", "stages": [{"group": "Finanse", "approvals": 1}]}, 3, 'no group is named "Finanse"'),
        ({"name": "p", "agnet": "x", "stages": []}, 3, 'unknown key "agnet"'),
        ({"name": "p", "agent": "refund-[", "stages": [{"approvals": 1}]}, 3, "a “[” opens a set that no “]” closes"),
        ({"name": "p", "stages": [{"approvals": 0}]}, 3, "a stage needs 1 to 50 people"),
        ({"name": "p", "stages": [{"approvals": 30}, {"group": "Legal", "approvals": 30}]}, 3, "50 people at most"),
        ({"name": "p", "stages": [{"approvals": "all"}]}, 3, 'a stage of "all" names the group'),
        ({"name": "p", "stages": [{"group": [], "approvals": 1}]}, 3, "a stage's \"group\" is a group's name"),
        ({"name": "p", "stages": [{"approvals": 1, "with_previous": True}]}, 3, "no stage before it"),
        ({"name": "p", "stages": [{"approvals": 1}, {"approvals": 1, "with_previous": "yes"}]}, 3, "true or false"),
        ({"name": "p", "stages": "two"}, 3, '"stages" is a list'),
        ({"name": "p", "escalation_group": "Nobody", "stages": []}, 3, 'no group is named "Nobody"'),
        ({"name": "p", "stages": [], "when": {"key": "amount"}}, 3, '"when" is null or'),
        ({"name": "p", "stages": [{"approvals": 2}], "expiry_outcome": "approve"}, 3, "at most one person"),
    ],
)
def test_a_file_with_one_bad_policy_changes_nothing_and_names_its_line(desk, tmp_path, policy, line, problem):
    good = {"name": "fine", "stages": [{"approvals": 1}]}
    text = '{"policies": [\n  ' + json.dumps(good) + ",\n  " + json.dumps(policy) + "\n]}"
    before = dumped()

    with pytest.raises(CommandError) as refused:
        load(tmp_path, text)

    assert f"line {line}" in str(refused.value) and problem in str(refused.value)
    assert dumped() == before and not AuditEvent.objects.exists()


@pytest.mark.parametrize(
    "text, problem",
    [
        ("{", "line 1: not JSON"),
        ("[]", 'the file is one object, {"policies": [...]}'),
        ('{"policies": [{"name": "a", "stages": []}, {"name": "a", "stages": []}]}', "a second policy of that name"),
        ('{"policies": [7]}', "each policy is an object"),
        ('{"policies": [{"stages": []}]}', '"name" is the policy'),
    ],
)
def test_a_file_that_is_no_policy_file_changes_nothing(desk, tmp_path, text, problem):
    with pytest.raises(CommandError, match="changes nothing") as refused:
        load(tmp_path, text)

    assert problem in str(refused.value) and ApprovalPolicy.objects.count() == 3
