"""Hypothesis over how agents spell one subject (case, spaces, a leading '#', the key ``order_id``, ``orderId`` or
``order``, or the item's own id as LlamaIndex names it): two holds the reader calls the same subject, of the same
capability and asking a refund in any title, are always flagged as possible duplicates of each other."""

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from holds import lifecycle
from holds.mirror import mirrored, platform
from holds.models import Hold
from holds.related import duplicates
from holds.related.subjects import subjects_of

pytestmark = pytest.mark.django_db

NUMBERS = itertools.count()
BASES = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9-]{0,14}", fullmatch=True)


@st.composite
def spellings(draw, base: str) -> str:
    cased = "".join(draw(st.sampled_from([c.lower(), c.upper()])) for c in base)
    return (
        draw(st.sampled_from(["", " ", "  "]))
        + draw(st.sampled_from(["", "#"]))
        + cased
        + draw(st.sampled_from(["", " ", "\t"]))
    )


@st.composite
def items(draw, base: str) -> dict:
    """One item naming ``base`` in one of the spellings, as one of the frameworks would."""
    written = draw(spellings(base))
    shape = draw(st.sampled_from(["order_id", "orderId", "order", "item id"]))
    title = draw(st.sampled_from(["refund", f"Refund 49.90 on {written.strip()}", f"{written.strip()} · 49.90"]))
    if shape == "item id":
        return {"id": written.strip(), "title": title, "data": {"amount": "49.90"}}
    return {"id": f"call_{draw(st.integers(0, 9))}", "title": title, "data": {shape: written, "amount": "49.90"}}


@st.composite
def two_items(draw):
    base = draw(BASES)
    return draw(items(base)), draw(items(base))


def mirror(item: dict) -> Hold:
    number = next(NUMBERS)
    payload = {
        "hold_id": f"h_spelling{number}",
        "run_id": f"r_spelling{number}",
        "agent": "support-agno",
        "capability": "support",
        "status": "open",
        "question": "Refund?",
        "actions": ["approve", "reject"],
        "items": [item],
    }
    lifecycle.mirror_listed("default", [mirrored.prepared(platform.parse_hold(payload))], {})
    return Hold.objects.get(hold_id=payload["hold_id"])


@settings(max_examples=60, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
@given(two_items())
def test_two_holds_the_reader_calls_the_same_subject_are_always_flagged(pair):
    first, second = pair
    read = [{subject.value for subject in subjects_of(item["id"], item["data"])} for item in pair]
    assert read[0] & read[1], pair  # the reader calls them the same subject

    one, other = mirror(first), mirror(second)

    assert other.pk in {duplicate.hold.pk for duplicate in duplicates.possible_duplicates(one)}, pair
    assert one.pk in {duplicate.hold.pk for duplicate in duplicates.possible_duplicates(other)}, pair
