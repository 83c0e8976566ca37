"""Each edited field comes back with its JSON kind: decimals, integers, numbers, checkboxes, nulls, text and JSON,
and what each refuses."""

import pytest

from holds.deciding.editing import Change, FieldError, FieldKind, changes, fields_for, read_fields
from tests.helpers.editing import REFUND, as_json, edit, error_for

# Kinds


@pytest.mark.parametrize(
    "typed, amount",
    [
        ("20", "20.00"),
        ("20.5", "20.50"),
        (" 20.25 ", "20.25"),
        ("20.500", "20.50"),
        (".5", "0.50"),
        ("007", "7.00"),
        ("-0", "0.00"),
        ("49.90", "49.90"),
        ("20,50", "20.50"),
        ("1.234,5", "1234.50"),
    ],
)
def test_a_decimal_comes_back_as_a_string_with_the_agents_decimal_places(typed, amount):
    edited, errors = edit({"amount": "49.90"}, amount=typed)

    assert errors == []
    assert edited == {"amount": amount}


def test_a_decimal_with_more_places_than_the_agent_used_is_refused():
    edited, errors = edit({"amount": "49.90"}, amount="20.555")

    assert errors == [FieldError(key="amount", name="item-0", message="use at most 2 decimal places")]
    assert edited == {"amount": "49.90"}


@pytest.mark.parametrize(
    "typed, message",
    [
        ("", "a number is needed"),
        *((typed, "a number such as 20.00 is needed") for typed in ["twenty", "1e3", "NaN", "٢٠", "."]),
        ("20.5.1", "write thousands in groups of three, as in 1.234.567, or without separators"),
        ("1,234", "write 1234 or 1.234: a comma can't tell thousands from decimals here"),
    ],
)
def test_a_decimal_that_is_not_a_number_is_refused(typed, message):
    _, errors = edit({"amount": "49.90"}, amount=typed)

    assert error_for(errors, "amount") == message


def test_text_that_merely_looks_like_a_decimal_on_one_line_is_text():
    fields = fields_for({"a": "49.90\n", "b": "49", "c": "١٢.٥٠"}, "item")

    assert [field.kind for field in fields] == [FieldKind.TEXT] * 3


def test_an_integer_stays_an_int():
    edited, errors = edit({"quantity": 2}, quantity=" 3 ")

    assert errors == []
    assert as_json(edited) == '{"quantity": 3}'


@pytest.mark.parametrize("typed", ["", "2.5", "two", "1_000", "٣", "true"])
def test_an_integer_field_refuses_anything_but_a_whole_number(typed):
    _, errors = edit({"quantity": 2}, quantity=typed)

    assert error_for(errors, "quantity") == "a whole number is needed"


def test_a_number_stays_a_float_even_when_typed_without_a_fraction():
    edited, errors = edit({"weight": 1.25, "scale": 0.5}, weight="2", scale="1e-3")

    assert errors == []
    assert as_json(edited) == '{"weight": 2.0, "scale": 0.001}'


@pytest.mark.parametrize(
    "typed, message",
    [
        ("heavy", "a number is needed"),
        ("nan", "a number is needed"),
        ("inf", "a number is needed"),
        ("", "a number is needed"),
        ("1e999", "the number is too large"),
    ],
)
def test_a_number_field_refuses_what_is_not_a_finite_number(typed, message):
    _, errors = edit({"weight": 1.25}, weight=typed)

    assert error_for(errors, "weight") == message


def test_a_checkbox_is_true_when_sent_with_any_value_and_false_when_left_out():
    fields = fields_for({"express": False, "gift": True}, "item")

    edited, errors = read_fields(fields, {"item-0": ""})

    assert errors == []
    assert edited == {"express": True, "gift": False}


def test_a_null_stays_null_when_left_empty_and_becomes_text_when_typed_in():
    assert edit({"note": None}, note="") == ({"note": None}, [])
    assert edit({"note": None}, note=" call first ") == ({"note": " call first "}, [])


def test_text_is_kept_exactly_with_its_line_breaks_as_lf():
    edited, errors = edit({"reason": "damaged"}, reason="  damaged\r\nbadly  ")

    assert errors == []
    assert edited == {"reason": "  damaged\nbadly  "}


def test_a_json_field_reads_back_edited_nested_data():
    edited, errors = edit(REFUND, lines='[{"sku": "L-1", "price": "10.00"}]')

    assert errors == []
    assert edited["lines"] == [{"sku": "L-1", "price": "10.00"}]
    assert changes(REFUND, edited) == [Change("lines", REFUND["lines"], [{"sku": "L-1", "price": "10.00"}])]


@pytest.mark.parametrize(
    "typed, message",
    [
        ('{"city" "Bern"}', "line 1 column 9: Expecting ':' delimiter"),
        ('{\n  "city": "Bern"\n', "line 3 column 1: Expecting ',' delimiter"),
        ("", "line 1 column 1: Expecting value"),
        ('{"city": NaN}', "NaN is not valid JSON"),
        ('["Bern"]', "a JSON object is needed"),
    ],
)
def test_a_json_field_that_is_not_json_of_the_same_shape_is_refused_saying_where(typed, message):
    edited, errors = edit(REFUND, address=typed)

    assert error_for(errors, "address") == message
    assert edited["address"] == REFUND["address"]
