"""An approval chain in a real Chromium: the hold page draws the chain as steps, each with who approved, the queue
row names the stage waiting, the page passes axe, and the platform gets one POST after the fourth approval."""

import re

import pytest
from playwright.sync_api import expect

from holds.deciding import decisions
from tests.helpers import approvals_setup
from tests.helpers.browser import accessibility_problems, applied, close_quietly, signed_in_page
from tests.helpers.chains import desk
from tests.helpers.duplicates import every_duplicate

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_chains_steps_show_who_approved_and_the_last_approver_sends_one_decision(
    browser, live_server, refund, platform_state, celery_processes, immediate_delivery
):
    celery_processes("worker")
    chain = desk()
    sams = signed_in_page(browser, live_server, "sam", bypass_csp=True)  # axe is injected

    sams.goto(f"/holds/{refund.pk}/")
    sams.get_by_role("radio", name="Approve").check()
    sams.get_by_role("button", name="Review decision").click()
    sams.get_by_role("button", name="Send decision").click()
    sams.goto(f"/holds/{refund.pk}/")
    steps = sams.locator(".chain-step")
    expect(steps).to_have_count(3)
    expect(steps.nth(0)).to_contain_text("Stage 1 · Support leads · 1 of 1 · done")
    expect(steps.nth(0).locator(".chain-approvers")).to_have_text(re.compile(r"^\s*sam, (now|\d+ seconds? ago)\s*$"))
    expect(steps.nth(1)).to_contain_text("Stage 2 · Finance · 0 of 2 · waiting")
    expect(steps.nth(2)).to_contain_text("Stage 3 · Legal (alongside stage 2) · 0 of 1 · waiting")
    problems = accessibility_problems(sams, "hold page with a chain")
    for person in (chain.fay, chain.lee):
        decisions.submit(
            refund, person, [decisions.ItemChoice("call_1", "approve")], duplicates_checked=every_duplicate(refund)
        )
    close_quietly(sams.context)
    fins = signed_in_page(browser, live_server, "fin")
    expect(fins.locator(f"#row-{refund.pk}")).to_contain_text("Stage 2 of 3 · Finance · 1 of 2")
    fins.goto(f"/holds/{refund.pk}/")
    fins.get_by_role("button", name="Approve as it is").click()

    assert problems == []
    assert applied(fins, platform_state, refund)[0]["decided_by"] == (
        "sam@example.com, fay@example.com, lee@example.com, fin@example.com"
    )
    assert len(approvals_setup.decision_posts(platform_state)) == 1
    assert not fins.problems
    close_quietly(fins.context)
