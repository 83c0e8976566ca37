"""The README's pictures, made afresh: the queue at a desk (1366 px) and on a phone (390 × 844), and a hold's page.

``bin/screenshots`` runs this module through pytest, so the pictures show the site the browser tests drive: the live
server on the suite's database, the simulator's sample holds mirrored, a reviewer signed in. Its name does not start
with ``test_``, so the suite never collects it: the pictures change only when someone asks for them.
"""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from holds import lifecycle
from tests.helpers import browser as chromium
from tests.helpers.browser import VIEWPORTS
from tests.helpers.processes import ROOT

IMAGES = ROOT / "docs" / "images"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_readme_pictures_show_the_sample_queue_at_a_desk_on_a_phone_and_a_hold(
    browser, live_server, samples, alice, bob
):
    assert lifecycle.claim(samples["h_17"], bob), "a queue in use: bob is deciding one hold"
    IMAGES.mkdir(parents=True, exist_ok=True)

    made = [
        _picture(browser, live_server, "queue-desktop.png", VIEWPORTS["desktop"], "/"),
        _picture(browser, live_server, "queue-phone.png", VIEWPORTS["phone"], "/", has_touch=True, is_mobile=True),
        _picture(browser, live_server, "hold-desktop.png", VIEWPORTS["desktop"], f"/holds/{samples['h_13'].pk}/"),
    ]

    assert all(path.stat().st_size > 0 for path in made), made


def _picture(browser, live_server, name: str, viewport: dict, url: str, **options) -> Path:
    """The first screen of ``url`` as alice sees it, in the light scheme, written to docs/images/``name``."""
    page = chromium.signed_in_page(
        browser, live_server, viewport=viewport, color_scheme="light", device_scale_factor=1, **options
    )
    page.goto(url)
    expect(page.locator("time.countdown").first).not_to_be_empty()  # app.js has written the times in words
    page.mouse.move(0, 0)  # no row lit by a hover
    path = IMAGES / name
    page.screenshot(path=path, animations="disabled", caret="hide")
    assert not page.problems, page.problems
    chromium.close_quietly(page.context)
    return path
