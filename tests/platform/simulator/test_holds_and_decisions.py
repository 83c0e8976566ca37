"""The simulated platform's holds, runs, files, decisions and expiry, over real HTTP on 127.0.0.1."""

import threading

import httpx
import pytest

from tests.helpers.simulator_client import API_KEY, ISO_Z, all_open_ids, approve_all, assert_valid_png, decide

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
