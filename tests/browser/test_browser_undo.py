"""The undo window in a real Chromium: a countdown, Undo by key, and nothing sent; or, left alone, sent once."""

import re
import time

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from holds.models import Decision
from tests.helpers.browser import applied, open_hold, send_with_keyboard

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_z_undoes_a_sent_decision_and_nothing_reaches_the_platform(reviewer_page, samples, platform_state, settings):
    # Wide enough that a loaded machine still shows the countdown before Z is pressed; the wait below runs to the
    # window's end only.
    settings.UNDO_SECONDS = 10
    page, hold = reviewer_page, samples["h_12"]
    open_hold(page, hold)

    page.keyboard.press("a")
    send_with_keyboard(page)
    expect(page.locator("time.undo-countdown")).to_have_text(re.compile(r"^([1-9]|10) s$"))
    page.keyboard.press("z")

    expect(page.locator(".state.withdrawn")).to_be_visible()
    expect(page.locator("#decide-form")).to_be_visible()
    window_end = Decision.objects.get(hold=hold).undo_until
    time.sleep(max(0.0, (window_end - timezone.now()).total_seconds()) + 1)  # the worker's task found nothing to send
    assert Decision.objects.get(hold=hold).state == "withdrawn"
    assert [r for r in platform_state.requests if r["method"] == "POST"] == []
    assert not page.problems


def test_left_alone_the_countdown_runs_out_and_the_decision_is_applied(
    reviewer_page, samples, platform_state, settings
):
    settings.UNDO_SECONDS = 3
    page, hold = reviewer_page, samples["h_12"]
    open_hold(page, hold)

    page.keyboard.press("a")
    send_with_keyboard(page)
    expect(page.get_by_role("button", name="Undo")).to_be_visible()

    assert applied(page, platform_state, hold) == [
        {"items": [{"id": "A-1001", "action": "approve"}], "decided_by": "alice@example.com"}
    ]
    expect(page.locator("#undo-button")).to_have_count(0)
    assert not page.problems
