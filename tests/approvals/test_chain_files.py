"""Approval chains kept as code: the issue's chain loaded from a file, dumped back the same, loaded on a second
installation with the same behaviour; a file naming an unknown group changes nothing."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from approvals import rounds
from approvals.models import ApprovalPolicy, ApprovalStage
from audit.models import AuditEvent
from holds.deciding import decisions
from holds.models import Decision
from tests.helpers.chains import member
from tests.helpers.duplicates import every_duplicate

pytestmark = pytest.mark.django_db

CHAIN = {
    "name": "large refunds",
    "agent": "*",
    "capability": "",
    "env": "",
    "when": {"key": "amount", "op": "gt", "value": "1000"},
    "currency": "",
    "stages": [
        {"group": "Support leads", "approvals": 1},
        {"group": "Finance", "approvals": 2},
        {"group": "Legal", "approvals": 1, "with_previous": True},
    ],
}


@pytest.fixture
def people(db):
    return {
        "sam": member("sam", "Support leads"),
        "fay": member("fay", "Finance"),
        "fin": member("fin", "Finance"),
        "lee": member("lee", "Legal"),
    }


def load(tmp_path, policies: list[dict], *options) -> str:
    path = tmp_path / "policies.json"
    path.write_text(json.dumps({"policies": policies}, indent=1), encoding="utf-8")
    out = StringIO()
    call_command("loadpolicies", str(path), *options, stdout=out)
    return out.getvalue()


def dumped() -> dict:
    out = StringIO()
    call_command("dumppolicies", stdout=out)
    return json.loads(out.getvalue())


def approve_in_order(refund, people) -> list:
    made = []
    for name in ("sam", "fay", "lee", "fin"):
        choices = [decisions.ItemChoice("call_1", "approve")]
        made.append(decisions.submit(refund, people[name], choices, duplicates_checked=every_duplicate(refund)))
    return made


def test_the_issues_chain_loads_dumps_the_same_and_works_on_a_second_installation(
    people, refund, tmp_path, immediate_delivery
):
    said = load(tmp_path, [CHAIN])
    file = dumped()
    ApprovalPolicy.objects.all().delete()  # the second installation: the same groups, no policy yet
    load(tmp_path, file["policies"])
    standing = rounds.standing(refund)
    made = approve_in_order(refund, people)

    assert said.splitlines() == ["add large refunds", "1 policy changed"]
    assert file["policies"][0]["stages"] == CHAIN["stages"] and dumped() == file
    assert [(state.stage.who, state.needs, state.state) for state in standing.states] == [
        ("Support leads", 1, "waiting"),
        ("Finance", 2, "later"),
        ("Legal", 1, "later"),
    ]
    assert [type(one).__name__ for one in made] == ["Approval", "Approval", "Approval", "Decision"]
    assert Decision.objects.count() == 1


def test_everyone_in_a_group_is_written_all_and_a_chain_change_is_audited_and_dry_run_first(people, tmp_path):
    everyone = {**CHAIN, "stages": [{"approvals": 1}, {"group": "Legal", "approvals": "all"}]}
    load(tmp_path, [CHAIN])

    would = load(tmp_path, [everyone], "--dry-run")
    unchanged = list(ApprovalStage.objects.values_list("group__name", "approvals"))
    load(tmp_path, [everyone])
    change = AuditEvent.objects.filter(kind="setting_changed", payload__action="changed").get()

    assert would.splitlines()[0] == (
        "change large refunds (stages: ['1 of Support leads', '2 of Finance', '1 of Legal, with the previous'] -> "
        "['1 of any reviewer', 'all of Legal']; approvals_required: 4 -> 2)"
    )
    assert unchanged == [("Support leads", 1), ("Finance", 2), ("Legal", 1)]
    assert dumped()["policies"][0]["stages"] == everyone["stages"]
    assert change.payload["changes"]["fields"]["stages"][1] == ["1 of any reviewer", "all of Legal"]


def test_a_file_whose_chain_names_an_unknown_group_changes_nothing_and_says_where(people, tmp_path):
    load(tmp_path, [CHAIN])
    before = dumped()
    typo = {**CHAIN, "stages": [*CHAIN["stages"][:2], {"group": "Legul", "approvals": 1, "with_previous": True}]}

    with pytest.raises(CommandError) as refused:
        load(tmp_path, [typo])

    assert 'line 3: policy "large refunds": stage 3, line 23: a stage\'s group: no group is named "Legul"' in str(
        refused.value
    )
    assert dumped() == before


def test_a_chain_with_a_default_approve_is_refused(people, tmp_path):
    with pytest.raises(CommandError) as refused:
        load(tmp_path, [{**CHAIN, "expiry_outcome": "approve", "expiry_outcome_minutes": 5}])

    assert "A default approve never stands in for an approval chain's stages." in str(refused.value)
    assert not ApprovalPolicy.objects.exists()


def test_a_stage_of_a_group_with_nobody_yet_loads_with_a_warning(people, tmp_path):
    from django.contrib.auth.models import Group

    Group.objects.create(name="Treasury")
    path = tmp_path / "policies.json"
    path.write_text(json.dumps({"policies": [{**CHAIN, "stages": [{"group": "Treasury", "approvals": 1}]}]}))
    out, err = StringIO(), StringIO()

    call_command("loadpolicies", str(path), stdout=out, stderr=err)

    assert out.getvalue().splitlines()[-1] == "1 policy changed"
    assert err.getvalue().strip() == (
        'warning: policy "large refunds": stage 1 asks Treasury, which has no active reviewer yet: its holds will wait'
    )
