"""The request URL Slack posts to: only Slack's signed, fresh, first requests get in; hostile ones get a 400 or 401."""

import json
import re
import time
from urllib.parse import urlencode

import pytest
import redis
import time_machine
from django.conf import settings
from django.core.cache import cache
from django.urls import reverse
from hypothesis import HealthCheck, event, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from holds.links import action_links
from holds.models import DecisionChannel
from slackapp import payloads, verifying
from slackapp import tasks as slack_tasks
from tests.helpers.fake_slack import SIGNING_SECRET, TEAM, button_press, post_press, signed, signed_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def pressed(samples, slack_app):
    """A press of Approve on h_12, as Slack would post it."""
    value = action_links.make(samples["h_12"], "approve", channel=DecisionChannel.SLACK)
    return button_press(value, "approve", slack_app.response_url())


def test_a_signed_press_is_acknowledged_at_once_with_an_empty_200(client, pressed):
    answer = post_press(client, *signed(pressed))

    assert answer.status_code == 200 and answer.content == b""


def test_unsigned_badly_signed_stale_and_replayed_requests_are_refused_with_401(client, pressed):
    body, headers = signed(pressed)
    wrong_secret = signed(pressed, secret="not-our-secret")
    stale = signed(pressed, timestamp=int(time.time()) - 6 * 60)
    tampered = (body.replace(b"approve", b"reject"), headers)

    statuses = [
        post_press(client, body, {}).status_code,
        post_press(client, *wrong_secret).status_code,
        post_press(client, *stale).status_code,
        post_press(client, *tampered).status_code,
        post_press(client, body, {**headers, "HTTP_X_SLACK_SIGNATURE": "v0=é"}).status_code,
        post_press(client, body, {**headers, "HTTP_X_SLACK_REQUEST_TIMESTAMP": "soon"}).status_code,
        post_press(client, body, headers).status_code,  # the first time Slack's request arrives
        post_press(client, body, headers).status_code,  # the same request again
    ]

    assert statuses == [401, 401, 401, 401, 401, 401, 200, 401]


def test_a_request_stamped_ahead_is_remembered_until_its_own_timestamp_is_stale(client, pressed):
    stamped_ahead = int(time.time()) + 290
    body, headers = signed(pressed, timestamp=stamped_ahead)

    first = post_press(client, body, headers)
    remembered_for = redis.Redis.from_url(settings.REDIS_URL).ttl(
        cache.make_key(verifying.seen_key(headers["HTTP_X_SLACK_REQUEST_TIMESTAMP"], headers["HTTP_X_SLACK_SIGNATURE"]))
    )
    with time_machine.travel(time.time() + 305):  # still fresh by its timestamp: 15 s of its window left
        replayed = post_press(client, body, headers)

    assert first.status_code == 200 and replayed.status_code == 401
    assert remembered_for >= 590 - 5  # its timestamp + 300 s, not 300 s from first sight


def test_without_the_signing_secret_there_is_no_request_url(client, pressed, settings):
    settings.SLACK_SIGNING_SECRET = ""

    assert post_press(client, *signed(pressed)).status_code == 404


@pytest.mark.parametrize(
    "payload",
    [
        "not json",
        "[]",
        json.dumps({"type": "block_actions"}),
        json.dumps({"type": "block_actions", "actions": [{"action_id": "approve", "value": 7}]}),
        json.dumps({"actions": []}),
    ],
)
def test_a_signed_but_malformed_payload_is_a_400(client, slack_app, payload):
    assert post_press(client, *signed(payload)).status_code == 400


def test_a_nul_in_the_form_is_a_401_unsigned_and_a_400_signed(client, slack_app):
    """The signature is checked before the form: an unsigned request is refused as unsigned whatever it holds."""
    for form in ({"payload": "\x00"}, {"payload": "{}", "note\x00": "x"}):
        body = urlencode(form).encode()

        assert post_press(client, body, {}).status_code == 401
        assert post_press(client, body, signed_body(body, "forged")).status_code == 401
        signed_answer = post_press(client, body, signed_body(body))
        assert signed_answer.status_code == 400
        assert b"NUL characters" in signed_answer.content


def test_a_signed_press_with_a_bad_field_is_a_400(client, pressed):
    answers = [
        post_press(client, *signed({**pressed, "user": {"id": "U<script>"}})),
        post_press(client, *signed({**pressed, "team": {"id": ["T0"]}, "user": {"id": "U0ALICE"}})),
        post_press(client, *signed({**pressed, "response_url": "https://evil.example/hook"})),
        post_press(client, *signed({**pressed, "container": {"message_ts": "yesterday", "channel_id": "C0"}})),
        post_press(client, *signed({**pressed, "actions": [{**pressed["actions"][0], "value": "x" * 3000}]})),
    ]

    assert [answer.status_code for answer in answers] == [400] * 5


def test_an_open_button_or_a_closed_modal_is_acknowledged_and_needs_nothing(client, pressed):
    opened = {**pressed, "actions": [{"type": "button", "action_id": "open", "url": "https://x.example"}]}

    answers = [post_press(client, *signed(opened)), post_press(client, *signed({"type": "view_closed"}))]

    assert [answer.status_code for answer in answers] == [200, 200]


SLACK_KEYS = [
    *("type", "actions", "action_id", "value", "user", "team", "id", "team_id", "name", "username", "domain"),
    *("container", "channel_id", "message_ts", "response_url", "trigger_id", "view", "callback_id"),
    *("private_metadata", "state", "values", payloads.REASON_BLOCK, payloads.REASON_ACTION),
]
SLACK_WORDS = ["block_actions", "view_submission", "view_closed", "approve", "reject", "undo", "open", "U0ALICE", TEAM]
SLACK_WORDS += [payloads.REJECT_VIEW, "1700000000.000001", "approval:1", "decision:1", "C0REVIEWS"]


def slack_shapes(words: list[str]):
    """Any JSON value made of Slack's own keys and words (``words``: real buttons' values, a real response_url) as
    often as of anything else."""
    leaves = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats()
        | st.text(max_size=300)
        | st.sampled_from([*SLACK_WORDS, *words])
    )
    return st.recursive(
        leaves,
        lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.sampled_from(SLACK_KEYS) | st.text(), inner),
        max_leaves=40,
    )


def mutated(payload, data, shapes):
    """``payload`` with some of its values, at any depth, replaced by any shape or removed."""
    if isinstance(payload, dict):
        changed = {}
        for key, value in payload.items():
            fate = data.draw(st.sampled_from(["kept"] * 15 + ["mutated", "replaced", "removed"]))
            if fate != "removed":
                changed[key] = value if fate == "kept" else mutated(value, data, shapes)
                changed[key] = data.draw(shapes) if fate == "replaced" else changed[key]
        return changed
    if isinstance(payload, list):
        return [mutated(value, data, shapes) for value in payload]
    return payload


BUTTONS = ("approve", "reject")


def deep(nesting: int, opening: str) -> str:
    closing = "]" if opening == "[" else "}"
    return opening * nesting + "1" + closing * nesting


@hypothesis_settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_payload_signed_or_not_however_odd_is_a_5xx_or_crashes_the_press_task(
    client, samples, alice_in_slack, slack_app, data
):
    hold = samples["h_12"]
    buttons = {
        action: action_links.make(hold, action, channel=DecisionChannel.SLACK) for action in ("approve", "reject")
    }
    response_url = slack_app.response_url()
    shapes = slack_shapes([*buttons.values(), response_url])
    kind = data.draw(st.sampled_from(["a press made odd", "any shape", "deeply nested", "any text"]), label="kind")
    if kind == "a press made odd":
        action = data.draw(st.sampled_from(["approve", "reject", "undo"]))
        user = data.draw(st.sampled_from(["U0ALICE", "U0NOBODY"]))
        press = button_press(buttons.get(action, "approval:1"), action, response_url, user=user)
        submission = {"type": "view_submission", "team": {"id": TEAM}, "user": {"id": user, "team_id": TEAM}}
        metadata = {"value": buttons["reject"], "response_url": response_url, "channel_id": "C0", "message_ts": "1.2"}
        submission["view"] = {"callback_id": payloads.REJECT_VIEW, "private_metadata": json.dumps(metadata)}
        submission["view"]["state"] = {"values": {"reason": {"reason_input": {"value": "Paid twice"}}}}
        text = json.dumps(mutated(data.draw(st.sampled_from([press, submission])), data, shapes))
    elif kind == "any shape":
        text = json.dumps(data.draw(shapes, label="shape"))
    elif kind == "deeply nested":
        text = deep(data.draw(st.integers(1, 5000)), data.draw(st.sampled_from(["[", '{"type":'])))
    else:
        text = data.draw(st.text(max_size=2000))
    form = data.draw(st.sampled_from(["payload"] * 6 + ["other", "raw"]), label="form")
    body = text.encode("utf-8", "surrogatepass") if form == "raw" else urlencode({form: text}).encode()
    signing = data.draw(st.sampled_from(["signed"] * 6 + ["unsigned", "badly signed"]), label="signing")
    headers = {} if signing == "unsigned" else signed_body(body, SIGNING_SECRET if signing == "signed" else "forged")

    answer = post_press(client, body, headers)

    assert 200 <= answer.status_code < 500
    assert answer.status_code == 401 or signing == "signed"
    event(f"answered {answer.status_code}")
    if answer.status_code == 200:  # acknowledged: the worker's task then carries the press out
        press = payloads.read(text)
        if press is not None:
            handled = slack_tasks.handle_press(press.as_task_argument())
            assert isinstance(handled, str)
            words = re.sub(r"<[^|>]+\|", "", handled).split()[:2]  # without a connect link's own URL
            event(f"a press of {press.action} answered: {' '.join(words)} …")


def test_a_buttons_value_is_no_one_tap_link(alice_client, samples, slack_app):
    value = action_links.make(samples["h_12"], "approve", channel=DecisionChannel.SLACK)

    opened = alice_client.get(reverse("action-link", args=[value]))

    assert opened.status_code == 400 and b"not one Review Queue made" in opened.content


def test_a_signed_reject_modal_submission_with_odd_state_is_read_or_refused_never_a_500(client, slack_app):
    metadata = json.dumps({"value": "v", "response_url": "", "channel_id": "C0", "message_ts": "1.2"})
    views = [
        {"callback_id": "reject_reason", "private_metadata": metadata, "state": {"values": {"reason": "x"}}},
        {"callback_id": "reject_reason", "private_metadata": metadata, "state": {"values": ["x"]}},
        {"callback_id": "reject_reason", "private_metadata": "[1]", "state": {}},
        {"callback_id": "reject_reason", "private_metadata": metadata, "state": "x"},
    ]
    user = {"id": "U0ALICE", "team_id": "T0TEAM"}

    answers = [post_press(client, *signed({"type": "view_submission", "user": user, "view": view})) for view in views]

    assert [answer.status_code for answer in answers] == [200, 200, 400, 400]
