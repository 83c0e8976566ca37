"""The Holds API client, talking over real HTTP to the simulated platform."""

import contextlib
import http.server
import json
import logging
import socket
import threading

import pytest

from holds.mirror import platform
from tests.helpers.processes import API_KEY


def add_hold(state, **fields):
    return state.add_hold("default", fields)


@contextlib.contextmanager
def unused_port():
    """A port on 127.0.0.1 that nothing listens on."""
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        yield bound.getsockname()[1]


def test_lists_every_open_hold_across_pages(platform_client, platform_state, monkeypatch):
    monkeypatch.setattr(platform, "PAGE_SIZE", 3)
    created = [add_hold(platform_state)["hold_id"] for _ in range(8)]

    listed = [hold.hold_id for hold in platform_client.open_holds("default")]

    assert listed == created
    pages = [r for r in platform_state.requests if r["path"].endswith("/holds")]
    assert len(pages) == 3
    assert all(r["query"]["status"] == "open" and r["query"]["limit"] == "3" for r in pages)


def test_an_env_without_holds_lists_nothing(platform_client):
    assert list(platform_client.open_holds("staging")) == []


def test_typed_hold_tolerates_absent_optional_and_unknown_fields():
    hold = platform.parse_hold({"hold_id": "h_1", "items": [{"id": "A-1", "data": {"amount": "1.00"}}], "surprise": 1})

    assert hold.intent == "" and hold.details == "" and hold.files == () and hold.expires_at is None
    assert hold.items[0].data == {"amount": "1.00"}
    assert hold.decision is None


def test_get_hold_returns_typed_fields(platform_client, platform_state):
    created = add_hold(
        platform_state,
        question="Refund 49.90 on order A-1001?",
        items=[{"id": "A-1001", "title": "A-1001 · 49.90", "data": {"order_id": "A-1001", "amount": "49.90"}}],
        files=[{"id": "f_1", "name": "photo.jpg", "content_type": "image/jpeg", "size": 3}],
    )

    hold = platform_client.get_hold("default", created["hold_id"])

    assert hold.question == "Refund 49.90 on order A-1001?"
    assert hold.items[0] == platform.HoldItem(
        id="A-1001", title="A-1001 · 49.90", data={"order_id": "A-1001", "amount": "49.90"}
    )
    assert hold.files[0].content_type == "image/jpeg"
    assert hold.created_at is not None and hold.created_at.tzinfo is not None


def test_unknown_hold_is_not_found(platform_client):
    with pytest.raises(platform.NotFound):
        platform_client.get_hold("default", "h_missing")


def test_decision_is_posted_with_idempotency_key_and_returns_the_decided_hold(platform_client, platform_state):
    hold_id = add_hold(platform_state, items=[{"id": "A-1", "title": "t", "data": {"amount": "49.90"}}])["hold_id"]

    decided = platform_client.post_decision(
        "default",
        hold_id,
        [platform.DecisionItem(id="A-1", action="edit", data={"amount": "20.00"}, comment="partial")],
        decided_by="alice@example.com",
        idempotency_key="key-1",
    )

    assert decided.status == "decided"
    assert decided.decision.decided_by == "alice@example.com"
    posted = [r for r in platform_state.requests if r["method"] == "POST"][0]
    assert posted["headers"]["idempotency-key"] == "key-1"
    assert posted["body"] == {
        "items": [{"id": "A-1", "action": "edit", "data": {"amount": "20.00"}, "comment": "partial"}],
        "decided_by": "alice@example.com",
    }


def test_deciding_a_decided_hold_raises_not_open_with_its_state(platform_client, platform_state):
    hold_id = add_hold(platform_state)["hold_id"]
    item_id = platform_state.get_hold("default", hold_id)["items"][0]["id"]
    platform_state.decide_elsewhere("default", hold_id, "bob@example.com")

    with pytest.raises(platform.HoldNotOpen) as raised:
        platform_client.post_decision(
            "default", hold_id, [platform.DecisionItem(id=item_id, action="approve")], "alice", "key-2"
        )

    assert raised.value.hold.status == "decided"
    assert raised.value.hold.decision.decided_by == "bob@example.com"


def test_an_invalid_decision_carries_the_platforms_message(platform_client, platform_state):
    hold_id = add_hold(platform_state, actions=["approve", "reject"])["hold_id"]
    item_id = platform_state.get_hold("default", hold_id)["items"][0]["id"]

    with pytest.raises(platform.InvalidDecision) as raised:
        platform_client.post_decision(
            "default", hold_id, [platform.DecisionItem(id=item_id, action="edit", data={})], "alice", "key-3"
        )

    assert "edit" in raised.value.message


@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_overload_and_server_errors_are_retryable(platform_client, platform_state, status):
    platform_state.push_faults([{"status": status}])

    with pytest.raises(platform.PlatformUnavailable, match=str(status)):
        platform_client.get_hold("default", "h_any")


def test_a_dropped_connection_is_retryable(platform_client, platform_state):
    platform_state.push_faults([{"drop": True}])

    with pytest.raises(platform.PlatformUnavailable, match="dropped"):
        list(platform_client.open_holds("default"))


def test_a_slow_platform_hits_the_read_timeout(platform_state, simulated_platform, settings):
    settings.AGENTOS_READ_TIMEOUT = 0.3
    platform_state.push_faults([{"delay": 1.5}])

    with (
        platform.PlatformClient.from_settings() as client,
        pytest.raises(platform.PlatformUnavailable, match="in time"),
    ):
        client.get_hold("default", "h_any")


def test_a_refused_connection_is_retryable():
    with (
        unused_port() as port,
        platform.PlatformClient(f"http://127.0.0.1:{port}", API_KEY) as client,
        pytest.raises(platform.PlatformUnavailable, match="connect"),
    ):
        client.get_hold("default", "h_any")


def test_sends_the_bearer_key_and_never_logs_or_raises_it(platform_state, simulated_platform, caplog):
    caplog.set_level(logging.DEBUG)
    errors = []
    with platform.PlatformClient(simulated_platform.url, API_KEY) as client:
        for call in (lambda: client.get_hold("default", "h_missing"), lambda: client.get_run("default", "r_missing")):
            with pytest.raises(platform.PlatformError) as raised:
                call()
            errors.append(raised.value)
    with platform.PlatformClient(simulated_platform.url, "wrong-key") as client:
        with pytest.raises(platform.PlatformUnavailable, match="refused the API key") as raised:
            client.get_hold("default", "h_any")
        errors.append(raised.value)

    # The simulator redacts the key in its log; it answered 404, not 401, so the key was right.
    first = platform_state.requests[0]
    assert first["headers"]["authorization"].startswith("Bearer ") and first["status"] == 404
    assert API_KEY not in caplog.text
    assert all(API_KEY not in repr(error) and "wrong-key" not in str(error) for error in errors)


def test_gets_a_run(platform_client, platform_state):
    hold = add_hold(platform_state)

    run = platform_client.get_run("default", hold["run_id"])

    assert run.run_id == hold["run_id"]
    assert run.status == "held"


def test_streams_a_file_with_its_content_type(platform_client, platform_state):
    platform_state.load_samples()
    hold = platform_client.get_hold("default", "h_14")
    attached = hold.files[0]

    with platform_client.stream_file("default", "h_14", attached.id) as download:
        body = b"".join(download.chunks)

    assert download.content_type == attached.content_type
    assert body[:4] in (b"\x89PNG", b"\xff\xd8\xff\xe0", b"\xff\xd8\xff\xdb", b"\xff\xd8\xff\xe1")
    assert download.content_length == len(body)


def test_a_missing_file_is_not_found(platform_client, platform_state):
    hold_id = add_hold(platform_state)["hold_id"]

    with pytest.raises(platform.NotFound), platform_client.stream_file("default", hold_id, "f_missing"):
        pass


def test_ids_with_slashes_stay_one_path_segment(platform_client, platform_state):
    with pytest.raises(platform.NotFound):
        platform_client.get_hold("default", "../runs/r_1")
    assert platform_state.requests[-1]["path"].endswith("/holds/..%2Fruns%2Fr_1")


def test_a_malformed_hold_is_listed_apart_and_the_rest_of_its_page_is_read(platform_client, platform_state):
    first, broken, last = (add_hold(platform_state)["hold_id"] for _ in range(3))
    platform_state.get_hold("default", broken)["items"] = [{"id": 7, "data": {}}]

    listed = list(platform_client.open_holds("default"))

    assert [hold.hold_id for hold in listed] == [first, broken, last]
    assert listed[1] == platform.UnreadableHold(
        hold_id=broken, reason="an item id is a number, not an id", excerpt=listed[1].excerpt
    )
    assert '"id": 7' in listed[1].excerpt
    with pytest.raises(platform.MalformedHold, match="an item id is a number"):
        platform_client.get_hold("default", broken)


def test_numbers_python_or_postgres_cannot_hold_are_kept_as_the_text_sent(platform_client, platform_state):
    hold_id = add_hold(
        platform_state, items=[{"id": "A-1", "data": {"nan": float("nan"), "big": 10**4100, "ok": 1.5}}]
    )["hold_id"]

    data = platform_client.get_hold("default", hold_id).items[0].data

    assert data == {"nan": "NaN", "big": "1" + "0" * 4100, "ok": 1.5}


@contextlib.contextmanager
def platform_answering(body: bytes):
    """A bare HTTP server answering every GET and POST with ``body``: a platform the simulator cannot play."""

    class Answer(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.do_GET()

        def log_message(self, *arguments):
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Answer) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()


def test_a_hold_nested_too_deeply_for_the_decoder_is_listed_apart(platform_state):
    # Python's json writes and reads about 10,000 levels; another platform may send more.
    good = [json.dumps(hold) for hold in (add_hold(platform_state), add_hold(platform_state))]
    deep = '{"items": [{"id": "A-1", "data": ' + "[" * 50_000 + "]" * 50_000 + '}], "hold_id": "h_deep"}'
    page = f'{{"next_cursor": null, "holds": [{good[0]}, {deep} ,\n {good[1]}]}}'

    with platform_answering(page.encode()) as url, platform.PlatformClient(url, API_KEY) as client:
        listed = list(client.open_holds("default"))

    assert [type(hold).__name__ for hold in listed] == ["Hold", "UnreadableHold", "Hold"]
    assert listed[1].hold_id == "h_deep" and "levels deep" in listed[1].reason
    assert listed[1].excerpt.startswith('{"items": [{"id": "A-1", "data": [[[')


def test_a_decision_applied_with_a_malformed_answer_counts_as_applied():
    # A 200 means the platform applied it; posting again would only replay the same unreadable answer.
    answer = b'{"hold_id": "h_1", "status": "decided", "items": "not a list"}'
    item = platform.DecisionItem(id="A-1", action="approve")

    with platform_answering(answer) as url, platform.PlatformClient(url, API_KEY) as client:
        assert client.post_decision("default", "h_1", [item], "alice@example.com", "key-1") is None


def test_a_page_that_is_not_json_fails_the_listing(platform_state):
    with (
        platform_answering(b'{"holds": [{"hold_id": "h_1"}, ') as url,
        platform.PlatformClient(url, API_KEY) as client,
        pytest.raises(platform.PlatformUnavailable, match="did not answer JSON"),
    ):
        list(client.open_holds("default"))
