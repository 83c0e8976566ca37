"""Every page a person can reach, with real data, fits a desktop and a phone, in light and in dark.

One Chromium walks the whole site for each viewport and checks every page in light and then in dark: nothing
scrolls sideways, and axe-core finds no WCAG 2.0/2.1 A or AA violation. On a touch phone the targets are big
enough for a thumb and the keyboard help is not offered.
"""

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.utils import timezone
from playwright.sync_api import expect

from audit.models import AuditEvent
from holds import lifecycle
from holds.deciding import delivery, review
from holds.handover import assignments, notes
from holds.models import Decision, Hold
from notifications import notify
from tests.helpers import browser as chromium
from tests.helpers.browser import DELIVERY_WAIT_MS, VIEWPORTS, accessibility_problems_in_light_and_dark
from tests.helpers.reviewing import confirm, field_name
from tests.helpers.users import make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

THUMB = 44  # px: the smallest comfortable touch target (WCAG 2.5.5)


@pytest.fixture
def site(browser, live_server, samples, alice, bob, audrey, platform_client, immediate_delivery):
    """The sample holds, three decided (approved, rejected, edited) and delivered, one claimed by bob and assigned
    to him with a note, one assigned to a group, with notifications and audit events; plus the session cookies of
    alice, bob, audrey and an admin.

    The decisions go through the hold page's form and are delivered to the simulator here: deciding in a browser
    is the other browser tests' subject, and this one is about how the pages look afterwards.
    """
    admin = make_user("admin", is_staff=True, is_superuser=True)
    reviewer = Client()
    reviewer.force_login(alice)
    confirm(reviewer, samples["h_12"])
    confirm(reviewer, samples["h_15"], **_rejected(samples["h_15"], "It was used for three months."))
    confirm(reviewer, samples["h_14"], **{field_name(samples["h_14"], 0, "amount"): "20.00"})
    for decision in Decision.objects.all():
        assert delivery.deliver(decision.pk, platform_client) is None, "every decision reaches the platform"

    claimed = Hold.objects.filter(status=Hold.Status.OPEN).exclude(pk=samples["h_13"].pk).first()
    assert lifecycle.claim(claimed, bob)
    # Hand-offs for the hold pages and the statistics' tables: an assignment to a person, one to a group, a note.
    assignments.assign(claimed, bob, "Can you check the order history?", by=alice)
    assignments.assign(samples["h_13"], Group.objects.create(name="Finance leads"), "", by=alice)
    notes.add_note(claimed, alice, "@bob the address looks wrong")
    expiring = list(Hold.objects.filter(status=Hold.Status.OPEN, expires_at__isnull=False))
    assert notify.expiring_soon(expiring, timezone.now()), "the inbox needs rows"

    users = {"alice": alice, "bob": bob, "audrey": audrey, "admin": admin}
    cookies = {name: chromium.session_cookies(user, live_server.url) for name, user in users.items()}
    return {"samples": samples, "cookies": cookies, "claimed": claimed, "url": live_server.url}


def _rejected(hold, comment):
    """The decide form's fields that reject every item of ``hold`` with ``comment``."""
    return {
        field: value
        for item in review.blank(hold)
        for field, value in ((f"{item.prefix}-action", "reject"), (f"{item.prefix}-comment", comment))
    }


def _sign_in(context, username):
    page = context.new_page()
    page.goto("/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill("pw")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(lambda url: "/login/" not in url)
    cookies = context.cookies()
    page.close()
    context.clear_cookies()
    return cookies


def _summary(page, hold):
    """The check-your-decision page of an undecided hold (reached, not sent)."""
    chromium.open_hold(page, hold)
    page.keyboard.press("a")
    page.keyboard.press("Control+Enter")
    expect(page.get_by_role("heading", name="Check your decision")).to_be_visible()


def _bulk_summary(page):
    page.goto("/")
    page.locator("tr.hold-row input[name=hold]").nth(0).check()
    page.locator("tr.hold-row input[name=hold]").nth(1).check()
    page.get_by_role("button", name="Approve selected").click()
    expect(page.get_by_role("heading", name="Check your decisions")).to_be_visible()


def _locked_out(page):
    """A sign-in refused for too many failures: the fifth wrong password for one username pauses it."""
    paused = page.get_by_role("heading", name="Sign-in paused")
    for _ in range(6):
        page.goto("/login/")
        page.get_by_label("Username").fill("mallory")
        page.get_by_label("Password").fill("wrong")
        page.get_by_role("button", name="Sign in").click()
        if paused.is_visible():
            return
    expect(paused).to_be_visible()


def _pages(site, viewport):
    """(name, who is signed in, URL or a function that gets the page there) for every page a person can reach."""
    samples = site["samples"]
    decided = samples["h_14"].latest_decision()
    event = AuditEvent.objects.filter(decision=decided).first()
    holds = [(f"hold {hold_id}", "alice", f"/holds/{hold.pk}/") for hold_id, hold in sorted(samples.items())]
    return [
        ("login", None, "/login/"),
        ("queue", "alice", "/"),
        ("queue with filters", "alice", "/?q=refund&min_amount=1&max_amount=500&sort=amount&claim=unclaimed"),
        ("queue, nothing matches", "alice", "/?q=no-such-thing"),
        *holds,
        ("summary", "alice", lambda page: _summary(page, samples["h_13"])),
        ("decision status", "alice", f"/holds/{samples['h_14'].pk}/"),
        ("take over", "alice", f"/holds/{site['claimed'].pk}/take-over"),
        ("bulk summary", "alice", _bulk_summary),
        ("inbox", "alice", "/notifications/"),
        ("preferences", "alice", "/notifications/preferences"),
        ("403", "alice", "/audit/"),
        ("audit list", "audrey", "/audit/"),
        ("audit event", "audrey", f"/audit/events/{event.sequence}/"),
        ("audit decision", "audrey", f"/audit/decisions/{decided.pk}/"),
        ("timeline", "audrey", f"/audit/holds/{samples['h_14'].pk}/"),
        ("statistics", "audrey", "/audit/stats/"),
        ("queue, for an admin (the fullest top bar)", "admin", "/"),
        ("locked out", None, _locked_out),
        *(
            [("admin index", "admin", "/admin/"), ("a changelist", "admin", "/admin/holds/hold/")]
            if viewport == "desktop"
            else []
        ),
    ]


@pytest.mark.long
@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_every_page_fits_the_screen_and_passes_axe_in_light_and_dark(browser, site, viewport):
    # The app's CSP refuses inline scripts, axe's injected tag among them. Every page of the walk is checked, so
    # the context adds axe to each page as it opens rather than sending it again for each check.
    context = browser.new_context(base_url=site["url"], viewport=VIEWPORTS[viewport], bypass_csp=True)
    context.add_init_script(path=str(chromium.AXE))
    page = context.new_page()
    problems = []
    signed_in = "nobody"
    for name, who, where in _pages(site, viewport):
        if who != signed_in:
            context.clear_cookies()
            if who:
                context.add_cookies(site["cookies"][who])
            signed_in = who
        if callable(where):
            where(page)
        else:
            page.goto(where)
        problems += accessibility_problems_in_light_and_dark(page, f"{name} at {viewport}")
    chromium.close_quietly(context)

    assert not problems, "\n".join(problems)


def test_on_a_touch_phone_targets_fit_a_thumb_and_no_keyboard_help_is_offered(browser, live_server, samples, alice):
    context = browser.new_context(base_url=live_server.url, viewport=VIEWPORTS["phone"], has_touch=True, is_mobile=True)
    context.add_cookies(_sign_in(context, "alice"))
    page = context.new_page()
    page.goto("/")

    expect(page.get_by_role("button", name="Shortcuts")).to_be_hidden()
    small = _smaller_than_a_thumb(page, ".topbar a, .topbar button, tr.hold-row, tr.hold-row a, tr.hold-row input")
    chromium.open_hold(page, samples["h_13"])
    small += _smaller_than_a_thumb(page, "#decide-form label.choice, #decide-form button, .topbar a, .topbar button")
    chromium.close_quietly(context)

    assert not small, small


def _smaller_than_a_thumb(page, selector):
    """The visible targets matching ``selector`` whose box (or, for a checkbox, its label or cell) is under 44 px."""
    targets = page.evaluate(
        """(selector) => [...document.querySelectorAll(selector)]
        .filter(e => e.offsetParent !== null)
        .map(e => {
          const target = e.matches('input') ? (e.closest('label, td') || e) : e;
          const box = target.getBoundingClientRect();
          return {what: (e.textContent.trim() || e.getAttribute('aria-label') || e.tagName).slice(0, 40),
                  width: Math.round(box.width), height: Math.round(box.height)};
        })""",
        selector,
    )
    assert targets, f"nothing matches {selector}"
    return [target for target in targets if target["width"] < THUMB or target["height"] < THUMB]


def test_the_keyboard_reaches_the_queue_at_once_and_focus_is_never_lost(reviewer_page, samples):
    page = reviewer_page

    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to queue")).to_be_focused()
    page.keyboard.press("Enter")
    first_row = page.locator("tr.hold-row").first
    expect(first_row).to_be_focused()

    page.keyboard.press("?")
    expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()
    page.keyboard.press("Escape")
    expect(first_row).to_be_focused()

    chromium.open_hold(page, samples["h_12"])
    page.locator("#decide-form input[type=radio][value=reject]").first.focus()
    page.keyboard.press("a")
    expect(page.locator("#decide-form input[type=radio][value=approve]").first).to_be_checked()
    chromium.send_with_keyboard(page)
    expect(page.locator("#decision-status")).to_be_focused()
    expect(page.locator(".state.applied")).to_be_visible(timeout=DELIVERY_WAIT_MS)
    expect(page.locator("#decision-status")).to_be_focused()
    assert not page.problems
