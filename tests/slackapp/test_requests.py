"""The request URL Slack posts to: only Slack's signed, fresh, first requests get in; hostile ones get a 400 or 401."""

import json
import time

import pytest
import redis
import time_machine
from django.conf import settings
from django.core.cache import cache
from django.urls import reverse
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from holds.links import action_links
from holds.models import DecisionChannel
from slackapp import verifying
from tests.helpers.fake_slack import button_press, post_press, signed

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


@hypothesis_settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    payload=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(),
        lambda inner: (
            st.lists(inner)
            | st.dictionaries(
                st.sampled_from(["type", "actions", "user", "team", "value", "action_id", "view", "container"]), inner
            )
        ),
        max_leaves=12,
    )
)
def test_no_signed_payload_however_odd_is_a_500(client, slack_app, payload):
    if isinstance(payload, dict) and payload.get("type") is None:
        payload["type"] = "block_actions"
    answer = post_press(client, *signed(payload))

    assert answer.status_code in (200, 400, 401)  # 401: Hypothesis posting one example twice, a replay


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
