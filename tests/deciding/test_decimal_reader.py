"""The one decimal reader (``readers.decimal``): a decimal comma where it can only mean one thing, thousands
separators either way, and a refusal that spells out both readings where a comma could mean either.

Hypothesis writes numbers the ways people do and checks that each reads back as the same number; it
also throws arbitrary text at the reader, which answers a number, "not given" or a ``BadValue``, never
anything else. The examples are derandomized: every run tries the same ones.
"""

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reviewqueue import readers

EXAMPLES = settings(derandomize=True, max_examples=300, deadline=None)


def read(value: str) -> Decimal | None:
    return readers.decimal(value, "amount")


def refusal(value: str) -> str:
    with pytest.raises(readers.BadValue) as refused:
        read(value)
    return refused.value.problem


def grouped(whole: int, mark: str) -> str:
    return f"{whole:,}".replace(",", mark)


@pytest.mark.parametrize(
    "typed, number",
    [
        ("20", "20"),
        ("-7.50", "-7.50"),
        ("+3", "3"),
        (" 49.90 ", "49.90"),
        (".5", "0.5"),
        ("5.", "5"),
        ("20,00", "20.00"),
        ("20,5", "20.5"),
        (",5", "0.5"),
        ("1234,567", "1234.567"),
        ("0,125", "0.125"),
        ("1,234.56", "1234.56"),
        ("1.234,56", "1234.56"),
        ("1,234,567", "1234567"),
        ("1.234.567", "1234567"),
        ("12.345.678,9", "12345678.9"),
        ("1.234", "1.234"),
    ],
)
def test_the_ways_people_write_a_decimal_all_read_as_the_number_they_mean(typed, number):
    assert read(typed) == Decimal(number)


@pytest.mark.parametrize(
    "typed, problem",
    [
        ("1,234", "write 1234 or 1.234: a comma can't tell thousands from decimals here"),
        ("-12,500", "write -12500 or -12.500: a comma can't tell thousands from decimals here"),
        ("1,23.4", "write thousands in groups of three, as in 1,234,567, or without separators"),
        ("1.2.3", "write thousands in groups of three, as in 1.234.567, or without separators"),
        ("01,234,567", "write thousands in groups of three, as in 1,234,567, or without separators"),
        ("1,234.5,6", "write the decimal mark once, as in 1.234,56"),
        ("twenty", "a number such as 20.00 is needed"),
        (",", "a number such as 20.00 is needed"),
        ("-", "a number such as 20.00 is needed"),
        ("1e3", "a number such as 20.00 is needed"),
        ("٢٠", "a number such as 20.00 is needed"),
        ("1 234,5", "a number such as 20.00 is needed"),
    ],
)
def test_what_cannot_be_read_for_sure_is_refused_with_what_to_type_instead(typed, problem):
    assert refusal(typed) == problem


def test_a_blank_value_is_not_given():
    assert read("  ") is None


def test_a_size_limits_the_digits_whichever_mark_was_used():
    assert readers.decimal("1.234,56", "amount", max_digits=6, decimal_places=2) == Decimal("1234.56")
    with pytest.raises(readers.BadValue, match="at most 4 digits before the point and 2 after"):
        readers.decimal("12.345,6", "amount", max_digits=6, decimal_places=2)


numbers = st.tuples(
    st.integers(min_value=0, max_value=10**15), st.text("0123456789", max_size=6), st.sampled_from(["", "-"])
)


@EXAMPLES
@given(numbers)
def test_a_number_written_with_a_decimal_point_reads_back_exactly(parts):
    whole, fraction, sign = parts
    plain = f"{sign}{whole}.{fraction}" if fraction else f"{sign}{whole}"

    assert read(plain) == Decimal(plain)
    assert read(f"{sign}{grouped(whole, ',')}.{fraction}") == Decimal(plain)  # "1,000." has a decimal point


@EXAMPLES
@given(numbers)
def test_a_number_written_with_a_decimal_comma_reads_back_unless_the_comma_could_group_thousands(parts):
    whole, fraction, sign = parts
    fraction = fraction or "0"
    expected = Decimal(f"{sign}{whole}.{fraction}")

    if whole >= 1000:
        assert read(f"{sign}{grouped(whole, '.')},{fraction}") == expected
    with_comma = f"{sign}{whole},{fraction}"
    if len(fraction) == 3 and 1 <= whole <= 999:
        assert refusal(with_comma) == (
            f"write {sign}{whole}{fraction} or {sign}{whole}.{fraction}: "
            "a comma can't tell thousands from decimals here"
        )
    else:
        assert read(with_comma) == expected


@EXAMPLES
@given(st.text(st.sampled_from("0123456789.,+- e٣\x00"), max_size=30) | st.text(max_size=30))
def test_any_text_is_a_number_not_given_or_a_plain_refusal(text):
    try:
        number = read(text)
    except readers.BadValue as refused:
        assert refused.problem
    else:
        assert number is None or number.is_finite()
