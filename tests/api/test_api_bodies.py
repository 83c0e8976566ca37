"""Hypothesis over the API's bodies: any depth, any size, any bytes, sent to every operation that takes a body and
to those that take none, answer 2xx or 4xx (a problem document), never a 5xx."""

import json
from collections import Counter

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from holds.deciding import decisions
from holds.deciding.decisions import ItemChoice
from holds.models import Decision
from tests.helpers.api import bearer, token_of
from tests.helpers.duplicates import every_duplicate

pytestmark = pytest.mark.django_db

EXAMPLES = 80  # a few seconds: each is one request through every middleware, the parser and the operation
TOO_LARGE = 3 * 1024 * 1024  # past Django's DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MiB): a 413
CONTENT_TYPES = ["application/json", "application/json; charset=utf-8", "text/plain", "", "multipart/form-data"]

leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["approve", "edit", "reject", "A-1001", "49.90", "\x00", "\ud800"]),
)
shallow = st.recursive(
    leaves,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=12,
)


@st.composite
def nested(draw):
    """A JSON value inside 0 to 3,000 arrays or objects: around the API's 32 levels, pydantic's 255 and far beyond."""
    depth = draw(st.one_of(st.integers(0, 40), st.integers(250, 260), st.integers(0, 3000)))
    value = draw(shallow)
    key = draw(st.sampled_from(["data", "items", "x", ""]))
    kind = draw(st.sampled_from(["list", "object", "both"]))
    for level in range(depth):
        as_list = kind == "list" or (kind == "both" and level % 2 == 0)
        value = [value] if as_list else {key: value}
    return value


@st.composite
def decision_bodies(draw, item_ids: list[str]):
    """The decision's own shape, with a drawn value somewhere in it."""
    value = draw(st.one_of(nested(), shallow))
    item = {"id": draw(st.sampled_from([*item_ids, "nope"])), "action": draw(st.sampled_from(["approve", "edit"]))}
    where = draw(st.sampled_from(["data", "comment", "id", "items", "action", "extra"]))
    if where == "items":
        return {"items": value}
    return {"items": [item | {where: value}]}


def texts(values):
    """JSON text of ``values``, or text that is almost JSON, or none at all."""
    written = values.map(lambda value: json.dumps(value, ensure_ascii=False))
    return st.one_of(
        written,
        written.map(lambda text: text[: len(text) // 2]),  # cut short
        st.integers(0, 30_000).map(lambda depth: "[" * depth + "]" * depth),  # deeper than any decoder
        st.integers(0, 30_000).map(lambda depth: '{"a":' * depth + "1" + "}" * depth),
        st.sampled_from(["", "null", "1e999", "NaN", "[Infinity]", '{"text": "\\u0000"}', '"\\ud800"', "9" * 5000]),
        st.binary(max_size=64).map(lambda raw: raw.decode("latin-1")),
        st.sampled_from([10_000, 1_000_000, TOO_LARGE]).map(lambda size: '{"text": "' + "x" * size + '"}'),
    )


@pytest.fixture
def world(samples, alice, settings):
    settings.API_RATE_PER_MINUTE = 100_000
    settings.UNDO_SECONDS = 30
    hold = samples["h_13"]
    made = decisions.submit(
        samples["h_12"], alice, [ItemChoice("A-1001", "approve")], duplicates_checked=every_duplicate(samples["h_12"])
    )
    return {"hold": hold, "decision": made.pk, "secret": token_of(alice)}


def test_no_body_of_any_depth_or_size_gets_a_5xx(world):
    hold, secret = world["hold"], world["secret"]
    client = Client()
    item_ids = [item.item_id for item in hold.items.all()]
    operations = [
        ("post", f"/api/v1/holds/{hold.pk}/decision"),
        ("post", f"/api/v1/holds/{hold.pk}/notes"),
        ("post", f"/api/v1/holds/{hold.pk}/assignment"),
        ("delete", f"/api/v1/holds/{hold.pk}/assignment"),
        ("post", f"/api/v1/decisions/{world['decision']}/undo"),
        ("post", "/api/v1/approvals/1/undo"),
    ]
    values = st.one_of(decision_bodies(item_ids), nested(), shallow)
    statuses = Counter()

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
        database=None,
    )
    @given(operation=st.sampled_from(operations), body=texts(values), content_type=st.sampled_from(CONTENT_TYPES))
    def answers(operation, body, content_type):
        method, path = operation
        answer = getattr(client, method)(
            path, body.encode("utf-8", "surrogatepass"), content_type=content_type, **bearer(secret)
        )
        statuses[answer.status_code] += 1
        assert 200 <= answer.status_code < 500, (operation, content_type, body[:200], answer.content[:300])
        if answer.status_code >= 400:
            assert answer["Content-Type"] == "application/problem+json"

    answers()
    assert {400, 413} <= set(statuses) and any(status < 300 for status in statuses), statuses
    assert Decision.objects.count() <= 2  # the one made above, and at most one the fuzz sent for h_13
