"""The Hold admin: admins read the mirror, search and filter it, change nothing, and never count the whole table."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from holds.mirror import sync
from holds.models import Hold
from tests.helpers.users import make_user

CHANGELIST = reverse("admin:holds_hold_changelist")


@pytest.fixture
def admin_user_client(client, db):
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    return client


def listed(answer) -> set[str]:
    assert answer.status_code == 200
    return {hold.hold_id for hold in answer.context["cl"].result_list}


def test_the_changelist_lists_every_mirrored_hold_with_its_columns(admin_user_client, samples):
    answer = admin_user_client.get(CHANGELIST)

    assert listed(answer) == set(samples)
    page = answer.content.decode()
    for column in ("Env", "Hold id", "Agent", "Capability", "Status", "Created at", "Expires at"):
        assert f">{column}<" in page
    assert "upsonic-support" in page and "call_&lt;b&gt;9&lt;/b&gt;" not in page  # items show on the hold's page only


@pytest.mark.parametrize(
    ("term", "found"),
    [
        ("h_13", {"h_13"}),  # a hold id
        ("h_1", {"h_12", "h_13", "h_14", "h_15", "h_16", "h_17", "h_18", "h_19"}),  # its beginning
        ("r_47", {"h_18"}),  # a run id
        ("toolu_01A", {"h_13"}),  # the beginning of an item id
        ("call_1", {"h_14", "h_15", "h_19", "h_20"}),  # an item id several holds share, each listed once
        ("upsonic", set()),  # not an id: agents are a filter, not a search
        ("_1", set()),  # the middle of an id does not match
        ("h%", set()),  # LIKE's wildcards are plain characters
    ],
)
def test_search_finds_holds_by_the_beginning_of_a_hold_run_or_item_id(admin_user_client, samples, term, found):
    assert listed(admin_user_client.get(CHANGELIST, {"q": term})) == found


def test_filters_narrow_by_env_status_and_agent_and_offer_the_recorded_values(
    admin_user_client, samples, platform_state, platform_client
):
    platform_state.decide_elsewhere("default", "h_13", "bob@example.com")
    sync.sync_env(platform_client, "default")

    decided = admin_user_client.get(CHANGELIST, {"status": "decided"})
    by_agent = admin_user_client.get(CHANGELIST, {"agent": "support-agno", "env": "default"})
    elsewhere = admin_user_client.get(CHANGELIST, {"env": "staging"})

    assert listed(decided) == {"h_13"}
    assert listed(by_agent) == {"h_14", "h_16", "h_19"}
    assert listed(elsewhere) == set()
    agent_choices = {
        choice["display"] for choice in by_agent.context["cl"].filter_specs[2].choices(by_agent.context["cl"])
    }
    assert {"upsonic-support", "support-agno", "llamaindex-support", "support-openai-agents"} <= agent_choices


@pytest.mark.parametrize("query", [{}, {"q": "h_1"}, {"status": "open", "agent": "support-agno"}, {"p": "1"}])
def test_the_changelist_never_counts_the_whole_table(admin_user_client, samples, query):
    with CaptureQueriesContext(connection) as queries:
        answer = admin_user_client.get(CHANGELIST, query)

    assert answer.status_code == 200
    counts = [q["sql"] for q in queries.captured_queries if re.search(r'COUNT\(.*FROM "holds_hold"', q["sql"])]
    assert counts, "the paginator counts the holds it pages through"
    assert all(re.search(r"\bLIMIT \d+", sql) for sql in counts), counts


def test_a_hostile_search_is_refused_not_sent_to_the_database(admin_user_client, samples):
    assert admin_user_client.get(CHANGELIST, {"q": "h_1\x00"}).status_code == 400


def test_nobody_can_add_change_or_delete_a_hold(admin_user_client, samples):
    hold = samples["h_13"]
    change = reverse("admin:holds_hold_change", args=[hold.pk])

    page = admin_user_client.get(change)
    posted = admin_user_client.post(change, {"question": "Refund everything?"})

    assert page.status_code == 200
    assert "toolu_01A9xQ2mZ" in page.content.decode()  # its items, read-only inline
    assert b"<textarea" not in page.content and b'name="items-0-item_id"' not in page.content
    assert posted.status_code == 403
    assert admin_user_client.get(reverse("admin:holds_hold_add")).status_code == 403
    assert (
        admin_user_client.post(reverse("admin:holds_hold_delete", args=[hold.pk]), {"post": "yes"}).status_code == 403
    )
    assert (
        admin_user_client.post(CHANGELIST, {"action": "delete_selected", "_selected_action": [hold.pk]}).status_code
        != 302
    )
    hold.refresh_from_db()
    assert hold.question != "Refund everything?" and Hold.objects.count() == len(samples)


def test_reviewers_cannot_open_the_hold_admin(client, alice, samples):
    client.force_login(alice)

    assert client.get(CHANGELIST).status_code == 302  # to the admin's sign-in, as for every non-staff user
