"""A real Chromium, driven through Playwright: signing in, a hold's page, sending, and axe-core's checks."""

from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client
from playwright.sync_api import expect

# Debian's build of Chromium's headless shell (package chromium-headless-shell), which Playwright itself runs for
# headless tests: the same Blink and V8 as /usr/bin/chromium without the desktop browser around them, so a new
# context and a page load cost a fraction of what the full browser's windows and tab machinery do.
CHROMIUM = "/usr/bin/chromium-headless-shell"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def signed_in_page(browser, live_server, username: str = "alice", **options):
    """A new page of its own context on the queue, signed in as ``username``; it notes page errors and console
    errors.

    The context starts with a session cookie rather than typing a password: signing in through the login form is
    the subject of tests of its own (from an email link, beside the provider, on a touch phone), and the other
    browser tests are about what a person does once signed in.
    """
    context = browser.new_context(base_url=live_server.url, **options)
    context.add_cookies(session_cookies(get_user_model().objects.get(username=username), live_server.url))
    page = context.new_page()
    page.problems = []
    page.on("pageerror", lambda error: page.problems.append(f"page error: {error}"))
    page.on("console", lambda message: message.type == "error" and page.problems.append(message.text))
    page.goto("/")
    expect(page.get_by_role("heading", name="Open holds")).to_be_visible()
    return page


def session_cookies(user, url: str) -> list[dict]:
    """The cookies of a session signed in as ``user`` (through Django's own login), for a browser context."""
    client = Client()
    client.force_login(user)
    return [
        {"name": settings.SESSION_COOKIE_NAME, "value": client.cookies[settings.SESSION_COOKIE_NAME].value, "url": url}
    ]


def close_quietly(context):
    """Close a test's browser context before the database is emptied.

    The page's own requests must end first (the run's context loads after the page; the event stream is closed),
    and leaving must not send the beacon that ends the reviewer's presence: either would reach
    the live server while the test database is being flushed.
    """
    for page in context.pages:
        page.evaluate(
            "document.querySelectorAll('[data-leave-url]')"
            ".forEach(presence => presence.removeAttribute('data-leave-url'))"
        )
        stop_live_updates(page)
        page.wait_for_load_state("networkidle")
        page.goto("about:blank")
    context.close()


def stop_live_updates(page):
    """Close the page's event stream as leaving it does (static/live/live.js): an open stream is a request that never
    ends, so the network would never be idle."""
    page.evaluate("window.dispatchEvent(new PageTransitionEvent('pagehide'))")


# Marks the page once htmx has put the run's story in place: the hold page fetches it once loaded, and the cards
# after it move when it arrives (a click aimed at one of them, on a phone, met whatever moved under it).
RUN_IN_PLACE = (
    "document.addEventListener('htmx:afterSettle', event => {"
    " if (event.target.id === 'run') document.documentElement.dataset.runInPlace = '1' })"
)


def open_hold(page, hold):
    """Open a hold's page, ready for keys and clicks: ``goto`` returns once the page has loaded, its deferred app.js
    run, and the run's story it fetches then is in place."""
    page.add_init_script(RUN_IN_PLACE)
    page.goto(f"/holds/{hold.pk}/")
    expect(page.locator("#decide-form")).to_be_visible()
    expect(page.locator("html[data-run-in-place]")).to_have_count(1)


def send_with_keyboard(page):
    page.keyboard.press("Control+Enter")
    expect(page.get_by_role("heading", name="Check your decision")).to_be_visible()
    # The summary is a new page: its heading shows before its deferred app.js runs, and a key pressed in between
    # reaches no handler.
    page.wait_for_load_state("domcontentloaded")
    tick_the_duplicate_check(page)
    page.keyboard.press("Control+Enter")


def tick_the_duplicate_check(page):
    """On a summary asking for it (a possible duplicate, such as the sample holds' A-1001 refunds), tick that the
    other holds were checked, from the keyboard."""
    check = page.locator("#duplicates-confirmed")
    if check.count():
        check.focus()
        page.keyboard.press("Space")
        expect(check).to_be_checked()


def decision_bodies(platform_state, hold_id):
    return [
        r["body"]
        for r in platform_state.requests
        if r["method"] == "POST" and r["path"].endswith(f"/holds/{hold_id}/decision") and r["status"] == 200
    ]


# How long a page may wait for a decision's delivery to show: the Celery worker delivering it was started for the
# test, and on a machine saturated by the suite's other workers its first task can take over 15 s.
DELIVERY_WAIT_MS = 30_000


def applied(page, platform_state, hold):
    expect(page.locator(".state.applied")).to_be_visible(timeout=DELIVERY_WAIT_MS)
    return decision_bodies(platform_state, hold.hold_id)


# axe-core, installed by bin/test from tests/axe/package-lock.json
AXE = Path(__file__).resolve().parents[1] / "axe" / "node_modules" / "axe-core" / "axe.min.js"
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
# The rules among those that read colours: all a change of colour scheme can make pass or fail.
COLOUR_RULES = ["color-contrast", "link-in-text-block"]
AXE_RUN = """async (runOnly) => {
  const result = await axe.run(document, {runOnly});
  return result.violations.map(
    v => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(" | ")}`);
}"""


VIEWPORTS = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
SCHEMES = ["light", "dark"]


def accessibility_problems(page, name, axe_rules=None):
    """What is wrong with the page now shown, as readable lines: sideways scrolling, text under 12 px, axe's
    violations of the WCAG 2.1 A and AA rules, or of ``axe_rules`` alone."""
    problems = []
    widths = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    if widths[0] > widths[1]:
        wide = page.evaluate("""() => [...document.querySelectorAll('body *')]
            .filter(e => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
            .slice(0, 3)
            .map(e => e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).split(' ').join('.') : ''))""")
        problems.append(f"{name}: {widths[0]} px wide in a {widths[1]} px window ({', '.join(wide)})")
    # Django's admin keeps its own 11 px type; the size rule is for the app's pages.
    tiny = (
        []
        if "/admin/" in page.url
        else page.evaluate("""() => [...document.querySelectorAll('body *')]
        .filter(e => [...e.childNodes].some(n => n.nodeType === Node.TEXT_NODE && n.textContent.trim()))
        .filter(e => e.getBoundingClientRect().width > 1 && parseFloat(getComputedStyle(e).fontSize) < 12)
        .slice(0, 3)
        .map(e =>
          `${e.tagName.toLowerCase()} "${e.textContent.trim().slice(0, 20)}" ${getComputedStyle(e).fontSize}`)""")
    )
    if tiny:
        problems.append(f"{name}: text under 12 px: {', '.join(tiny)}")
    if not page.evaluate("typeof axe !== 'undefined'"):  # a context may add it to every page (add_init_script)
        page.add_script_tag(path=str(AXE))
    run_only = {"type": "rule", "values": axe_rules} if axe_rules else {"type": "tag", "values": WCAG_TAGS}
    problems += [f"{name}: {violation}" for violation in page.evaluate(AXE_RUN, run_only)]
    return problems


def accessibility_problems_in_light_and_dark(page, name):
    """What is wrong with the page now shown, in light and then in dark.

    Only the stylesheet reads the colour scheme, so switching it on the loaded page shows what loading the page in
    that scheme would, without loading it twice. The schemes differ in colours alone (the app's and the admin's
    stylesheets set nothing else for dark), so in dark axe runs just the rules that read colours; the checks of
    width and type size, which cost little, run in both.
    """
    light, dark = SCHEMES
    show_in_scheme(page, light)
    problems = accessibility_problems(page, f"{name}, {light}")
    show_in_scheme(page, dark)
    return problems + accessibility_problems(page, f"{name}, {dark}", axe_rules=COLOUR_RULES)


def show_in_scheme(page, scheme):
    """Switch the page to ``scheme`` and wait for colours easing into it (the admin's links do) to arrive."""
    page.emulate_media(color_scheme=scheme)
    page.wait_for_function(
        "document.getAnimations().every(animation => animation.effect.getTiming().iterations === Infinity)"
    )
