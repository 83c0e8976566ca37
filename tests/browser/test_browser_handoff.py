"""Handing a hold to a colleague in a real Chromium, on a phone (390 px) and a desktop (1366 px), checked by axe.

Alice assigns a hold to Bob with a note from its page, adds a note mentioning him (with markup in it, which
stays text), and assigns two holds from the queue's selection; Bob finds them under "Assigned to me" and `n`.
"""

import pytest
from playwright.sync_api import expect

from holds.models import Assignment, Note
from tests.helpers import browser as chromium
from tests.helpers.browser import VIEWPORTS, accessibility_problems

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HOSTILE = '<img src=x onerror="alert(1)"> **not bold**'


def signed_in(browser, live_server, username, viewport):
    page = chromium.signed_in_page(browser, live_server, username, viewport=VIEWPORTS[viewport], bypass_csp=True)
    page.on("dialog", lambda dialog: (page.problems.append(f"dialog: {dialog.message}"), dialog.dismiss()))
    return page


@pytest.mark.parametrize("viewport", ["phone", "desktop"])
@pytest.mark.timeout(300)
def test_alice_hands_holds_to_bob_with_notes_and_he_finds_them_first(
    browser, live_server, samples, alice, bob, viewport
):
    page = signed_in(browser, live_server, "alice", viewport)
    hold, second, third = samples["h_13"], samples["h_14"], samples["h_15"]
    problems = []

    chromium.open_hold(page, hold)
    page.get_by_role("link", name="Assign…").click()
    expect(page.get_by_role("heading", name="Assign this hold")).to_be_visible()
    problems += accessibility_problems(page, f"assign page at {viewport}")
    page.get_by_label("Assign to").select_option(label="bob")
    page.get_by_label("Note").fill("Can you check the order history?")
    page.get_by_role("button", name="Assign", exact=True).click()

    expect(page.locator("#assignment")).to_contain_text("Assigned to bob (note: Can you check the order history?)")
    page.get_by_label("Add a note").fill(f"@bob {HOSTILE}")
    page.get_by_role("button", name="Add note").click()
    expect(page.locator(".note-thread li")).to_have_count(1)
    expect(page.locator(".note-thread li .untrusted")).to_have_text(f"@bob {HOSTILE}")
    expect(page.locator(".note-thread img")).to_have_count(0)
    problems += accessibility_problems(page, f"hold page with an assignment and a note at {viewport}")

    page.goto("/")
    expect(page.locator(f"#row-{hold.pk} .badge.assigned")).to_have_text("assigned to bob")
    for other in (second, third):
        page.locator(f"#row-{other.pk} input[name=hold]").check()
    page.get_by_role("button", name="Assign selected…").click()
    expect(page.get_by_role("heading", name="Assign 2 holds")).to_be_visible()
    problems += accessibility_problems(page, f"bulk assign page at {viewport}")
    page.get_by_label("Assign to").select_option(label="bob")
    page.get_by_role("button", name="Assign", exact=True).click()
    expect(page.get_by_text("Assigned 2 holds to bob.")).to_be_visible()
    problems += accessibility_problems(page, f"queue with assigned holds at {viewport}")
    assert not page.problems, page.problems
    chromium.close_quietly(page.context)

    bob_page = signed_in(browser, live_server, "bob", viewport)
    if viewport == "phone":  # there the filters fold behind their summary
        bob_page.locator("details[data-fold-filters] summary").click()
    bob_page.get_by_label("Assigned").select_option(label="to me")
    bob_page.get_by_role("button", name="Filter").click()
    expect(bob_page.locator("tr.hold-row")).to_have_count(3)
    bob_page.goto("/holds/next")
    assert int(bob_page.url.rstrip("/").rsplit("/", 1)[1]) in {hold.pk, second.pk, third.pk}
    assert not bob_page.problems, bob_page.problems
    chromium.close_quietly(bob_page.context)

    assert Assignment.objects.filter(user=bob, ended_at__isnull=True).count() == 3
    assert Note.objects.get().text == f"@bob {HOSTILE}"
    assert not problems, "\n".join(problems)
