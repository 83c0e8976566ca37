"""The simulated AgentOS platform, exercised over real HTTP on 127.0.0.1."""

import io
import re
import socket
import struct
import threading
import time
import zlib
from datetime import timedelta

import httpx
import pytest
from django.core.management import call_command

from simulator.management.commands import runplatform
from simulator.samples import generated_holds, sample_holds
from simulator.server import PlatformServer
from simulator.state import PlatformState
from simulator.times import iso, parse_iso

API_KEY = "simulator-test-key"
# Plain HTTP on 127.0.0.1: not loading CA certificates that no request uses saves time on every client.
NO_TLS = {"verify": False}
ISO_Z = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


@pytest.fixture
def state() -> PlatformState:
    platform = PlatformState()
    platform.load_samples()
    return platform


@pytest.fixture
def server(state):
    with PlatformServer(state, api_key=API_KEY) as running:
        yield running


@pytest.fixture
def api(server):
    headers = {"Authorization": f"Bearer {API_KEY}"}
    with httpx.Client(base_url=f"{server.url}/v0/envs/default", headers=headers, timeout=5, **NO_TLS) as client:
        yield client


@pytest.fixture
def control(server):
    with httpx.Client(base_url=f"{server.url}/_control", timeout=5, **NO_TLS) as client:
        yield client


def decide(api: httpx.Client, hold_id: str, body: object, key: str = "key-1") -> httpx.Response:
    return api.post(f"/holds/{hold_id}/decision", json=body, headers={"Idempotency-Key": key})


def approve_all(hold: dict) -> dict:
    return {"items": [{"id": item["id"], "action": "approve"} for item in hold["items"]]}


def all_open_ids(api: httpx.Client, limit: int = 2) -> list[str]:
    ids, cursor = [], None
    while True:
        params = {"limit": limit} | ({"cursor": cursor} if cursor else {})
        page = api.get("/holds", params=params).json()
        ids += [hold["hold_id"] for hold in page["holds"]]
        cursor = page["next_cursor"]
        if cursor is None:
            return ids


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


def page_ids(platform: PlatformState, status: str = "open", limit: int = 3) -> list[str]:
    ids, cursor = [], None
    while True:
        holds, cursor = platform.list_open("default", limit=limit, cursor=cursor, status=status)
        ids += [hold["hold_id"] for hold in holds]
        if cursor is None:
            return ids


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


# One hold, runs, files


def test_a_hold_is_served_as_the_contract_shows(api):
    hold = api.get("/holds/h_16").json()

    assert hold["question"] == "Refund <script>alert(1)</script> on order A-1003?"
    assert hold["items"][0]["id"] == "call_<b>9</b>"
    assert hold["items"][0]["data"]["address"] == {"city": "Zürich", "zip": "8001"}
    assert hold["details"].endswith("RTL \u202etxet\u202c")
    assert hold["files"] == [{"id": "f_9", "name": "<script>x</script>.html", "content_type": "text/html", "size": 120}]
    assert ISO_Z.match(hold["created_at"]) and ISO_Z.match(hold["expires_at"])
    assert hold["status"] == "open" and hold["decision"] is None


def test_an_unknown_hold_is_not_found(api):
    answer = api.get("/holds/h_nope")

    assert answer.status_code == 404
    assert answer.json() == {"error": {"code": "hold_not_found", "message": "no hold h_nope in env default"}}


def test_a_held_run_is_served(api):
    run = api.get("/runs/r_41").json()

    assert run["status"] == "held" and run["output"] is None
    assert run["agent"] == "llamaindex-support" and run["capability"] == "support"
    assert "A-1001" in run["input"]["message"]
    assert ISO_Z.match(run["created_at"])


def test_an_unknown_run_is_not_found(api):
    answer = api.get("/runs/r_nope")

    assert answer.status_code == 404
    assert answer.json() == {"error": {"code": "run_not_found", "message": "no run r_nope in env default"}}


def test_an_attached_image_downloads_with_its_type(api):
    described = api.get("/holds/h_14").json()["files"][0]

    answer = api.get(f"/holds/h_14/files/{described['id']}")

    assert answer.headers["content-type"] == described["content_type"] == "image/png"
    assert int(answer.headers["content-length"]) == len(answer.content) == described["size"] < 20_000
    assert_valid_png(answer.content)


def test_an_attached_html_file_is_served_as_html_bytes(api):
    answer = api.get("/holds/h_16/files/f_9")

    assert answer.headers["content-type"] == "text/html"
    assert len(answer.content) == 120 and answer.content.startswith(b"<!doctype html>")


def test_unknown_files_are_not_found(api):
    assert api.get("/holds/h_14/files/f_nope").json()["error"]["code"] == "file_not_found"
    assert api.get("/holds/h_nope/files/f_1").json()["error"]["code"] == "hold_not_found"


def test_unknown_paths_and_methods_are_answered_in_json(api):
    assert api.get("/nothing/here").json()["error"]["code"] == "not_found"
    assert api.get("/nothing/here").status_code == 404
    wrong_method = api.delete("/holds/h_12")
    assert wrong_method.status_code == 405 and wrong_method.json()["error"]["code"] == "method_not_allowed"


# Deciding


def test_a_valid_decision_is_applied_and_resumes_the_run(api):
    body = {
        "items": [
            {
                "id": "toolu_01A9xQ2mZ",
                "action": "edit",
                "data": {"order_id": "A-1001", "amount": "20.00"},
                "comment": "partial refund",
            },
            {"id": "toolu_01B7kR4pW", "action": "reject", "comment": "changed mind is not a defect"},
        ],
        "decided_by": "alice@example.com",
    }

    answer = decide(api, "h_13", body)

    hold = answer.json()
    assert answer.status_code == 200 and hold["status"] == "decided"
    assert hold["decision"]["items"] == body["items"]
    assert hold["decision"]["decided_by"] == "alice@example.com"
    assert ISO_Z.match(hold["decision"]["decided_at"])
    run = api.get("/runs/r_42").json()
    assert run["status"] == "completed"
    assert "changed mind is not a defect" in run["output"]["answer"]


def test_deciding_a_hold_that_is_not_open_conflicts(api, control):
    control.post("/holds/h_12/decide", json={"decided_by": "bob@example.com"})

    answer = decide(api, "h_12", approve_all(api.get("/holds/h_12").json()))

    assert answer.status_code == 409
    body = answer.json()
    assert body["error"] == {"code": "hold_not_open", "message": "hold h_12 is decided"}
    assert body["hold"]["status"] == "decided" and body["hold"]["decision"]["decided_by"] == "bob@example.com"


def test_deciding_an_unknown_hold_is_not_found(api):
    answer = decide(api, "h_nope", {"items": []})

    assert answer.status_code == 404
    assert answer.json() == {"error": {"code": "hold_not_found", "message": "no hold h_nope in env default"}}


TWO_ITEMS = ["toolu_01A9xQ2mZ", "toolu_01B7kR4pW"]


@pytest.mark.parametrize(
    ("hold_id", "body", "message"),
    [
        ("h_12", [], "the decision must be a JSON object"),
        ("h_12", {"items": "approve"}, "items must be a list"),
        ("h_12", {"items": [{"id": "A-9999", "action": "approve"}]}, "unknown item id 'A-9999'"),
        ("h_13", {"items": [{"id": TWO_ITEMS[0], "action": "approve"}] * 2}, "duplicate item id"),
        ("h_13", {"items": [{"id": TWO_ITEMS[0], "action": "approve"}]}, "missing item ids: 'toolu_01B7kR4pW'"),
        ("h_12", {"items": [{"action": "approve"}]}, "id must be a string"),
        ("h_15", {"items": [{"id": "call_1", "action": "edit", "data": {}}]}, "action 'edit' is not allowed"),
        ("h_12", {"items": [{"id": "A-1001", "action": "edit"}]}, "edit must carry the item's full data"),
        ("h_12", {"items": [{"id": "A-1001", "action": "edit", "data": ["A-1001"]}]}, "edit must carry"),
        ("h_12", {"items": [{"id": "A-1001", "action": "approve", "data": {}}]}, "approve must not carry data"),
        ("h_12", {"items": [{"id": "A-1001", "action": "reject", "comment": 3}]}, "comment must be a string"),
        ("h_12", {"items": [{"id": "A-1001", "action": "approve"}], "decided_by": 7}, "decided_by must be a string"),
    ],
)
def test_invalid_decisions_are_refused_with_the_reason(api, state, hold_id, body, message):
    answer = decide(api, hold_id, body)

    assert answer.status_code == 422
    assert answer.json()["error"]["code"] == "invalid_decision"
    assert message in answer.json()["error"]["message"]
    assert state.get_hold("default", hold_id)["status"] == "open"


def test_a_decision_needs_an_idempotency_key(api):
    answer = api.post("/holds/h_12/decision", json={"items": [{"id": "A-1001", "action": "approve"}]})

    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "idempotency_key_required"


def test_a_decision_must_be_json(api):
    answer = api.post("/holds/h_12/decision", content=b"{not json", headers={"Idempotency-Key": "k"})

    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "invalid_json"


def test_repeating_a_decision_with_its_key_replays_the_first_answer(api, state):
    body = {"items": [{"id": "A-1001", "action": "approve"}], "decided_by": "alice@example.com"}
    first = decide(api, "h_12", body, key="same")
    state.advance_clock(5)

    again = decide(api, "h_12", {"decided_by": "alice@example.com", "items": body["items"]}, key="same")

    assert again.status_code == first.status_code == 200
    assert again.content == first.content
    assert state.get_hold("default", "h_12")["decision"] == first.json()["decision"]


def test_a_repeated_refusal_is_replayed_too(api):
    body = {"items": [{"id": "A-1001", "action": "edit"}]}

    first, again = decide(api, "h_12", body, key="bad"), decide(api, "h_12", body, key="bad")

    assert again.status_code == first.status_code == 422 and again.content == first.content


def test_reusing_a_key_for_another_decision_is_refused(api, state):
    decide(api, "h_12", {"items": [{"id": "A-1001", "action": "approve"}]}, key="once")

    answer = decide(api, "h_12", {"items": [{"id": "A-1001", "action": "reject"}]}, key="once")

    assert answer.status_code == 422
    assert answer.json()["error"]["code"] == "idempotency_key_reused"
    assert state.get_hold("default", "h_12")["decision"]["items"][0]["action"] == "approve"


def test_two_reviewers_at_once_decide_a_hold_only_once(api, server):
    answers = []

    def decide_with(key: str) -> None:
        headers = {"Authorization": f"Bearer {API_KEY}", "Idempotency-Key": key}
        answers.append(
            httpx.post(
                f"{server.url}/v0/envs/default/holds/h_12/decision",
                json={"items": [{"id": "A-1001", "action": "approve"}]},
                headers=headers,
            )
        )

    threads = [threading.Thread(target=decide_with, args=(f"reviewer-{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(answer.status_code for answer in answers) == [200, 409, 409, 409]


# Expiry


def test_a_hold_expires_when_looked_at_after_its_expiry(api, state):
    state.advance_clock(5 * 60)

    hold = api.get("/holds/h_15").json()

    assert hold["status"] == "expired" and hold["decision"] is None
    run = api.get("/runs/r_44").json()
    assert run["status"] == "completed" and run["output"] == {"answer": "Nobody decided in time."}
    assert "h_15" not in all_open_ids(api, limit=100)
    assert "h_16" in all_open_ids(api, limit=100)


def test_deciding_an_expired_hold_conflicts(api, state):
    state.advance_clock(5 * 60)

    answer = decide(api, "h_15", {"items": [{"id": "call_1", "action": "approve"}]})

    assert answer.status_code == 409
    assert answer.json()["error"]["message"] == "hold h_15 is expired"


def test_a_hold_without_expiry_never_expires(api, state):
    state.advance_clock(365 * 24 * 3600)

    assert api.get("/holds/h_14").json()["status"] == "open"
    assert all_open_ids(api, limit=100) == ["h_14"]


# Faults


@pytest.mark.parametrize("status", [500, 502, 503])
def test_an_injected_error_answers_without_touching_state(api, state, status):
    state.push_faults([{"status": status}])
    body = {"items": [{"id": "A-1001", "action": "approve"}]}

    failed = decide(api, "h_12", body, key="retry-me")

    assert failed.status_code == status
    assert failed.json() == {"error": {"code": "unavailable", "message": "injected fault"}}
    assert state.get_hold("default", "h_12")["status"] == "open"
    assert decide(api, "h_12", body, key="retry-me").status_code == 200


def test_an_injected_429_says_when_to_retry(api, state):
    state.push_faults([{"status": 429}])

    answer = api.get("/holds")

    assert answer.status_code == 429 and answer.headers["retry-after"] == "1"
    assert api.get("/holds").status_code == 200


def test_an_injected_delay_slows_the_answer(api, state):
    state.push_faults([{"delay": 0.3}])

    started = time.monotonic()
    answer = api.get("/holds/h_12")

    assert time.monotonic() - started >= 0.3
    assert answer.status_code == 200


def test_an_injected_drop_closes_the_connection_unanswered(api, state):
    state.push_faults([{"drop": True}])

    with pytest.raises(httpx.RemoteProtocolError):
        api.get("/holds")

    assert api.get("/holds").status_code == 200
    assert state.requests[0]["status"] is None


def test_a_fault_for_one_path_waits_for_that_path(api, state):
    state.push_faults([{"status": 503, "path_contains": "/decision"}])

    assert api.get("/holds").status_code == 200
    assert decide(api, "h_12", {"items": [{"id": "A-1001", "action": "approve"}]}).status_code == 503
    assert state.next_fault("/decision") is None


def test_faults_are_taken_in_order(api, state):
    state.push_faults([{"status": 502}, {"delay": 0}, {"status": 503}])

    assert [api.get("/holds").status_code for _ in range(4)] == [502, 200, 503, 200]


def test_a_client_hanging_up_mid_request_leaves_the_server_serving(api, server):
    with socket.create_connection(("127.0.0.1", server.port)) as raw:
        raw.sendall(b"POST /v0/envs/default/holds/h_12/decision HTTP/1.1\r\nContent-Length: 500\r\n\r\n{")

    assert api.get("/holds/h_12").status_code == 200


def test_a_chunked_body_is_refused_and_the_connection_closed(api):
    answer = api.post("/holds/h_12/decision", content=iter([b'{"items": []}']), headers={"Idempotency-Key": "k"})

    assert answer.status_code == 411 and answer.headers["connection"] == "close"
    assert api.get("/holds/h_12").json()["status"] == "open"


# Control endpoints


def test_control_adds_holds_with_defaults(control, state):
    answer = control.post(
        "/holds",
        json={
            "env": "staging",
            "holds": [
                {"question": "Refund 10.00?", "customer_message": "please"},
                {"expires_at": None, "actions": ["approve", "reject"], "items": [{"id": "call_1", "data": {"n": 1}}]},
            ],
        },
    )

    assert answer.status_code == 201
    first, second = answer.json()["holds"]
    assert first["hold_id"] == "h_100" and first["run_id"] == "r_100" and first["agent"] == "llamaindex-support"
    assert first["status"] == "open" and first["actions"] == ["approve", "edit", "reject"]
    assert len(first["items"]) == 1 and first["files"] == [] and first["decision"] is None
    lifetime = parse_iso(first["expires_at"]) - parse_iso(first["created_at"])
    assert lifetime == timedelta(hours=1)
    assert second["hold_id"] == "h_101" and second["expires_at"] is None
    assert second["items"] == [{"id": "call_1", "title": "call_1", "data": {"n": 1}}]
    assert state.get_run("staging", "r_100")["input"] == {"message": "please"}
    assert state.get_hold("default", "h_100") is None


def test_control_generates_holds(control, state):
    answer = control.post("/holds", json={"generate": 8})

    assert answer.status_code == 201
    assert [hold["hold_id"] for hold in answer.json()["holds"]] == [f"h_g{n}" for n in range(1, 9)]
    again = control.post("/holds", json={"generate": 2}).json()["holds"]
    assert [hold["hold_id"] for hold in again] == ["h_g9", "h_g10"]
    assert state.get_run("default", "r_g10")["status"] == "held"


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"holds": "h"},
        {"generate": -1},
        {"generate": True},
        {"holds": [{"status": "maybe"}]},
        {"holds": [{"hold_id": "h_12"}]},
        {"holds": [{"items": []}]},
        {"holds": [{"created_at": "soon"}]},
    ],
)
def test_control_refuses_unusable_holds(control, body):
    answer = control.post("/holds", json=body)

    assert answer.status_code == 422 and answer.json()["error"]["code"] == "invalid_request"


def test_control_decides_cancels_and_expires(control, api):
    decided = control.post("/holds/h_13/decide", json={"decided_by": "bob@example.com"}).json()
    cancelled = control.post("/holds/h_12/cancel").json()
    expired = control.post("/holds/h_14/expire", json={"env": "default"}).json()

    assert decided["status"] == "decided"
    assert decided["decision"]["items"] == [
        {"id": "toolu_01A9xQ2mZ", "action": "approve"},
        {"id": "toolu_01B7kR4pW", "action": "approve"},
    ]
    assert cancelled["status"] == "cancelled" and api.get("/runs/r_41").json()["status"] == "failed"
    assert expired["status"] == "expired" and expired["expires_at"] is not None
    assert api.get("/runs/r_43").json()["output"] == {"answer": "Nobody decided in time."}


def test_control_changes_need_an_open_hold(control):
    control.post("/holds/h_12/cancel")

    not_open = control.post("/holds/h_12/expire")
    missing = control.post("/holds/h_nope/decide")

    assert not_open.status_code == 409 and not_open.json()["hold"]["status"] == "cancelled"
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "hold_not_found"


def test_control_injects_and_clears_faults(control, api):
    assert control.post("/faults", json={"faults": [{"status": 503}, {"delay": 0}]}).json() == {"pending": 2}
    assert control.post("/faults", json={"faults": [{"wait": 1}]}).status_code == 422
    assert control.delete("/faults").json() == {"pending": 0}
    assert api.get("/holds").status_code == 200


def test_control_moves_the_clock(control, state):
    before = state.now()

    now = control.post("/clock", json={"advance_seconds": 600}).json()["now"]

    assert ISO_Z.match(now)
    assert timedelta(seconds=599) <= parse_iso(now) - before <= timedelta(seconds=602)
    assert control.get("/clock").json()["now"] >= now
    assert control.post("/clock", json={"advance_seconds": "soon"}).status_code == 422


def test_control_resets_with_or_without_samples(control, state):
    state.push_faults([{"status": 503}])

    assert control.post("/reset").json() == {"holds": 0}
    assert state.next_fault() is None
    assert control.post("/reset", json={"samples": True}).json() == {"holds": 9}
    assert control.post("/reset", content=b"{oops").status_code == 400


def test_the_request_log_records_api_requests_only(control, api, state):
    before = time.time()
    decide(api, "h_12", {"items": [{"id": "A-1001", "action": "approve"}]}, key="logged")
    api.get("/holds", params={"limit": 5})
    control.get("/clock")

    logged = control.get("/requests").json()["requests"]

    assert [(entry["method"], entry["path"], entry["status"]) for entry in logged] == [
        ("POST", "/v0/envs/default/holds/h_12/decision", 200),
        ("GET", "/v0/envs/default/holds", 200),
    ]
    posted, listed = logged
    assert posted["body"] == {"items": [{"id": "A-1001", "action": "approve"}]}
    assert posted["headers"]["idempotency-key"] == "logged"
    assert posted["headers"]["authorization"] == "Bearer [redacted]"
    assert listed["query"] == {"limit": "5"} and listed["body"] is None
    assert ISO_Z.match(listed["at"])
    assert before <= posted["received_at"] <= listed["received_at"] <= time.time()  # for timing deliveries
    assert API_KEY not in control.get("/requests").text
    assert control.delete("/requests").json() == {"requests": []}
    assert state.requests == []


# Samples


def test_samples_expire_as_a_demo_needs():
    now = parse_iso("2026-11-29T10:00:00Z")
    holds = {hold["hold_id"]: hold for hold in sample_holds(now)}

    def expires_in(hold_id: str) -> timedelta | None:
        expires_at = holds[hold_id]["expires_at"]
        return parse_iso(expires_at) - now if expires_at else None

    assert expires_in("h_15") == timedelta(minutes=4)
    assert expires_in("h_16") == timedelta(minutes=12)
    assert expires_in("h_12") == timedelta(hours=3)
    assert expires_in("h_13") == timedelta(days=1)
    assert expires_in("h_14") is None
    assert all(timedelta(0) < now - parse_iso(hold["created_at"]) <= timedelta(hours=1) for hold in holds.values())
    assert sorted(holds) == [f"h_{n}" for n in range(12, 21)]


def test_generated_holds_cycle_through_the_framework_shapes():
    now = parse_iso("2026-11-29T10:00:00Z")
    holds = generated_holds(24, now, first_number=1)

    assert len({hold["hold_id"] for hold in holds}) == len({hold["run_id"] for hold in holds}) == 24
    assert {hold["agent"] for hold in holds[:4]} == {
        "llamaindex-support",
        "upsonic-support",
        "support-agno",
        "support-openai-agents",
    }
    amounts = [item["data"]["amount"] for hold in holds for item in hold["items"]]
    assert all(re.fullmatch(r"\d+\.\d\d", amount) for amount in amounts)
    lifetimes = [parse_iso(hold["expires_at"]) - now for hold in holds if hold["expires_at"]]
    assert 0 < len(lifetimes) < 24
    assert all(timedelta(minutes=5) <= lifetime <= timedelta(days=2) for lifetime in lifetimes)


def assert_valid_png(content: bytes) -> None:
    """Signature, then chunks whose CRCs hold, IHDR first and IEND last, and pixels that inflate."""
    assert content[:8] == b"\x89PNG\r\n\x1a\n"
    position, kinds, pixels = 8, [], b""
    while position < len(content):
        (length,) = struct.unpack(">I", content[position : position + 4])
        kind, data = content[position + 4 : position + 8], content[position + 8 : position + 8 + length]
        (crc,) = struct.unpack(">I", content[position + 8 + length : position + 12 + length])
        assert zlib.crc32(kind + data) == crc
        kinds.append(kind)
        pixels += data if kind == b"IDAT" else b""
        position += 12 + length
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND"
    width, height = struct.unpack(">II", content[16:24])
    assert len(zlib.decompress(pixels)) == height * (1 + 3 * width)


# The management command


def test_runplatform_serves_samples_and_generated_holds_until_ctrl_c(monkeypatch):
    printed = io.StringIO()
    seen = {}

    def fetch_then_interrupt() -> None:
        url = re.search(r"http://127\.0\.0\.1:\d+", printed.getvalue()).group()
        headers = {"Authorization": "Bearer command-key"}
        seen["staging"] = httpx.get(f"{url}/v0/envs/staging/holds", headers=headers).json()["holds"]
        raise KeyboardInterrupt

    monkeypatch.setattr(runplatform, "wait_for_ctrl_c", fetch_then_interrupt)

    call_command(
        "runplatform", "--port", "0", "--api-key", "command-key", "--env", "staging", "--generate", "3", stdout=printed
    )

    assert "12 open holds in default, 3 open holds in staging" in printed.getvalue()
    assert "command-key" not in printed.getvalue()
    assert len(seen["staging"]) == 3
