"""The simulated platform's injected faults and its control endpoints, over real HTTP on 127.0.0.1."""

import io
import re
import socket
import time
from datetime import timedelta

import httpx
import pytest
from django.core.management import call_command

from simulator.management.commands import runplatform
from simulator.samples import generated_holds, sample_holds
from simulator.times import parse_iso
from tests.helpers.simulator_client import API_KEY, ISO_Z, decide

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
