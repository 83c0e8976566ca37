"""What the editing tests submit and compare: the agent's refund data, its form sent untouched or with
some fields typed over, the data as JSON text, a field's one error."""

import json

from holds.deciding.editing import FieldKind, fields_for, read_fields

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
