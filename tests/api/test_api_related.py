"""The API's hold carries its related holds and the ids of its possible duplicates, in the token's team scopes; the
queue's listing filters possible duplicates as the page does."""

import pytest
from django.test import Client

from tests.helpers.api import bearer, token_of
from tests.helpers.users import make_user, scoped_group

pytestmark = pytest.mark.django_db


def test_a_hold_names_its_related_holds_and_possible_duplicates(samples, alice):
    answer = Client().get(f"/api/v1/holds/{samples['h_13'].pk}", **bearer(token_of(alice))).json()

    others = {samples[hold_id].pk for hold_id in ("h_12", "h_14", "h_15")}
    assert set(answer["possible_duplicate_of"]) == others
    first = next(one for one in answer["related"] if one["hold_id"] == "h_12")
    assert first["shares"] == [{"key": "order_id", "value": "A-1001"}]
    assert first["items"] == [{"id": "A-1001", "title": "A-1001 · 49.90"}]
    assert first["possible_duplicate"] and first["status"] == "open" and first["amount"] == "49.9"
    assert answer["related"] and all(one["possible_duplicate"] for one in answer["related"])


def test_a_token_sees_only_related_holds_in_its_scopes(samples):
    carol = make_user("carol", "Reviewers")
    carol.groups.add(scoped_group("agno-and-openai", agent="support-[ao]*"))

    answer = Client().get(f"/api/v1/holds/{samples['h_15'].pk}", **bearer(token_of(carol))).json()

    assert answer["possible_duplicate_of"] == [samples["h_14"].pk]
    assert [one["hold_id"] for one in answer["related"]] == ["h_14"]


def test_the_listing_filters_possible_duplicates(samples, alice):
    answer = Client().get("/api/v1/holds", {"duplicates": "possible"}, **bearer(token_of(alice))).json()

    assert {hold["hold_id"] for hold in answer["holds"]} == {"h_12", "h_13", "h_14", "h_15"}
