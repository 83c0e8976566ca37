"""Two reviewers in real Chromium: looking at a hold locks nothing; starting to decide claims it until the page
closes."""

import pytest
from playwright.sync_api import expect

from holds.deciding import presence
from holds.models import Hold
from tests.helpers import browser as chromium
from tests.helpers.waiting import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def sign_in(browser, live_server, samples):
    """Open a signed-in page for a reviewer; every page it opened is closed at the end."""
    contexts = []

    def open_page(username):
        page = chromium.signed_in_page(browser, live_server, username)
        contexts.append(page.context)
        return page

    yield open_page
    for context in contexts:
        chromium.close_quietly(context)


@pytest.mark.long
def test_bob_decides_every_hold_alice_only_looked_at_and_n_walks_him_through_them(
    sign_in, alice, bob, samples, platform_state, celery_processes, immediate_delivery, monkeypatch
):
    monkeypatch.setattr(presence, "HEARTBEAT_SECONDS", 2)  # her page learns of the end by its heartbeat
    celery_processes("worker", UNDO_SECONDS="0")
    alice_page, bob_page = sign_in("alice"), sign_in("bob")
    for hold in samples.values():  # she stays on the last one
        alice_page.goto(f"/holds/{hold.pk}/")
        expect(alice_page.get_by_role("button", name="I'll take this")).to_be_visible()
    still_open = hold

    bob_page.reload()
    expect(bob_page.locator("tr.hold-row")).to_have_count(len(samples))
    assert "Alice Adams" not in bob_page.locator("table.queue tbody").inner_text()  # nobody is deciding anything
    decided = []
    with bob_page.expect_navigation():
        bob_page.keyboard.press("n")
    while bob_page.locator("#decide-form").count():
        pk = int(bob_page.url.rstrip("/").split("/")[-1])
        decided.append(pk)
        if pk == still_open.pk:
            expect(bob_page.locator("#presence")).to_contain_text("Alice Adams is looking at this.")
        bob_page.keyboard.press("a")
        chromium.send_with_keyboard(bob_page)
        expect(bob_page.locator(".state.applied")).to_be_visible(timeout=chromium.DELIVERY_WAIT_MS)
        # The page the decision lands on may show it applied before its deferred app.js runs: "n" waits for that.
        bob_page.wait_for_load_state("domcontentloaded")
        with bob_page.expect_navigation():
            bob_page.keyboard.press("n")

    expect(bob_page.get_by_text("Nothing to review: the queue is empty.")).to_be_visible()
    assert sorted(decided) == sorted(hold.pk for hold in samples.values())
    posted = [r for r in platform_state.requests if r["method"] == "POST" and r["status"] == 200]
    assert sorted(r["path"].split("/")[-2] for r in posted) == sorted(samples)
    assert all(r["body"]["decided_by"] == "bob@example.com" for r in posted)
    expect(alice_page.locator("#presence")).to_contain_text("can no longer be decided here")
    assert not alice_page.problems and not bob_page.problems


def test_a_key_press_claims_the_hold_and_leaving_the_page_frees_it(sign_in, alice, bob, samples):
    hold = samples["h_12"]
    alice_page, bob_page = sign_in("alice"), sign_in("bob")
    chromium.open_hold(alice_page, hold)
    chromium.open_hold(bob_page, hold)
    expect(bob_page.locator("#presence")).to_contain_text("Alice Adams is looking at this.")

    alice_page.keyboard.press("a")
    expect(alice_page.locator("#presence")).to_contain_text("You are deciding this hold")
    bob_page.reload()
    expect(bob_page.locator("#presence")).to_contain_text("Alice Adams is deciding this hold")
    expect(bob_page.locator("#decide-form")).to_have_count(0)
    expect(bob_page.get_by_role("link", name="Take over…")).to_be_visible()

    alice_page.goto("/")  # pagehide: the beacon releases her claim at once
    wait_until(lambda: Hold.objects.get(pk=hold.pk).claimed_by_id is None, timeout=10)
    bob_page.reload()
    expect(bob_page.locator("#decide-form")).to_be_visible()
    expect(bob_page.locator("#presence")).not_to_contain_text("Alice Adams")
    assert not alice_page.problems and not bob_page.problems
