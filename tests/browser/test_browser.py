"""What a reviewer does, in a real Chromium: every decision reaches the platform with the right body."""

import re
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from holds.mirror import sync
from holds.models import Decision, Hold
from tests.helpers.browser import DELIVERY_WAIT_MS, applied, decision_bodies, open_hold, send_with_keyboard

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_reviewer_moves_through_the_queue_with_the_keyboard(browsing_page, samples):
    page = browsing_page
    first_row = page.locator("tr.hold-row").first
    first_id = first_row.get_attribute("id")

    page.keyboard.press("j")
    expect(first_row).to_be_focused()
    page.keyboard.press("j")
    page.keyboard.press("k")
    page.keyboard.press("Enter")

    pk = int(first_id.removeprefix("row-"))
    expect(page).to_have_url(f"{page.url.split('/holds/')[0].rstrip('/')}/holds/{pk}/")
    expect(page.locator("#decide-form")).to_be_visible()


def test_approve_the_llamaindex_hold_by_keyboard(reviewer_page, samples, platform_state):
    page, hold = reviewer_page, samples["h_12"]
    open_hold(page, hold)

    page.keyboard.press("a")
    send_with_keyboard(page)

    assert applied(page, platform_state, hold) == [
        {"items": [{"id": "A-1001", "action": "approve"}], "decided_by": "alice@example.com"}
    ]
    assert not page.problems


def test_edit_the_agno_holds_amount_to_20(reviewer_page, samples, platform_state):
    page, hold = reviewer_page, samples["h_14"]
    open_hold(page, hold)

    page.get_by_label("amount").fill("20.00")
    page.get_by_role("radio", name="Approve").check()
    page.get_by_role("button", name="Review decision").click()
    expect(page.locator("td.before")).to_have_text("49.90")
    expect(page.locator("td.after")).to_have_text("20.00")
    page.get_by_label("I checked").check()  # an A-1001 refund, a possible duplicate: she checked
    page.get_by_role("button", name="Send decision").click()

    assert applied(page, platform_state, hold) == [
        {
            "items": [{"id": "call_1", "action": "edit", "data": {"order_id": "A-1001", "amount": "20.00"}}],
            "decided_by": "alice@example.com",
        }
    ]


def test_reject_the_openai_agents_hold_with_a_comment_and_no_way_to_edit(reviewer_page, samples, platform_state):
    page, hold = reviewer_page, samples["h_15"]
    open_hold(page, hold)
    assert (
        page.locator("#decide-form input[name^='item-0-field'], #decide-form textarea[name^='item-0-field']").count()
        == 0
    )

    page.keyboard.press("r")
    expect(page.get_by_label("Comment")).to_be_focused()
    page.keyboard.type("It was used for three months.")
    send_with_keyboard(page)

    assert applied(page, platform_state, hold) == [
        {
            "items": [{"id": "call_1", "action": "reject", "comment": "It was used for three months."}],
            "decided_by": "alice@example.com",
        }
    ]


def test_decide_a_multi_item_hold_with_mixed_actions(reviewer_page, samples, platform_state):
    page, hold = reviewer_page, samples["h_13"]
    open_hold(page, hold)
    first, second = page.locator("fieldset.item").nth(0), page.locator("fieldset.item").nth(1)

    first.get_by_label("amount").fill("40.00")
    first.get_by_role("radio", name="Approve").check()
    second.get_by_role("radio", name="Reject").check()
    second.get_by_label("Comment").fill("A change of mind is not refundable.")
    page.get_by_role("button", name="Review decision").click()
    expect(page.locator(".summary-item .action")).to_have_text(["Approve with edits", "Reject"])
    page.get_by_label("I checked").check()  # an A-1001 refund, a possible duplicate: she checked
    page.get_by_role("button", name="Send decision").click()

    assert applied(page, platform_state, hold) == [
        {
            "items": [
                {
                    "id": "toolu_01A9xQ2mZ",
                    "action": "edit",
                    "data": {"order_id": "A-1001", "amount": "40.00", "reason": "damaged"},
                },
                {"id": "toolu_01B7kR4pW", "action": "reject", "comment": "A change of mind is not refundable."},
            ],
            "decided_by": "alice@example.com",
        }
    ]


def test_a_hold_decided_elsewhere_meanwhile_shows_who_decided(reviewer_page, samples, platform_state):
    page, hold = reviewer_page, samples["h_17"]
    open_hold(page, hold)
    platform_state.decide_elsewhere("default", hold.hold_id, "bob@example.com")

    page.keyboard.press("a")
    send_with_keyboard(page)

    # Either the decision is stored and its delivery finds the hold decided ("Decided by …" in its state), or the
    # send's fresh read of the hold finds it first and refuses (409, "This hold was decided by …"): which comes first
    # is the machine's timing; both tell the reviewer who decided, and neither reaches the platform.
    who = page.get_by_text(re.compile(r"decided by bob@example\.com", re.IGNORECASE)).first
    expect(who).to_be_visible(timeout=DELIVERY_WAIT_MS)
    assert decision_bodies(platform_state, hold.hold_id) == []
    assert Hold.objects.get(pk=hold.pk).decided_by == "bob@example.com"


def test_hostile_text_shows_as_text_and_runs_no_script(browsing_page, samples, platform_state):
    page, hold = browsing_page, samples["h_16"]

    open_hold(page, hold)
    page.wait_for_timeout(500)

    expect(page.locator("h1")).to_have_text("Refund <script>alert(1)</script> on order A-1003?")
    expect(page.get_by_text("<img src=x onerror=alert(2)>", exact=False)).to_be_visible()
    expect(page.locator("legend")).to_contain_text('<a href="javascript:alert(4)">refund</a>')
    assert page.locator("a[href^='javascript:']").count() == 0
    assert page.problems == []
    assert not Decision.objects.exists()


def test_a_second_tab_cannot_decide_again(reviewer_page, samples, platform_state):
    first, hold = reviewer_page, samples["h_12"]
    second = first.context.new_page()
    for tab in (first, second):
        open_hold(tab, hold)
        tab.keyboard.press("a")
        tab.keyboard.press("Control+Enter")
        expect(tab.get_by_role("heading", name="Check your decision")).to_be_visible()

    for tab in (first, second):  # h_12 is an A-1001 refund, a possible duplicate: she checked
        tab.get_by_label("I checked").check()
    first.get_by_role("button", name="Send decision").click()
    applied(first, platform_state, hold)
    second.get_by_role("button", name="Send decision").click()

    expect(second.get_by_role("alert")).to_contain_text("Already decided by Alice Adams at")
    assert Decision.objects.filter(hold=hold).count() == 1
    assert len(decision_bodies(platform_state, hold.hold_id)) == 1


def test_the_queue_refreshes_in_place_and_keeps_the_focused_row(browsing_page, platform_client, platform_state):
    page = browsing_page
    page.keyboard.press("j")
    page.keyboard.press("j")
    focused = page.evaluate("document.activeElement.id")
    platform_state.add_hold("default", {"question": "A fresh refund request", "expires_at": None})
    sync.sync_env(platform_client, "default")

    expect(page.get_by_text("1 new hold arrived since you opened the queue.")).to_be_visible(timeout=10000)

    expect(page.get_by_text("A fresh refund request")).to_be_visible()
    assert page.evaluate("document.activeElement.id") == focused


def test_question_mark_opens_the_shortcut_help(browsing_page):
    browsing_page.keyboard.press("?")

    expect(browsing_page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()


def test_a_reviewer_clears_the_whole_sample_queue_by_keyboard(reviewer_page, samples, platform_state):
    page = reviewer_page
    decided = []

    def next_hold():
        with page.expect_navigation():
            page.keyboard.press("n")

    next_hold()
    while page.locator("#decide-form").count():
        decided.append(page.locator("[data-hold-page] code").first.inner_text())
        page.keyboard.press("a")
        send_with_keyboard(page)
        expect(page.locator(".state.applied")).to_be_visible(timeout=DELIVERY_WAIT_MS)
        next_hold()

    expect(page.get_by_text("Nothing to review: the queue is empty.")).to_be_visible()
    assert sorted(decided) == sorted(samples)
    posted = [r for r in platform_state.requests if r["method"] == "POST" and r["status"] == 200]
    assert sorted(r["path"].split("/")[-2] for r in posted) == sorted(samples)


def test_a_reviewer_sorts_by_amount_and_narrows_the_range_from_the_keyboard(browsing_page, samples):
    page = browsing_page
    page.get_by_label(re.compile(r"^Sort")).select_option("amount")
    page.get_by_label("Min amount").fill("20")
    page.get_by_label("Max amount").fill("240")
    page.get_by_label("Max amount").press("Enter")

    expect(page).to_have_url(re.compile(r"min_amount=20&max_amount=240&sort=amount"))
    in_range = Hold.objects.filter(amount__gte=20, amount__lte=240).order_by("-amount", "created_at", "pk")
    expect(page.locator("tr.hold-row")).to_have_count(len(in_range))
    assert page.locator("tr.hold-row").evaluate_all("rows => rows.map(row => row.id)") == [
        f"row-{h.pk}" for h in in_range
    ]
    assert "240.00" in page.locator("tr.hold-row td.amount").first.inner_text()
    expect(page.get_by_label(re.compile(r"^Sort"))).to_have_value("amount")


def test_choosing_a_time_zone_changes_the_times_the_reviewer_sees(browsing_page, samples):
    page = browsing_page
    hold = samples["h_12"]
    asked = page.locator("dt:text-is('Asked') + dd")
    page.goto(f"/holds/{hold.pk}/")
    expect(asked).to_contain_text(f"{hold.created_at.astimezone(ZoneInfo('UTC')):%Y-%m-%d %H:%M:%S} UTC")

    page.goto("/notifications/preferences")
    page.get_by_label("Show times in").select_option("Asia/Tokyo")
    page.get_by_role("button", name="Save time zone").click()
    expect(page.get_by_text("Your time zone is saved")).to_be_visible()
    page.goto(f"/holds/{hold.pk}/")

    expect(page.locator("body")).to_have_attribute("data-time-zone", "Asia/Tokyo")
    expect(asked).to_contain_text(f"{hold.created_at.astimezone(ZoneInfo('Asia/Tokyo')):%Y-%m-%d %H:%M:%S} JST")
    relative = asked.locator("time[data-relative]")
    expect(relative).to_have_text(
        re.compile(r"^\d+ (minutes|hours) ago$")
    )  # app.js's words (Django's use no-break spaces)
    expect(relative).to_have_attribute("title", re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \S+ \(Asia/Tokyo\)$"))
    tokyo_hour = f"{hold.created_at.astimezone(ZoneInfo('Asia/Tokyo')):%H:%M}"
    assert tokyo_hour in relative.get_attribute("title")  # app.js wrote it in the chosen zone
    assert page.problems == []


def test_the_queue_counts_down_each_holds_time_and_turns_it_urgent_as_it_runs_short(
    browsing_page, platform_client, platform_state
):
    page = browsing_page
    now = timezone.now()
    nearly_urgent = platform_state.add_hold(
        "default", {"question": "Nearly urgent", "expires_at": now + timedelta(minutes=15, seconds=8)}
    )
    later = platform_state.add_hold(
        "default", {"question": "Later", "expires_at": now + timedelta(days=2, hours=3, minutes=30)}
    )
    sync.sync_env(platform_client, "default")
    page.goto("/")
    row = page.locator(f"#row-{Hold.objects.get(hold_id=nearly_urgent['hold_id']).pk}")

    expect(row).to_have_class(re.compile(r"\bsoon\b"))
    # app.js's words, not the server's; 8 s ahead of the line (the platform keeps whole seconds), as a busy machine
    # may take a few to sync and load the page
    expect(row.locator("time.countdown")).to_have_text(re.compile(r"^15m 0[0-8]s$"))

    expect(row).to_have_class(re.compile(r"\burgent\b"), timeout=12_000)  # the browser's clock crossed the line
    expect(row).not_to_have_class(re.compile(r"\bsoon\b"))
    expect(row.locator("time.countdown")).to_have_text(re.compile(r"^14m 5\ds$"))
    far = page.locator(f"#row-{Hold.objects.get(hold_id=later['hold_id']).pk}")
    expect(far.locator("time.countdown")).to_have_text("2d 3h")
    expect(far).not_to_have_class(re.compile(r"\b(soon|urgent)\b"))
    assert page.problems == []
