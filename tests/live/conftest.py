"""Fixtures of the live updates' tests: streams opened on the ASGI live server (tests/conftest.py)."""

import pytest

from tests.helpers.streams import Stream


@pytest.fixture
def open_stream(asgi_live_server):
    """Open a user's stream (``Stream``'s arguments); each is closed at the end of the test."""
    opened = []

    def open_one(user, **options):
        stream = Stream(asgi_live_server, user, **options)
        opened.append(stream)
        return stream

    yield open_one
    for stream in opened:
        stream.close()
