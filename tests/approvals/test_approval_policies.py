"""Which approval policy applies to a hold, and why: the most specific match, globs, conditions on item data."""

from decimal import Decimal
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from approvals.models import ApprovalPolicy
from approvals.policies import requirement


def hold(env="prod", agent="refund-bot", capability="refunds"):
    return SimpleNamespace(env=env, agent=agent, capability=capability)


def policy(name, count=2, env="", agent="", capability="", condition=None):
    key, operator, threshold = condition or ("", "", None)
    return ApprovalPolicy(
        name=name,
        approvals_required=count,
        env_pattern=env,
        agent_pattern=agent,
        capability_pattern=capability,
        condition_key=key,
        condition_operator=operator,
        condition_threshold=threshold,
    )


LARGE_REFUNDS = ("amount", "gt", Decimal("500.0000"))


def test_a_hold_no_policy_matches_has_no_requirement():
    assert requirement(hold(), [policy("staging", env="staging")], []) is None


def test_the_reason_names_the_number_and_the_threshold_as_people_write_them():
    found = requirement(hold(), [policy("large refunds", condition=LARGE_REFUNDS)], [{"amount": "1200.00"}])

    assert found.approvals_required == 2
    assert found.reason == "Needs 2 approvals: amount 1,200.00 > 500"


def test_a_policy_without_a_condition_names_itself():
    found = requirement(hold(), [policy("prod", env="prod", count=3)], [])

    assert found.reason == "Needs 3 approvals: policy “prod”"


def test_an_exact_pattern_beats_a_glob_and_a_glob_beats_a_blank():
    policies = [policy("any", count=3), policy("prod-ish", env="pro*", count=2), policy("prod", env="prod", count=1)]

    assert requirement(hold(), policies, []).policy.name == "prod"
    assert requirement(hold(env="production"), policies, []).policy.name == "prod-ish"
    assert requirement(hold(env="dev"), policies, []).policy.name == "any"


def test_a_condition_makes_a_policy_more_specific_but_only_when_it_holds():
    policies = [
        policy("refund bot", agent="refund-*", count=2),
        policy("large", agent="refund-*", condition=LARGE_REFUNDS, count=3),
    ]

    assert requirement(hold(), policies, [{"amount": "900"}]).policy.name == "large"
    assert requirement(hold(), policies, [{"amount": "90"}]).policy.name == "refund bot"


def test_on_a_tie_the_stricter_then_the_name_wins_whatever_the_order():
    first, second, third = (
        policy("b", env="prod", count=2),
        policy("a", env="prod", count=2),
        policy("c", env="prod", count=1),
    )

    assert requirement(hold(), [first, second, third], []).policy.name == "b"
    assert requirement(hold(), [third, second, first], []).policy.name == "b"


def test_globs_are_case_sensitive_and_match_the_whole_value():
    policies = [policy("refunds", capability="refund?")]

    assert requirement(hold(capability="refunds"), policies, []) is not None
    assert requirement(hold(capability="Refunds"), policies, []) is None
    assert requirement(hold(capability="refunds-eu"), policies, []) is None


def test_any_item_passing_the_condition_is_enough():
    found = requirement(hold(), [policy("large", condition=LARGE_REFUNDS)], [{"amount": "10"}, None, {"amount": 501}])

    assert found.reason == "Needs 2 approvals: amount 501 > 500"


def test_each_operator_compares_as_its_sign_says():
    cases = {
        "gt": ("500", False),
        "gte": ("500", True),
        "lt": ("499.99", True),
        "lte": ("500.01", False),
        "eq": ("500.00", True),
    }
    for operator, (amount, matches) in cases.items():
        found = requirement(
            hold(), [policy(operator, condition=("amount", operator, Decimal(500)))], [{"amount": amount}]
        )
        assert (found is not None) == matches, operator


def test_a_value_that_is_no_number_at_the_conditions_key_makes_the_condition_hold():
    policies = [policy("large", condition=LARGE_REFUNDS)]
    for value in (True, "lots", "1,2OO.00", [1, 2], {"x": "1200"}, None, "NaN", "Infinity", ""):
        found = requirement(hold(), policies, [{"amount": value}])
        assert found is not None and "could not be read: treated as > 500" in found.why, value
    assert requirement(hold(), policies, [{"reason": "1,200.00"}]) is None  # no amount at all: no condition


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.none(),
            st.text(),
            st.integers(),
            st.floats(),
            st.booleans(),
            st.dictionaries(
                st.text(), st.one_of(st.text(), st.integers(), st.floats(allow_nan=True), st.booleans(), st.none())
            ),
        )
    )
)
def test_hostile_item_data_never_breaks_the_choice(item_data):
    policies = [policy("large", condition=LARGE_REFUNDS), policy("prod", env="prod")]

    found = requirement(hold(), policies, item_data)

    assert found is not None and found.policy.name in {"large", "prod"}
    assert found.reason.startswith("Needs 2 approvals: ")
