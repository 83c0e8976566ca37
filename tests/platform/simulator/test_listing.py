"""The simulated platform's authentication and open listing, over real HTTP on 127.0.0.1."""

import itertools
from datetime import timedelta

import httpx
import pytest

from simulator.samples import sample_holds
from simulator.state import PlatformState
from simulator.times import iso
from tests.helpers.simulator_client import API_KEY, all_open_ids, page_ids

# Authentication


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong-key"}, {"Authorization": API_KEY}])
def test_the_api_needs_the_bearer_key(server, headers):
    answer = httpx.get(f"{server.url}/v0/envs/default/holds", headers=headers)

    assert answer.status_code == 401
    assert answer.json() == {"error": {"code": "unauthorized", "message": "missing or wrong API key"}}
    assert API_KEY not in answer.text


# Listing


def test_pages_list_every_open_hold_once_oldest_first(api, state):
    state.generate("default", 7)
    first_page = api.get("/holds", params={"limit": 2}).json()
    added_meanwhile = state.add_hold("default", {})

    rest, cursor = [], first_page["next_cursor"]
    while cursor:
        page = api.get("/holds", params={"limit": 2, "cursor": cursor}).json()
        assert len(page["holds"]) <= 2
        rest += [hold["hold_id"] for hold in page["holds"]]
        cursor = page["next_cursor"]
    listed = [hold["hold_id"] for hold in first_page["holds"]] + rest

    assert listed[:2] == ["h_12", "h_13"]
    assert len(listed) == len(set(listed)) == state.count_holds("default", "open") == 9 + 7 + 1
    assert added_meanwhile["hold_id"] in listed
    every = [state.get_hold("default", hold_id)["created_at"] for hold_id in listed]
    assert every == sorted(every)


def test_holds_made_in_the_same_second_list_in_the_order_they_were_made():
    platform = PlatformState()
    created_at = "2026-11-29T10:00:00Z"
    made = [platform.add_hold("default", {"created_at": created_at})["hold_id"] for _ in range(3)]
    platform.add_hold("default", {"hold_id": "h_1000", "created_at": created_at})
    platform.add_hold("default", {"hold_id": "h_999", "created_at": created_at})

    holds, _ = platform.list_open("default", limit=10)

    assert [hold["hold_id"] for hold in holds] == [*made, "h_999", "h_1000"]


def test_limit_is_clamped_between_1_and_100(api, state):
    state.generate("default", 120)

    assert len(api.get("/holds", params={"limit": 0}).json()["holds"]) == 1
    assert len(api.get("/holds", params={"limit": 500}).json()["holds"]) == 100
    assert len(api.get("/holds").json()["holds"]) == 50


@pytest.mark.parametrize(
    ("params", "status", "message"),
    [
        ({"limit": "ten"}, 422, "limit must be an integer"),
        ({"cursor": "not-a-cursor"}, 400, "invalid cursor"),
        ({"cursor": "WzFd"}, 400, "invalid cursor"),  # base64 of [1]: JSON, but not a position
        ({"status": "pending"}, 422, "status must be one of"),
    ],
)
def test_bad_list_parameters_are_refused(api, params, status, message):
    answer = api.get("/holds", params=params)

    assert answer.status_code == status
    assert answer.json()["error"]["code"] == "invalid_request"
    assert message in answer.json()["error"]["message"]


def test_a_cursor_handed_out_before_the_platform_forgot_its_cursors_is_refused(api, state):
    state.generate("default", 3)
    cursor = api.get("/holds", params={"limit": 2}).json()["next_cursor"]
    assert api.get("/holds", params={"cursor": cursor}).status_code == 200

    state.forget_cursors()

    answer = api.get("/holds", params={"cursor": cursor})
    assert answer.status_code == 400 and "no longer accepted" in answer.json()["error"]["message"]
    assert api.get("/holds", params={"cursor": api.get("/holds", params={"limit": 2}).json()["next_cursor"]}).json()[
        "holds"
    ]


def test_an_unknown_env_has_no_holds(server):
    headers = {"Authorization": f"Bearer {API_KEY}"}
    answer = httpx.get(f"{server.url}/v0/envs/nowhere/holds", headers=headers)

    assert answer.json() == {"holds": [], "next_cursor": None}


def test_other_statuses_can_be_listed(api, control):
    control.post("/holds/h_12/cancel")

    cancelled = api.get("/holds", params={"status": "cancelled"}).json()["holds"]

    assert [hold["hold_id"] for hold in cancelled] == ["h_12"]
    assert "h_12" not in all_open_ids(api, limit=100)


def test_holds_ended_between_pages_leave_the_open_listing_and_join_their_status():
    platform = PlatformState()
    made = [hold["hold_id"] for hold in platform.generate("default", 12)]
    first_page, cursor = platform.list_open("default", limit=3)
    short_lived = platform.add_hold("default", {"expires_at": iso(platform.now() + timedelta(seconds=30))})
    platform.decide_elsewhere("default", made[4], "bob@example.com")
    platform.cancel("default", made[6])
    platform.decide_elsewhere("default", made[1], "bob@example.com")  # on the page already handed out
    platform.advance_clock(60)  # short_lived is due; it expires when next looked at

    rest, _ = platform.list_open("default", limit=100, cursor=cursor)

    assert [hold["hold_id"] for hold in first_page] == made[:3]
    assert [hold["hold_id"] for hold in rest] == made[3:4] + made[5:6] + made[7:]
    assert page_ids(platform, "decided") == [made[1], made[4]]
    assert page_ids(platform, "cancelled") == [made[6]]
    assert page_ids(platform, "expired") == [short_lived["hold_id"]]
    assert platform.get_run("default", short_lived["run_id"])["output"] == {"answer": "Nobody decided in time."}
    counts = {status: platform.count_holds("default", status) for status in ("open", "decided", "cancelled", "expired")}
    assert counts == {"open": 9, "decided": 2, "cancelled": 1, "expired": 1}
    assert platform.count_holds("default") == 13


def test_many_holds_expiring_at_once_all_leave_the_open_listing():
    platform = PlatformState()
    platform.generate("default", 300)  # expiries spread from 5 minutes to 2 days; every sixth never expires

    platform.advance_clock(3 * 24 * 3600)

    assert len(page_ids(platform, limit=100)) == platform.count_holds("default", "open") == 50
    assert len(page_ids(platform, "expired", limit=100)) == 250
    assert all(platform.get_hold("default", hold_id)["expires_at"] is None for hold_id in page_ids(platform))


def test_ids_that_read_as_the_same_number_are_both_listed_one_per_page():
    platform = PlatformState()
    created_at = "2026-11-29T10:00:00Z"
    for hold_id in ("h_7", "h_07", "h_8"):
        platform.add_hold("default", {"hold_id": hold_id, "created_at": created_at})

    assert page_ids(platform, limit=1) == ["h_07", "h_7", "h_8"]


def test_reloading_the_samples_replaces_them_without_listing_any_twice(state):
    state.decide_elsewhere("default", "h_12", "bob@example.com")

    state.load_samples()

    assert page_ids(state) == [hold["hold_id"] for hold in sample_holds(state.now())]
    assert page_ids(state, "decided") == []


def test_generated_holds_come_in_pairs_asking_about_one_order_when_asked_to():
    """The benches' related holds: with ``related_every`` 20, two holds in twenty ask about the same order(s)."""
    state = PlatformState()
    holds = state.generate("default", 40, related_every=20)

    first_orders = {hold["hold_id"]: hold["items"][0]["data"]["order_id"] for hold in holds}
    repeated = [
        (one, other)
        for one, other in itertools.pairwise(holds)
        if first_orders[one["hold_id"]] == first_orders[other["hold_id"]]
    ]

    assert [(one["hold_id"], other["hold_id"]) for one, other in repeated] == [("h_g20", "h_g21")]
    assert len({hold["hold_id"] for hold in holds}) == 40
