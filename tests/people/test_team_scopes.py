"""Team scopes: a reviewer in a scoped group sees, searches, opens, hears of and decides only their team's holds.

Two teams share the platform: Billing's agent ``billing-bot`` and Support's ``support-bot``.
Carol reviews for Billing only; Alice is in no scoped group and sees both, as before scopes.
"""

import base64
import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from holds.deciding import decisions
from holds.deciding.decisions import ItemChoice
from holds.mirror import sync
from holds.models import Decision, Hold, HoldViewer
from notifications import notify, subscriptions
from notifications.models import Notification, WebhookChannel
from reviewqueue import roles
from teams import scopes
from teams.scopes import viewer_of
from tests.helpers.browser import close_quietly, signed_in_page
from tests.helpers.urls import named_urls
from tests.helpers.users import add_hold, make_user, scoped_group

pytestmark = pytest.mark.django_db

PIXEL = base64.b64encode(b"\x89PNG\r\n\x1a\n").decode()


@pytest.fixture
def billing(platform_state, platform_client):
    return add_hold(platform_state, platform_client, "billing-bot", capability="refund")


@pytest.fixture
def support(platform_state, platform_client):
    files = [{"id": "f_1", "name": "receipt.png", "content_type": "image/png", "content_base64": PIXEL}]
    return add_hold(platform_state, platform_client, "support-bot", capability="reply", files=files)


@pytest.fixture
def carol(db):
    carol = make_user("carol", roles.REVIEWERS, first_name="Carol", last_name="Chen")
    carol.groups.add(scoped_group("Billing", agent="billing-*"))
    return carol


@pytest.fixture
def carol_client(carol):
    client = Client()  # apart from ``client``, which ``alice_client`` signs in
    client.force_login(carol)
    return client


def listed(client, query: str = "") -> set[str]:
    """The agents of the holds the queue lists."""
    rows = client.get(reverse("queue") + query).context["rows"]
    return set(Hold.objects.filter(pk__in=[row.hold.pk for row in rows]).values_list("agent", flat=True))


def offered(client, name: str) -> list[str]:
    page = client.get(reverse("queue")).content.decode()
    select = re.search(rf'<select name="{name}">(.*?)</select>', page, re.S).group(1)
    return [value for value in re.findall(r"<option[^>]*>([^<]*)</option>", select) if value != "any"]


# The queue


def test_a_scoped_reviewer_sees_only_their_teams_holds_in_the_queue_search_and_filters(
    carol_client, alice_client, billing, support
):
    assert listed(carol_client) == {"billing-bot"}
    assert listed(carol_client, "?q=support-bot") == set()
    assert listed(carol_client, "?agent=support-bot") == set()
    assert offered(carol_client, "agent") == ["billing-bot"]
    assert offered(carol_client, "capability") == ["refund"]  # "reply" is only Support's, though capabilities are open
    assert listed(alice_client) == {"billing-bot", "support-bot"}
    assert offered(alice_client, "agent") == ["billing-bot", "support-bot"]
    assert offered(alice_client, "capability") == ["refund", "reply"]


def test_the_filters_offer_no_env_or_capability_that_only_another_teams_holds_have(
    settings, client, carol_client, platform_state, platform_client, billing, support
):
    settings.AGENTOS_ENVS = ["default", "staging"]
    platform_state.add_hold("staging", {"agent": "support-bot", "capability": "escalate"})
    sync.sync_env(platform_client, "staging")
    narrow = make_user("erin", roles.REVIEWERS)
    narrow.groups.add(scoped_group("Billing refunds in staging", env="stag*", capability="refund"))
    client.force_login(narrow)

    assert offered(carol_client, "env") == ["default"]
    assert offered(carol_client, "capability") == ["refund"]
    assert [offered(client, name) for name in ("env", "agent", "capability")] == [[], [], []]


def test_the_new_holds_count_counts_only_the_holds_in_scope(carol_client, alice_client, billing, support):
    since = (timezone.now() - timedelta(minutes=5)).isoformat()

    assert carol_client.get(reverse("queue"), {"loaded_at": since}).context["new_count"] == 1
    assert alice_client.get(reverse("queue"), {"loaded_at": since}).context["new_count"] == 2


def test_next_skips_the_holds_of_other_teams(carol_client, support, billing):
    Hold.objects.filter(pk=support.pk).update(expires_at=billing.expires_at - timedelta(minutes=30))  # first in queue

    response = carol_client.get(reverse("next-hold"))

    assert response.url == reverse("hold", args=[billing.pk])


# Every page and action of one hold


def per_hold_urls() -> list[tuple[str, str]]:
    """Every named URL taking a hold's ``pk``, from every app but the audit's (for auditors, unscoped), the admin and
    the API (which reads no session: tests/api checks its scopes with tokens)."""
    return [
        (name, "/" + path % {"pk": "{pk}", "file_id": "f_1"})
        for name, path, params in named_urls()
        if "pk" in params and not name.startswith(("admin:", "audit:", "api-v1:"))
    ]


def test_the_matrix_covers_the_hold_page_and_every_action_on_it():
    names = {name for name, _ in per_hold_urls()}
    assert names >= {
        "hold",
        "hold-review",
        "decision-status",
        "decision-undo",
        "take-over",
        "release",
        "claim-hold",
        "hold-heartbeat",
        "leave-hold",
        "run-context",
        "hold-file",
    }


@pytest.mark.parametrize("name, url", per_hold_urls())
def test_another_teams_hold_answers_exactly_as_a_hold_that_does_not_exist(
    carol_client, alice_client, bob, support, settings, name, url
):
    settings.UNDO_SECONDS = 60  # Bob's decision stays undoable: every action on the hold has something to act on
    decided = decisions.submit(support, bob, [ItemChoice(item.item_id, "approve") for item in support.items.all()])
    unknown = Hold.objects.order_by("-pk").values_list("pk", flat=True).first() + 1000
    form = {"decision": str(decided.pk), "summary": "yes", "confirm": "yes"}

    for method in ("get", "post"):
        outside = getattr(carol_client, method)(url.format(pk=support.pk), form)
        nowhere = getattr(carol_client, method)(url.format(pk=unknown), form)
        assert outside.status_code == nowhere.status_code, (method, url)
        assert outside.status_code in (404, 405), (method, url)  # 405: a POST-only action, whatever the id
        assert b"support-bot" not in b"".join(outside.streaming_content if outside.streaming else [outside.content])

    assert alice_client.post(url.format(pk=support.pk), form).status_code != 404, url  # in no scoped group
    assert not HoldViewer.objects.filter(hold=support, user__username="carol").exists()
    assert not Hold.objects.filter(pk=support.pk, claimed_by__username="carol").exists()
    assert not Decision.objects.filter(hold=support, reviewer__username="carol").exists()


def test_a_hold_in_scope_opens_as_before(carol_client, billing):
    page = carol_client.get(reverse("hold", args=[billing.pk]))

    assert page.status_code == 200 and "Refund for billing-bot?" in page.content.decode()


def test_a_forged_bulk_decision_naming_another_teams_hold_treats_it_as_unknown(carol_client, billing, support):
    chosen = {"hold": [str(billing.pk), str(support.pk)], "action": "approve", "comment": ""}

    summary = carol_client.post(reverse("bulk-review"), chosen)
    digest = re.search(r'name="digest" value="([^"]+)"', summary.content.decode()).group(1)
    forged = carol_client.post(reverse("bulk-review"), {**chosen, "digest": digest, "confirm": "yes"})

    assert summary.context["plan"].unknown == [support.pk]
    assert f'Hold #{support.pk}: <span class="left-out-reason">no such hold.</span>' in summary.content.decode()
    assert "support-bot" not in summary.content.decode()
    assert forged.status_code == 409
    assert not Decision.objects.exists()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_in_the_browser_a_scoped_reviewer_works_through_their_teams_holds_only(
    browser, live_server, carol, support, billing
):
    page = signed_in_page(browser, live_server, "carol")
    try:
        expect(page.locator("tr.hold-row")).to_have_count(1)
        expect(page.locator("tr.hold-row")).to_contain_text("Refund for billing-bot?")

        outside = page.goto(f"/holds/{support.pk}/")
        assert outside.status == 404
        expect(page.get_by_text("Refund for support-bot?")).to_have_count(0)
        page.goto("/holds/next")
        expect(page.locator("#decide-form")).to_be_visible()
        expect(page).to_have_url(re.compile(rf"/holds/{billing.pk}/$"))
    finally:
        close_quietly(page.context)


# Who sees what


def test_a_user_in_two_scoped_groups_sees_both_teams(client, carol, billing, support):
    carol.groups.add(scoped_group("Support", agent="support-*"))
    client.force_login(carol)

    assert listed(client) == {"billing-bot", "support-bot"}


def test_a_scope_that_limits_nothing_and_a_superuser_see_every_hold(client, billing, support):
    root = make_user("root", roles.REVIEWERS, is_superuser=True)
    root.groups.add(scoped_group("Support", agent="support-*"))
    open_minded = make_user("dan", roles.REVIEWERS)
    open_minded.groups.add(scoped_group("Everyone"), scoped_group("Support only", agent="support-*"))

    for user in (root, open_minded):
        client.force_login(user)
        assert listed(client) == {"billing-bot", "support-bot"}


def test_every_field_of_a_scope_must_match(client, billing, support):
    narrow = make_user("erin", roles.REVIEWERS)
    narrow.groups.add(scoped_group("Billing replies", env="def*", agent="*-bot", capability="reply"))
    client.force_login(narrow)

    assert listed(client) == {"support-bot"}
    assert scopes.may_see(viewer_of(narrow), support) and not scopes.may_see(viewer_of(narrow), billing)


def test_a_reviewers_roles_and_scopes_are_read_in_one_query_a_request(carol_client, billing, support):
    with CaptureQueriesContext(connection) as queries:
        page = carol_client.get(reverse("hold", args=[billing.pk]))

    assert page.status_code == 200
    reading = [
        query["sql"]
        for query in queries.captured_queries
        if ("auth_group" in query["sql"] or "teams_teamscope" in query["sql"])
        and "approvals_approvalpolicy" not in query["sql"]  # the policies name their groups: read once a process
        and "page_assignment" not in query["sql"]  # the hold, read with the group it may be assigned to
    ]
    assert len(reading) == 1 and "teams_teamscope" in reading[0]


def test_a_viewer_is_read_afresh_and_nothing_is_kept_on_the_user(billing, support):
    erin = make_user("erin", roles.REVIEWERS)
    assert scopes.may_see(viewer_of(erin), billing)

    erin.groups.add(scoped_group("Support", agent="support-*"))  # the same User object, in a new group

    viewer = viewer_of(erin)
    assert not scopes.may_see(viewer, billing) and scopes.may_see(viewer, support)
    assert viewer.group_names == {roles.REVIEWERS, "Support"}
    assert [name for name in vars(erin) if name.startswith(("_group", "_team"))] == []


# Notifications


def test_a_reminder_reaches_only_the_reviewers_who_may_see_its_hold(carol, alice, billing, support):
    WebhookChannel.objects.create(name="ops", url="http://127.0.0.1:1/", secret="s" * 32, events=["expiring_soon"])

    notify.expiring_soon([billing, support], timezone.now())

    carols = Notification.objects.filter(user=carol)
    assert set(carols.values_list("hold__agent", "channel")) == {("billing-bot", "in_app"), ("billing-bot", "email")}
    assert Notification.objects.filter(user=alice, hold=support, channel="email").exists()
    assert Notification.objects.filter(webhook__isnull=False, hold=support).exists()  # the admin's integration


def test_the_bell_and_inbox_leave_out_a_hold_that_left_the_scope_after_the_message(client, carol, billing, support):
    carol.groups.add(scoped_group("Support", agent="support-*"))
    notify.expiring_soon([billing, support], timezone.now())
    Group.objects.get(name="Support").user_set.remove(carol)
    client.force_login(carol)

    bell = client.get(reverse("notification-bell")).content.decode()
    inbox = client.get(reverse("notifications")).content.decode()

    assert "Notifications: 1 unread" in bell
    assert "Refund for billing-bot?" in inbox and "Refund for support-bot?" not in inbox


def test_the_new_holds_digest_lists_each_reviewer_only_the_holds_in_scope(carol, alice, billing, support):
    for user in (carol, alice):
        subscriptions.save_preferences(viewer_of(user), {"new_holds": ["in_app", "email"]})
    WebhookChannel.objects.create(name="ops", url="http://127.0.0.1:1/", secret="s" * 32, events=["new_holds"])

    notify.new_holds_digest([billing, support], timezone.now())

    def digest_of(**recipient):
        found = Notification.objects.filter(event="new_holds", **recipient)
        assert found.exists()
        return {(n.channel, n.title, tuple(h["pk"] for h in n.holds)) for n in found}

    assert digest_of(user=carol) == {
        (channel, "1 new hold to review", (billing.pk,)) for channel in ("in_app", "email")
    }
    assert "support-bot" not in "".join(Notification.objects.filter(user=carol).values_list("body", flat=True))
    assert {holds for _, _, holds in digest_of(user=alice)} == {(billing.pk, support.pk)}
    assert {holds for _, _, holds in digest_of(webhook__isnull=False)} == {(billing.pk, support.pk)}


def test_a_reviewer_whose_scope_matches_no_digested_hold_gets_no_digest(carol, alice, support):
    subscriptions.save_preferences(viewer_of(carol), {"new_holds": ["in_app"]})
    subscriptions.save_preferences(viewer_of(alice), {"new_holds": ["in_app"]})

    notify.new_holds_digest([support], timezone.now())

    assert not Notification.objects.filter(user=carol).exists()
    assert Notification.objects.filter(user=alice, event="new_holds").exists()
