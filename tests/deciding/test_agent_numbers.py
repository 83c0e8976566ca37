"""The one reader of numbers the agent writes in item data (``agent_numbers.read_number``).

It reads amounts written every way agents write them, gives both readings of one it cannot read for
certain, and calls everything else unreadable, so that what reads it can fail closed. Hypothesis throws
arbitrary JSON at it: it answers a reading, never an exception.
"""

import json
from decimal import Decimal

import pytest
from django.apps import apps
from django.db import models
from hypothesis import given, settings
from hypothesis import strategies as st

from approvals import verdicts
from reviewqueue import agent_numbers
from reviewqueue.agent_numbers import LARGEST_NUMBER, TOTAL, amount_reading, carried, grouped, read_number


@pytest.mark.parametrize(
    "written, number",
    [
        ("1500.00", "1500.00"),
        ("1,500.00", "1500.00"),
        ("1500,00", "1500.00"),
        ("1.500,00", "1500.00"),
        ("$1500.00", "1500.00"),
        ("1500.00 USD", "1500.00"),
        ("USD 1500.00", "1500.00"),
        ("€1.500,00", "1500.00"),
        ("1500.00€", "1500.00"),
        (" 1500.00", "1500.00"),
        ("+1500", "1500"),
        ("-$15.00", "-15.00"),
        ("$-15.00", "-15.00"),
        ("1.5e3", "1500"),
        ("1.5E+3", "1500"),
        ("1.250E+1", "12.5"),
        ("1.250e0", "1.25"),
        ("2e-2", "0.02"),
        ("１５００", "1500"),
        ("１，５００．００", "1500.00"),
        ("٢٠", "20"),
        ("−5", "-5"),
        ("1,234,567", "1234567"),
        ("0.500", "0.5"),
        ("1234.500", "1234.5"),
        ("12,5", "12.5"),
        (1500, "1500"),
        (49.9, "49.9"),
        ({"value": "1500.00"}, "1500.00"),
        ({"amount": "1,500.00", "currency": "EUR"}, "1500"),
        (["1500.00"], "1500.00"),
        ([{"value": 7}], "7"),
    ],
)
def test_an_amount_written_any_of_the_usual_ways_reads_as_the_number_meant(written, number):
    reading = read_number(written)

    assert reading.exact == Decimal(number) and reading.readings is None and reading.counted == Decimal(number)
    assert reading.doubt == ""


@pytest.mark.parametrize(
    "written, smaller, larger, doubt",
    [
        ("1,500", "1.5", "1500", "'1,500' could be 1.5 or 1,500"),
        ("1.500", "1.5", "1500", "'1.500' could be 1.5 or 1,500"),  # an agent may write a point for thousands
        ("$12,500", "12.5", "12500", "'$12,500' could be 12.5 or 12,500"),
        (["1,500"], "1.5", "1500", """'["1,500"]' could be 1.5 or 1,500"""),
    ],
)
def test_a_single_mark_that_may_split_thousands_or_decimals_gives_both_readings_and_counts_the_larger(
    written, smaller, larger, doubt
):
    reading = read_number(written)

    assert reading.exact is None
    assert reading.readings == (Decimal(smaller), Decimal(larger)) and reading.counted == Decimal(larger)
    assert reading.doubt == doubt


@pytest.mark.parametrize(
    "written",
    [
        "1,5OO",
        "1.5 mil",
        "1 500",
        "1.5k",
        "lots",
        "",
        "-$-15",
        "USD 15 EUR",
        "1,23.4",
        "1e999",
        "NaN",
        "Infinity",
        True,
        None,
        1e40,
        10**30,
        [],
        [1, 2],
        {},
        {"value": 1, "amount": 2},
        {"price": "1500"},
        [[[["1"]]]],
        "9" * 101,
    ],
)
def test_anything_else_is_unreadable_and_counts_as_nothing(written):
    reading = read_number(written)

    assert reading.exact is None and reading.readings is None and reading.counted is None
    assert reading.doubt.endswith("could not be read")


def test_the_doubt_quotes_a_long_value_cut_short():
    assert read_number("x" * 90).doubt == f"'{'x' * 39}…' could not be read"


def test_amounts_are_grouped_for_display_only_when_read_for_certain():
    assert (grouped("$1500.5"), grouped("1,500"), grouped("lots")) == ("1,500.5", None, None)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda nested: st.lists(nested, max_size=3) | st.dictionaries(st.sampled_from(["value", "amount", "x"]), nested),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(json_values)
def test_any_json_value_gets_a_reading_and_no_reading_is_beyond_the_largest_number(value):
    reading = read_number(json.loads(json.dumps(value)))

    assert reading.counted is None or abs(reading.counted) < LARGEST_NUMBER
    assert (reading.exact is None) == bool(reading.doubt)


def test_the_doubt_quotes_the_value_as_the_agent_wrote_it_not_as_read():
    assert read_number("１，５００").doubt == "'１，５００' could be 1.5 or 1,500"
    assert read_number("１，５ＯＯ").doubt == "'１，５ＯＯ' could not be read"


# Amounts beyond what the amount columns hold (issue 45): in doubt, from the one reader, never a failed write.


@pytest.mark.parametrize(
    "key, written",
    [
        ("amount", "20000000000000000.00"),
        ("amount", 1e17),
        ("amount", "9999999999999999.99999"),  # rounded to the columns' places: 10^16
        ("amount", "-1e16"),
        ("amount_cents", "1000000000000000000"),  # 10^16 once scaled
        ("amount", "1,000000000000000000"),  # either reading, the larger beyond
    ],
)
def test_an_amount_no_amount_column_holds_is_in_doubt_and_counts_as_nothing(key, written):
    reading = amount_reading(key, written)

    assert reading.too_large and reading.exact is None and reading.counted is None
    assert reading.doubt.endswith("is more than an amount can be")
    assert carried([{key: written}]).sure_total() is None


@pytest.mark.parametrize("written", ["9999999999999999.9999", "9999999999999999.99994", "-9999999999999999"])
def test_the_largest_amounts_the_columns_hold_are_read_as_written(written):
    assert amount_reading("amount", written).exact == Decimal(written)


def test_amounts_each_held_whose_total_no_column_holds_are_in_doubt_as_their_total():
    found = carried([{"amount": "6000000000000000"}, {"amount": "6000000000000000"}])

    doubtful = found.doubtful()
    assert found.sure_total() is None and doubtful.path == TOTAL
    assert doubtful.doubt() == "'12,000,000,000,000,000' is more than an amount can be"
    assert verdicts.of(found, lambda number: number <= 50).doubt == doubtful.doubt()


@settings(max_examples=300, deadline=None, derandomize=True)
@given(json_values)
def test_every_amount_read_for_certain_and_every_sure_total_fits_the_amount_columns(value):
    data = {"amount": json.loads(json.dumps(value)), "refund_amount": json.loads(json.dumps(value))}
    found = carried([data, data])

    assert all(
        agent_numbers.fits_amount_columns(amount.reading.counted)
        for amount in found.amounts
        if amount.reading.counted is not None
    )
    assert found.sure_total() is None or agent_numbers.fits_amount_columns(found.sure_total())


def test_every_decimal_column_is_an_amount_column_of_the_readers_size():
    """The bound is defined once: every DecimalField is declared with ``agent_numbers``' size, which the reader
    checks."""
    sizes = {
        f"{model._meta.label}.{field.name}": (field.max_digits, field.decimal_places)
        for model in apps.get_models()
        for field in model._meta.get_fields()
        if isinstance(field, models.DecimalField)
    }

    assert sizes and set(sizes.values()) == {(agent_numbers.AMOUNT_DIGITS, agent_numbers.AMOUNT_PLACES)}, sizes
