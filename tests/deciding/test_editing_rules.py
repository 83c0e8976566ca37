"""The business rules applied to an edited item: a refund lowered, never raised nor made nothing, and the
``EDIT_RULES`` setting that chooses them."""

import re

import pytest
from django.core.exceptions import ImproperlyConfigured

from holds.deciding import rules
from holds.deciding.editing import Change, FieldError, validate_item
from tests.helpers.editing import error_for

# Business rules


def test_a_lowered_refund_is_accepted_and_shown_as_the_one_change():
    edited, found, errors = validate_item({"order_id": "A-1001", "amount": "49.90"}, "item", {"item-1": "20"})

    assert errors == []
    assert edited == {"order_id": "A-1001", "amount": "20.00"}
    assert found == [Change("amount", "49.90", "20.00")]


def test_a_refund_of_nothing_is_refused():
    _, _, errors = validate_item({"amount": "49.90"}, "item", {"item-0": "0"})

    assert errors == [FieldError(key="amount", name="item-0", message="must be more than 0")]


def test_a_refund_above_what_the_agent_asked_is_refused_naming_the_asked_amount():
    _, _, errors = validate_item({"refund_amount": "49.90"}, "item", {"item-0": "60.00"})

    assert error_for(errors, "refund_amount") == "must not be more than the 49.90 the agent asked for"


def test_rules_judge_ints_and_floats_and_refuse_what_is_not_a_number():
    assert rules.not_above_original("total", 50, 50.5) == "must not be more than the 50 the agent asked for"
    assert rules.not_above_original("total", 49.9, "49.90") is None
    assert (
        rules.not_above_original("total", "lots", "60.00") == "can't be changed: the agent's 'lots' could not be read"
    )
    assert rules.not_above_original("total", True, 2) == "can't be changed: the agent's 'true' could not be read"
    assert rules.positive("total", 5, -1) == "must be more than 0"
    assert rules.positive("total", 5, "free") == "a number such as 20.00 is needed"


def test_rules_leave_alone_what_the_reviewer_did_not_change():
    _, _, errors = validate_item({"amount": "0.00", "total": "80.00"}, "item", {"item-1": "70"})

    assert errors == []


def test_a_value_that_could_not_be_read_is_reported_once_and_not_judged_by_the_rules():
    _, _, errors = validate_item({"amount": "49.90", "quantity": 1}, "item", {"item-0": "-1.555", "item-1": "x"})

    assert [(error.key, error.message) for error in errors] == [
        ("amount", "use at most 2 decimal places"),
        ("quantity", "a whole number is needed"),
    ]


def test_without_the_setting_amount_refund_amount_and_total_are_protected(settings):
    if hasattr(settings, "EDIT_RULES"):
        del settings.EDIT_RULES

    for key in ("amount", "refund_amount", "total"):
        _, _, errors = validate_item({key: "49.90"}, "item", {"item-0": "50"})
        assert len(errors) == 1


def test_the_edit_rules_setting_chooses_the_rules_of_the_keys_it_names_and_every_other_amount_keeps_its_own(settings):
    settings.EDIT_RULES = {"price": ["positive"], "note": ["positive"]}
    data = {"amount": "49.90", "price": 12, "note": "x"}

    _, _, errors = validate_item(data, "item", {"item-0": "60", "item-1": "30", "item-2": "-3"})

    assert errors == [
        FieldError(key="amount", name="item-0", message="must not be more than the 49.90 the agent asked for"),
        FieldError(key="note", name="item-2", message="must be more than 0"),
    ]


@pytest.mark.parametrize(
    "configured, named",
    [
        ({"amount": ["positive", "at_most_100"]}, "'at_most_100'"),
        ({"amount": "positive"}, "EDIT_RULES['amount']"),
        (["positive"], "EDIT_RULES"),
    ],
)
def test_a_malformed_edit_rules_setting_is_refused_naming_the_problem(settings, configured, named):
    settings.EDIT_RULES = configured

    with pytest.raises(ImproperlyConfigured, match=re.escape(named)):
        validate_item({"amount": "49.90"}, "item", {})
