"""Fixtures of the browser tests: a reviewer signed in to the live server in the suite's Chromium
(tests/conftest.py)."""

import pytest

from tests.helpers.browser import close_quietly, signed_in_page


@pytest.fixture
def reviewer_page(browser, live_server, samples, alice, celery_processes, immediate_delivery):
    """Alice, signed in through the login page, with a worker delivering decisions (at once, unless a test sets
    UNDO_SECONDS)."""
    celery_processes("worker")
    page = signed_in_page(browser, live_server)
    page.on("dialog", lambda dialog: (page.problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    yield page
    close_quietly(page.context)
