"""A whole walk writes each batch of holds while the next pages are listed (``reviewqueue.readahead``)."""

import threading

import pytest

from holds.mirror import platform, sync, writing
from holds.models import Hold
from reviewqueue.readahead import read_ahead

LISTING_WAIT = 5.0  # seconds a held-back page waits for the first batch's write; far beyond a sync of six holds


@pytest.mark.django_db
def test_the_first_batch_is_written_while_the_last_page_is_still_being_listed(
    platform_client, platform_state, monkeypatch
):
    monkeypatch.setattr(platform, "PAGE_SIZE", 2)
    monkeypatch.setattr(writing, "WRITE_BATCH", 2)
    for _ in range(6):
        platform_state.add_hold("default", {})
    first_batch_written = threading.Event()
    listing_waited = []
    original_open_page, original_store_listed = platform.PlatformClient.open_page, writing.store_listed

    def open_page_held_back(client, env, cursor=None):
        if cursor and len([r for r in platform_state.requests if r["path"].endswith("/holds")]) == 2:
            listing_waited.append(first_batch_written.wait(LISTING_WAIT))  # the third page waits for the first write
        return original_open_page(client, env, cursor)

    def store_listed(env, remote, known):
        stored = original_store_listed(env, remote, known)
        first_batch_written.set()
        return stored

    monkeypatch.setattr(platform.PlatformClient, "open_page", open_page_held_back)
    monkeypatch.setattr(writing, "store_listed", store_listed)

    result = sync.sync_env(platform_client, "default")

    assert listing_waited == [True]  # written before the listing went on, not after it ended
    assert result.error == "" and result.created == 6 and Hold.objects.count() == 6


def test_read_ahead_gives_every_item_in_order_made_ahead_of_the_consumer():
    made = []
    enough_made = threading.Event()

    def numbers():
        for number in range(10):
            made.append(number)
            if len(made) == 4:
                enough_made.set()
            yield number

    items = read_ahead(numbers(), depth=3)
    first = next(items)

    assert enough_made.wait(LISTING_WAIT)  # the thread went on while the consumer held the first item
    assert [first, *items] == list(range(10))


def test_an_error_while_reading_ahead_is_raised_in_its_place():
    def pages():
        yield "first"
        yield "second"
        raise platform.PlatformUnavailable("GET /holds: dropped")

    received = []
    with pytest.raises(platform.PlatformUnavailable, match="dropped"):
        for page in read_ahead(pages(), depth=5):
            received.append(page)

    assert received == ["first", "second"]


def test_a_consumer_that_stops_early_stops_the_thread_before_it_reads_much_further():
    made = []

    def endless():
        while True:
            made.append(len(made))
            yield made[-1]

    items = read_ahead(endless(), depth=2)
    assert next(items) == 0
    items.close()

    stopped_at = len(made)
    assert stopped_at <= 1 + 2 + 1  # the item given, the two ready, the one under way
    assert not any(thread.name == "read-ahead" for thread in threading.enumerate())
    assert len(made) == stopped_at
