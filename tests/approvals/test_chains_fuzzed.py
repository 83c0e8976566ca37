"""Nothing reaches the platform before every stage of a chain is complete with distinct people (issue 49).

Hypothesis writes chains (one to four stages, each of a group or any reviewer, of one or two people or everyone in
its group, after the stage before it or alongside it), gives six reviewers random groups, and has them approve, edit,
reject and leave groups in any order, through ``decisions.submit``, the path every channel takes. Whatever decision
is made is then checked against a reading of the chain written here, apart from the engine's: an approving decision
needs, in every stage, that many distinct people who were in its group when they approved, all of whom approved the
data sent.
"""

import itertools
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from approvals.models import ApprovalPolicy
from holds.deciding import decisions
from holds.mirror import sync
from holds.models import Decision, Hold
from tests.helpers.chains import chain_policy, member
from tests.helpers.duplicates import every_duplicate

pytestmark = pytest.mark.django_db

GROUPS = ("G0", "G1", "G2")
PEOPLE = 6
STAGES = st.lists(
    st.tuples(st.sampled_from([*GROUPS, None]), st.sampled_from([1, 2, None]), st.booleans()).map(
        lambda stage: (stage[0], stage[1] if stage[0] or stage[1] else 1, stage[2])
    ),
    min_size=1,
    max_size=4,
).map(lambda stages: [(*stages[0][:2], False), *stages[1:]])  # the first stage has none before it to run alongside
MEMBERSHIPS = st.lists(st.sets(st.sampled_from(GROUPS), min_size=1), min_size=PEOPLE, max_size=PEOPLE)
STEPS = st.lists(
    st.tuples(
        st.integers(0, PEOPLE - 1),
        st.sampled_from(["approve"] * 12 + ["edit", "edit", "reject", "leave"]),
        st.sampled_from(["1500.00", "1400.00"]),
        st.sampled_from(GROUPS),
    ),
    min_size=3,
    max_size=16,
)


@pytest.fixture
def people(db):
    return [member(f"p{index}") for index in range(PEOPLE)]


@pytest.fixture
def counter():
    return itertools.count()


def _mirror(platform_state, platform_client, n: int) -> Hold:
    env = f"chain{n}"  # an env of its own: each sync reads only this example's hold
    platform_state.add_hold(
        env,
        {
            "hold_id": f"h_{n}",
            "capability": "refund",
            "items": [{"id": f"c{n}", "title": "refund", "data": {"order_id": f"A-{n}", "amount": "1500.00"}}],
        },
    )
    sync.sync_env(platform_client, env)
    return Hold.objects.get(env=env, hold_id=f"h_{n}")


def _choices(hold: Hold, action: str, amount: str) -> list:
    item = hold.items.get()
    if action == "edit":
        return [decisions.ItemChoice(item.item_id, "edit", {**item.data, "amount": amount})]
    return [decisions.ItemChoice(item.item_id, action)]


@pytest.mark.long
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@given(stages=STAGES, memberships=MEMBERSHIPS, steps=STEPS)
def test_no_decision_approves_before_every_stage_has_its_distinct_people(
    stages, memberships, steps, people, counter, platform_state, platform_client
):
    ApprovalPolicy.objects.all().delete()
    chain_policy(stages, over="1000")
    for person, groups in zip(people, memberships, strict=True):
        person.groups.set([Group.objects.get_or_create(name=name)[0] for name in groups])
    hold = _mirror(platform_state, platform_client, next(counter))
    in_groups_when_approved: dict[int, set[str]] = {}

    for who, action, amount, group in steps:
        person = people[who]
        if action == "leave":
            person.groups.remove(Group.objects.get(name=group))
            continue
        groups = set(person.groups.values_list("name", flat=True))
        try:
            made = decisions.submit(
                hold, person, _choices(hold, action, amount), duplicates_checked=every_duplicate(hold)
            )
        except decisions.DecisionRefused:
            continue
        for approval in hold.approvals.filter(approver=person):
            in_groups_when_approved.setdefault(approval.pk, groups)
        if isinstance(made, Decision):
            rejected = {item.action for item in made.items.all()} == {"reject"}
            event("a reject" if rejected else f"an approval by {made.approvals.count()} people")
            _check(made, stages, in_groups_when_approved)
            break


def _check(decision: Decision, stages: list[tuple], in_groups: dict[int, set[str]]) -> None:
    sent = [(item.action, item.data) for item in decision.items.all()]
    if all(action == "reject" for action, _ in sent) or stages == [(None, 1, False)]:
        return  # a reject needs no chain, and one reviewer, anyone, decides alone
    linked = list(decision.approvals.all())
    assert len({approval.approver_id for approval in linked}) == len(linked), "a person counted twice"
    for position, (group, approvals, _) in enumerate(stages, start=1):
        counted = [approval for approval in linked if approval.stage == position]
        if group is not None:
            assert all(group in in_groups[approval.pk] for approval in counted), f"stage {position}: outsider"
        if approvals is None:  # everyone in the group, as it is when sent: every one of them approved in this stage
            members = set(Group.objects.get(name=group).user_set.filter(is_active=True).values_list("pk", flat=True))
            assert members and members <= {one.approver_id for one in counted}, f"stage {position}: not everyone"
        else:
            assert len(counted) >= approvals, f"stage {position} sent with {len(counted)} of {approvals}"
    for approval in linked:
        approved = [(item["action"], item.get("data")) for item in approval.items]
        assert [action for action, _ in approved] == [action for action, _ in sent]
        for (action, data), (_, sent_data) in zip(approved, sent, strict=True):
            if action == "edit":
                assert Decimal(data["amount"]) == Decimal(sent_data["amount"]), "sent data nobody approved"
