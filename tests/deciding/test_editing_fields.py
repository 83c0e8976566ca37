"""A reviewer edits an item's data as typed fields: one field per key, the form's round trip unchanged, hostile
keys and characters, data that is not an object, and the changes shown."""

import json

import pytest
from django.http import QueryDict

from holds.deciding.editing import Change, FieldKind, changes, fields_for, read_fields
from reviewqueue.agent_json import ABSENT
from reviewqueue.showing import display
from tests.helpers.editing import REFUND, as_json, edit, untouched

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
