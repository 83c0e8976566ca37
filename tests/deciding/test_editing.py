"""A reviewer edits an item's data as typed fields; it comes back with its JSON types and the rules applied."""

import json
import re

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.http import QueryDict

from holds.deciding import rules
from holds.deciding.editing import (
    Change,
    FieldError,
    FieldKind,
    changes,
    fields_for,
    read_fields,
    validate_item,
)
from reviewqueue.agent_json import ABSENT
from reviewqueue.showing import display

REFUND = {
    "order_id": "A-1001",
    "amount": "49.90",
    "quantity": 2,
    "weight": 1.25,
    "express": True,
    "gift": False,
    "note": None,
    "lines": [{"sku": "L-1", "price": "12.50"}],
    "address": {"city": "Zürich", "street": "Bahnhofstrasse 1"},
    "reason": "arrived damaged\nbox was wet",
}


def untouched(fields):
    """What a browser sends for a form nobody changed: every input's initial text, every ticked checkbox."""
    submitted = {}
    for field in fields:
        if field.kind is FieldKind.BOOLEAN:
            if field.initial:
                submitted[field.name] = "on"
        else:
            submitted[field.name] = field.initial
    return submitted


def edit(data, **typed):
    """Submit the form for data with some fields typed over, by key; everything else untouched."""
    fields = fields_for(data, "item")
    submitted = untouched(fields)
    for field in fields:
        if field.key in typed:
            submitted[field.name] = typed[field.key]
    return read_fields(fields, submitted)


def as_json(value):
    """Compare as JSON text, so "49.90" != "49.9" and 2 != 2.0 != true."""
    return json.dumps(value, ensure_ascii=False)


def error_for(errors, key):
    [error] = [error for error in errors if error.key == key]
    return error.message


# Fields


def test_each_key_becomes_a_field_of_its_json_kind_in_the_data_order():
    fields = fields_for(REFUND, "item-3")

    assert [field.key for field in fields] == list(REFUND)
    assert [field.name for field in fields] == [f"item-3-{index}" for index in range(len(REFUND))]
    assert {field.key: field.kind for field in fields} == {
        "order_id": FieldKind.TEXT,
        "amount": FieldKind.DECIMAL,
        "quantity": FieldKind.INTEGER,
        "weight": FieldKind.NUMBER,
        "express": FieldKind.BOOLEAN,
        "gift": FieldKind.BOOLEAN,
        "note": FieldKind.NULL,
        "lines": FieldKind.JSON,
        "address": FieldKind.JSON,
        "reason": FieldKind.TEXT,
    }


def test_inputs_start_with_the_agents_values_as_text():
    fields = {field.key: field for field in fields_for(REFUND, "item")}

    assert fields["amount"].initial == "49.90" and fields["amount"].places == 2
    assert fields["quantity"].initial == "2" and fields["quantity"].places is None
    assert fields["weight"].initial == "1.25"
    assert fields["express"].initial is True and fields["gift"].initial is False
    assert fields["note"].initial == ""
    assert fields["address"].initial == '{\n  "city": "Zürich",\n  "street": "Bahnhofstrasse 1"\n}'


def test_json_and_long_or_multiline_text_get_a_textarea():
    fields = fields_for({"short": "x" * 80, "long": "x" * 81, "lines": "a\nb", "list": [], "n": 1}, "item")

    assert [field.multiline for field in fields] == [False, True, True, True, False]


# Round trips


def test_submitting_the_form_unchanged_gives_back_exactly_the_agents_data():
    fields = fields_for(REFUND, "item")

    edited, errors = read_fields(fields, untouched(fields))

    assert errors == []
    assert as_json(edited) == as_json(REFUND)
    assert changes(REFUND, edited) == []


def test_a_browser_sending_textarea_lines_as_crlf_changes_nothing():
    fields = fields_for(REFUND, "item")
    submitted = {
        name: value.replace("\n", "\r\n") if isinstance(value, str) else value
        for name, value in untouched(fields).items()
    }

    edited, errors = read_fields(fields, submitted)

    assert errors == []
    assert as_json(edited) == as_json(REFUND)


def test_a_field_missing_from_the_submission_keeps_its_value_but_a_missing_checkbox_is_unticked():
    edited, errors = read_fields(fields_for(REFUND, "item"), {})

    assert errors == []
    assert edited == REFUND | {"express": False}


def test_a_query_dict_from_a_real_form_post_is_read_like_a_dict():
    data = {"amount": "49.90", "express": False, "note": None}
    submitted = QueryDict("item-0=20&item-1=on&item-2=")

    edited, errors = read_fields(fields_for(data, "item"), submitted)

    assert errors == []
    assert edited == {"amount": "20.00", "express": True, "note": None}


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


# Hostile data


def test_hostile_keys_are_shown_never_used_as_field_names_and_survive_the_round_trip():
    data = {
        '<script>alert("x")</script>': "<b>bold</b>",
        "__proto__": {"admin": True},
        "": "empty key",
        "with spaces and 'quotes'": 1,
        "k" * 10_000: "v" * 100_000,
        "名前 🎉": "ünïcödé",
        "item-0": "a key that looks like a field name",
    }
    fields = fields_for(data, "item")

    assert [field.name for field in fields] == [f"item-{index}" for index in range(len(data))]
    edited, errors = read_fields(fields, untouched(fields) | {"item-5": "changed"})

    assert errors == []
    assert list(edited) == list(data)
    assert changes(data, edited) == [Change("名前 🎉", "ünïcödé", "changed")]


def test_characters_a_page_cannot_carry_are_shown_replaced_yet_come_back_unchanged():
    data = {"nul": "a\x00b", "surrogate": "a\ud800b", "nested": ["\ud800"], "key\udfff": 1}
    fields = fields_for(data, "item")

    assert [field.initial for field in fields[:2]] == ["a\ufffdb", "a\ufffdb"]
    assert json.loads(fields[2].initial) == ["\ud800"]
    assert fields[3].raw_key == "key\ufffd"
    for field in fields:
        if isinstance(field.initial, str):
            field.initial.encode("utf-8")
    edited, errors = read_fields(fields, untouched(fields))
    assert errors == []
    assert edited == data


def test_a_prefix_that_is_not_a_safe_field_name_is_refused():
    with pytest.raises(ValueError, match="prefix"):
        fields_for(REFUND, 'item"><script>')


# Data that is not an object


@pytest.mark.parametrize(
    "data, kind, typed, expected",
    [
        ([1, 2], FieldKind.JSON, "[1, 2, 3]", [1, 2, 3]),
        ("49.90", FieldKind.DECIMAL, "20", "20.00"),
        ("refund", FieldKind.TEXT, "no refund", "no refund"),
        (None, FieldKind.NULL, "now text", "now text"),
        (7, FieldKind.INTEGER, "8", 8),
        (False, FieldKind.BOOLEAN, "on", True),
    ],
)
def test_data_that_is_not_an_object_is_one_field_for_the_whole_value(data, kind, typed, expected):
    [field] = fields_for(data, "item")

    assert (field.key, field.name, field.kind, field.whole) == ("", "item-0", kind, True)
    assert read_fields([field], {"item-0": field.initial} if kind is not FieldKind.BOOLEAN else {}) == (data, [])
    assert read_fields([field], {"item-0": typed}) == (expected, [])
    assert changes(data, expected) == [Change("", data, expected)]


def test_a_one_key_object_with_an_empty_key_is_still_an_object():
    assert edit({"": "x"}) == ({"": "x"}, [])


def test_an_empty_object_has_no_fields_and_reads_back_empty():
    assert fields_for({}, "item") == []
    assert read_fields([], {}) == ({}, [])


# Changes and their display


def test_changes_compare_as_json_so_a_reformatted_amount_or_a_bool_for_an_int_is_a_change():
    before = {"amount": "49.90", "count": 1, "ratio": 1, "address": {"a": 1, "b": 2}, "same": None}
    after = {"amount": "49.9", "count": True, "ratio": 1.0, "address": {"b": 2, "a": 1}, "same": None}

    assert [change.key for change in changes(before, after)] == ["amount", "count", "ratio"]


def test_a_removed_or_added_key_is_a_change_from_or_to_absent():
    assert changes({"a": 1, "b": None}, {"a": 1, "c": None}) == [Change("b", None, ABSENT), Change("c", ABSENT, None)]


def test_display_shows_text_as_written_and_anything_else_as_one_line_of_json():
    assert display("49.90") == "49.90"
    assert display("<b>") == "<b>"
    assert display(None) == "null"
    assert display(True) == "true"
    assert display(2) == "2"
    assert display({"city": "Zürich", "lines": [1, 2]}) == '{"city": "Zürich", "lines": [1, 2]}'
    assert display(ABSENT) == "(absent)"


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
