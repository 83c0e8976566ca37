"""Live updates: what a change publishes, when, and to whose open pages; the streams' replay, caps and heartbeat."""

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import redis
from django.db import transaction
from django.test import RequestFactory
from django.utils import timezone

from holds import lifecycle
from holds.deciding import decisions
from holds.models import Hold
from live import streams, views
from notifications.models import Notification
from reviewqueue import changes, roles
from teams import scopes
from tests.helpers.duplicates import every_duplicate
from tests.helpers.handoff import approve_all
from tests.helpers.users import add_hold, make_user, scoped_group


@pytest.fixture
def channel(settings):
    """A subscriber to the events' channel, as a process serving streams has."""
    subscription = redis.Redis.from_url(settings.REDIS_URL).pubsub(ignore_subscribe_messages=True)
    subscription.subscribe(changes.channel())
    yield subscription
    subscription.close()


def published(subscription, wait: float = 1.0) -> list[str]:
    """What the channel carried within ``wait`` seconds (and shortly after the first)."""
    found, deadline = [], time.monotonic() + wait
    while time.monotonic() < deadline:
        message = subscription.get_message(timeout=0.05)
        if message:
            found.append(message["data"].decode())
            deadline = min(deadline, time.monotonic() + 0.1)
    return found


@pytest.fixture
def teams(db, platform_state, platform_client):
    """Two teams and a hold of each: Billing sees billing agents' holds, Support support agents'."""
    billing_reviewer = make_user("bill", roles.REVIEWERS)
    billing_reviewer.groups.add(scoped_group("Billing", agent="billing-*"))
    support_reviewer = make_user("sue", roles.REVIEWERS)
    support_reviewer.groups.add(scoped_group("Support", agent="support-*"))
    billing_hold = add_hold(platform_state, platform_client, "billing-agent")
    support_hold = add_hold(platform_state, platform_client, "support-agent")
    return billing_reviewer, support_reviewer, billing_hold, support_hold


@pytest.mark.django_db(transaction=True)
def test_a_claim_is_published_once_its_transaction_commits_and_never_when_it_rolls_back(samples, channel, alice):
    hold = next(iter(samples.values()))

    with pytest.raises(RuntimeError), transaction.atomic():
        lifecycle.claim(hold, alice)
        assert published(channel, wait=0.2) == []  # not before the commit
        raise RuntimeError("the request failed after the claim")
    assert published(channel, wait=0.3) == []
    assert Hold.objects.get(pk=hold.pk).claimed_by is None

    lifecycle.claim(hold, alice)
    (event,) = published(channel)
    assert '"kind":"claim"' in event and f"[{hold.pk}," in event


@pytest.mark.django_db(transaction=True)
def test_an_event_carries_ids_and_scope_fields_never_the_agents_words(channel, platform_state, platform_client):
    hold = add_hold(platform_state, platform_client, "support-agent", question="Refund <b>SECRET-WORDS</b>?")

    events = published(channel)

    assert events and all("SECRET-WORDS" not in event for event in events)
    assert any(f"[{hold.pk}," not in event and '"kind":"hold"' in event for event in events)  # arrived, id unread


@pytest.mark.django_db(transaction=True)
def test_a_decision_tells_the_bells_of_the_messages_it_resolves_and_no_bell_when_it_resolves_none(
    samples, channel, alice, bob
):
    told, quiet = samples["h_12"], samples["h_13"]
    now = timezone.now()
    for user, hold in ((bob, told), (alice, told)):
        Notification.objects.create(
            event="expiring_soon", subject_key=f"hold:{hold.pk}", channel="in_app", recipient_key=f"user:{user.pk}",
            user=user, hold=hold, title="Expires in 11 min", body="", created_at=now, next_attempt_at=now,
        )  # fmt: skip

    decisions.submit(told, alice, approve_all(told), duplicates_checked=every_duplicate(told))
    bells = [event for event in published(channel) if '"kind":"bell"' in event]
    decisions.submit(quiet, alice, approve_all(quiet), duplicates_checked=every_duplicate(quiet))
    after = [event for event in published(channel) if '"kind":"bell"' in event]

    assert len(bells) == 1 and f'"users":[{min(alice.pk, bob.pk)},{max(alice.pk, bob.pk)}]' in bells[0]
    assert after == []


def test_nothing_is_published_with_live_events_off(settings, samples, channel, alice):
    settings.LIVE_EVENTS = False

    lifecycle.claim(next(iter(samples.values())), alice)

    assert published(channel, wait=0.3) == [] and changes.latest_id() == 0


def test_a_stream_shows_a_person_only_the_holds_of_their_scope_and_only_their_own_bell(teams, alice):
    billing_reviewer, support_reviewer, billing_hold, support_hold = teams
    event = {"id": 7, "kind": "claim", "holds": [[support_hold.pk, "default", "support-agent", "x"]], "users": []}
    bell = {"id": 8, "kind": "bell", "holds": [], "users": [billing_reviewer.pk]}

    assert streams.shown(event, scopes.viewer_of(billing_reviewer)) is None
    assert streams.shown(event, scopes.viewer_of(support_reviewer)) == {
        "id": 7,
        "kind": "claim",
        "holds": [support_hold.pk],
    }
    assert streams.shown(event, scopes.viewer_of(alice))["holds"] == [support_hold.pk]  # in no scoped group
    assert streams.shown(bell, scopes.viewer_of(billing_reviewer)) == {"id": 8, "kind": "bell", "holds": []}
    assert streams.shown(bell, scopes.viewer_of(support_reviewer)) is None


def test_of_two_teams_streams_each_hears_of_its_own_teams_hold_and_never_of_the_others(teams, open_stream):
    billing_reviewer, support_reviewer, billing_hold, support_hold = teams
    billing_stream, support_stream = open_stream(billing_reviewer), open_stream(support_reviewer)

    lifecycle.claim(support_hold, support_reviewer)
    lifecycle.claim(billing_hold, billing_reviewer)

    heard = support_stream.next()
    assert (heard.kind, heard.data) == ("claim", {"holds": [support_hold.pk]})
    heard = billing_stream.next()
    assert (heard.kind, heard.data) == ("claim", {"holds": [billing_hold.pk]})  # the support claim never came
    assert support_stream.next(timeout=0.5) is None


def test_a_stream_is_served_unbuffered_uncompressed_and_uncached(open_stream, alice):
    stream = open_stream(alice)

    assert stream.status == 200
    assert stream.headers["content-type"].startswith("text/event-stream")
    assert stream.headers["x-accel-buffering"] == "no"
    assert "no-cache" in stream.headers["cache-control"]
    assert "content-encoding" not in stream.headers


def test_a_reconnecting_page_gets_what_it_missed_after_its_last_event_id(open_stream, samples, alice):
    first, second, third = list(samples.values())[:3]
    lifecycle.claim(first, alice)
    seen = changes.latest_id()
    lifecycle.claim(second, alice)
    lifecycle.claim(third, alice)

    stream = open_stream(alice, since=0, last_event_id=seen)  # the header wins over the page's since

    replayed = [stream.next(), stream.next()]
    assert [event.data["holds"] for event in replayed] == [[second.pk], [third.pk]]
    assert [event.id for event in replayed] == [seen + 1, seen + 2]
    assert stream.next(timeout=0.3) is None


def test_a_page_that_missed_more_than_the_buffer_keeps_is_told_to_refresh(open_stream, samples, alice, monkeypatch):
    monkeypatch.setattr(changes, "BUFFERED_EVENTS", 2)
    since = changes.latest_id()
    for hold in list(samples.values())[:4]:
        lifecycle.claim(hold, alice)

    stream = open_stream(alice, since=since)

    refresh = stream.next()
    assert (refresh.kind, refresh.id) == ("refresh", changes.latest_id())
    assert stream.next(timeout=0.3) is None  # what was buffered is not sent on top of it


def test_a_page_newer_than_the_counter_redis_lost_is_told_to_refresh(open_stream, alice):
    assert open_stream(alice, since=changes.latest_id() + 1000).next().kind == "refresh"


def test_beyond_the_streams_a_session_may_have_open_the_page_is_refused_and_polls(open_stream, settings, alice):
    settings.LIVE_STREAMS_PER_SESSION = 2
    first = open_stream(alice)
    second = open_stream(alice, cookies=first.cookies)

    third = open_stream(alice, cookies=first.cookies)
    other_session = open_stream(alice)

    assert (first.status, second.status, third.status, other_session.status) == (200, 200, 429, 200)
    second.close()
    assert wait_for_status(open_stream, alice, first.cookies) == 200  # its place was given back


def wait_for_status(open_stream, user, cookies, tries=20):
    for _ in range(tries):
        status = open_stream(user, cookies=cookies).status
        if status == 200:
            return status
        time.sleep(0.05)
    return status


def test_one_persons_many_sessions_cannot_take_every_place_and_past_their_cap_a_page_polls(
    open_stream, settings, alice, bob
):
    settings.LIVE_STREAMS_PER_SESSION, settings.LIVE_STREAMS_PER_PERSON, settings.LIVE_STREAMS_PER_PROCESS = 2, 3, 4
    laptop = open_stream(alice)
    opened = [laptop, open_stream(alice, cookies=laptop.cookies), open_stream(alice)]

    refused = [open_stream(alice), open_stream(alice)]  # two more sessions of hers, each with a place to spare
    bobs = open_stream(bob)

    assert [stream.status for stream in opened] == [200, 200, 200]
    assert [stream.status for stream in refused] == [429, 429]
    assert all(stream.headers["content-type"].startswith("text/plain") for stream in refused)
    assert bobs.status == 200
    opened[2].close()
    assert wait_for_status(open_stream, alice, refused[0].cookies) == 200  # her place was given back


def test_beyond_the_streams_a_process_may_serve_the_page_is_refused(open_stream, settings, alice, bob):
    settings.LIVE_STREAMS_PER_PROCESS = 1
    assert open_stream(alice).status == 200

    assert open_stream(bob).status == 429


def test_an_idle_stream_sends_a_heartbeat(open_stream, settings, alice):
    settings.LIVE_HEARTBEAT_SECONDS = 0.2
    stream = open_stream(alice)

    assert stream.next(skip=("hello",)).kind == "ping"


def test_without_live_events_or_a_role_there_is_no_stream(open_stream, settings, alice):
    assert open_stream(make_user("nora")).status == 403  # signed in, with no role
    settings.LIVE_EVENTS = False
    assert open_stream(alice).status == 204


def test_under_wsgi_the_stream_answers_no_content_and_the_page_polls():
    request = RequestFactory().get(changes.STREAM_PATH)  # a WSGIRequest, as gunicorn's

    # In a thread of its own: the browser tests' Playwright may keep an event loop in this one.
    with ThreadPoolExecutor(1) as thread:
        assert thread.submit(asyncio.run, views.stream(request)).result().status_code == 204


def test_a_page_names_its_stream_from_the_last_event_and_without_live_events_none(alice_client, settings):
    assert f'data-live-url="{changes.STREAM_PATH}?since={changes.latest_id()}"' in alice_client.get("/").text
    settings.LIVE_EVENTS = False
    page = alice_client.get("/").text
    assert "data-live-url" not in page and 'hx-trigger="every 5s, live"' in page  # it polls as before


def test_after_redis_lost_the_counter_the_new_events_still_reach_an_open_stream(open_stream, samples, alice, settings):
    first, second = list(samples.values())[:2]
    stream = open_stream(alice, since=changes.latest_id())
    lifecycle.claim(first, alice)
    assert stream.next().kind == "claim"  # the stream is live, its replay over, before Redis loses the counter
    redis.Redis.from_url(settings.REDIS_URL).delete(changes.COUNTER_KEY, changes.BUFFER_KEY)

    lifecycle.claim(second, alice)

    heard = stream.next()
    assert (heard.kind, heard.id, heard.data) == ("claim", 1, {"holds": [second.pk]})
