"""Fixtures of the browser tests: a reviewer signed in to the live server in the suite's Chromium
(tests/conftest.py)."""

import pytest

from holds.deciding import decisions
from tests.helpers.browser import close_quietly, signed_in_page


@pytest.fixture(autouse=True)
def prompt_status_polls(monkeypatch):
    """A decision being sent asks for its state every half second rather than every two: these tests wait for
    outcomes by the dozen, and the interval is the page's pace, not what they check."""
    monkeypatch.setattr(decisions, "STATUS_POLL_SECONDS", 0.5)


@pytest.fixture
def browsing_page(browser, live_server, samples, alice):
    """Alice, signed in through the login page, for a test that sends no decision: no worker runs."""
    page = signed_in_page(browser, live_server)
    page.on("dialog", lambda dialog: (page.problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    yield page
    close_quietly(page.context)


@pytest.fixture
def reviewer_page(browsing_page, celery_processes, immediate_delivery):
    """Alice, signed in, with a worker delivering decisions (at once, unless a test sets UNDO_SECONDS)."""
    celery_processes("worker")
    return browsing_page
