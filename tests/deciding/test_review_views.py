"""Reviewers in the browser, through Django's test client: signing in, the queue and the hold page."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone

from holds.models import Hold, SyncState
from holds.queue import listing as queue
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db


# Accounts and roles


def test_every_page_needs_a_login(client, samples):
    for url in (reverse("queue"), reverse("hold", args=[samples["h_12"].pk])):
        response = client.get(url)
        assert response.status_code == 302 and response.url.startswith(reverse("login"))


def test_the_login_page_signs_a_reviewer_in(client, alice):
    page = client.get(reverse("login"))
    response = client.post(reverse("login"), {"username": "alice", "password": "pw"})

    assert b"Sign in" in page.content
    assert response.status_code == 302 and response.url == reverse("queue")


def test_a_user_without_the_reviewer_role_gets_a_clear_403(client, samples):
    client.force_login(make_user("carol"))

    response = client.get(reverse("queue"))

    assert response.status_code == 403
    assert b"Deciding holds needs the Reviewers role" in response.content


def test_a_user_without_a_role_opens_no_notification_page_and_sees_no_bell(client, audrey, samples):
    client.force_login(make_user("carol"))

    refused = [
        client.get(reverse("notifications")),
        client.get(reverse("notification-bell")),
        client.get(reverse("notification-preferences")),
        client.post(reverse("notification-preferences"), {"time_zone": "Europe/Paris"}),
        client.post(reverse("notifications-read")),
    ]
    queue = client.get(reverse("queue")).content.decode()
    client.force_login(audrey)

    assert [response.status_code for response in refused] == [403] * 5
    assert all(b"Notifications need the Reviewers or Auditors role" in response.content for response in refused)
    assert "Notifications:" not in queue
    assert client.get(reverse("notifications")).status_code == 200  # an auditor's inbox opens as before


def test_the_roles_exist_after_migrating():
    from django.contrib.auth.models import Group

    assert set(Group.objects.values_list("name", flat=True)) >= {"Reviewers", "Auditors"}


def test_createuser_gives_a_role(capsys):
    from django.core.management import call_command

    call_command("createuser", "dora", "--role", "auditor", "--password", "pw")
    call_command("createuser", "erin", "--role", "admin", "--password", "pw")

    assert list(User.objects.get(username="dora").groups.values_list("name", flat=True)) == ["Auditors"]
    assert User.objects.get(username="erin").is_superuser


# The queue


def test_the_queue_lists_soonest_expiry_first_and_never_expiring_last(alice_client, samples):
    response = alice_client.get(reverse("queue"))

    listed = [row.hold.hold_id for row in response.context["rows"]]
    expected = [
        h.hold_id
        for h in sorted(
            samples.values(), key=lambda h: (h.expires_at is None, h.expires_at or h.created_at, h.created_at)
        )
    ]
    assert listed == expected
    assert listed[-1] == "h_14"  # the Agno sample never expires


def test_a_queue_row_shows_amounts_items_and_urgency(alice_client, samples):
    response = alice_client.get(reverse("queue"))

    rows = {row.hold.hold_id: row for row in response.context["rows"]}
    assert rows["h_13"].amounts == ["49.90", "129.00"]
    assert rows["h_15"].urgency == "urgent"
    assert "Refund 49.90 on A-1001" in response.content.decode()


@pytest.mark.parametrize(
    "query, expected",
    [
        ("q=A-1002", {"h_13"}),
        ("q=toolu_01a9xq2mz", {"h_13"}),
        ("q=r_44", {"h_15"}),
        ("q=h_12", {"h_12"}),
        ("agent=support-openai-agents&capability=support", {"h_15"}),
        ("expiring=15m", {"h_15", "h_16"}),
    ],
)
def test_filters_and_search_keep_their_state_in_the_url(alice_client, samples, query, expected):
    response = alice_client.get(reverse("queue") + "?" + query)

    assert {row.hold.hold_id for row in response.context["rows"]} == expected
    value = query.split("=")[-1]
    assert (
        f'value="{value}"' in response.content.decode()
        or f"<option selected>{value}</option>" in response.content.decode()
        or f'value="{value}" selected' in response.content.decode()
    )


def test_mine_and_unclaimed_filters(alice_client, alice, bob, samples):
    alice_client.post(reverse("claim-hold", args=[samples["h_12"].pk]))

    mine = alice_client.get(reverse("queue") + "?claim=mine").context["rows"]
    unclaimed = alice_client.get(reverse("queue") + "?claim=unclaimed").context["rows"]

    assert [row.hold.hold_id for row in mine] == ["h_12"]
    assert "h_12" not in {row.hold.hold_id for row in unclaimed}


def test_keyset_pages_cover_every_hold_once(alice_client, platform_client, platform_state, monkeypatch):
    monkeypatch.setattr(queue, "PAGE_SIZE", 7)
    platform_state.generate("default", 30)
    platform_state.load_samples()
    from holds.mirror import sync

    sync.sync_env(platform_client, "default")
    seen, url = [], reverse("queue")
    while url:
        response = alice_client.get(url)
        seen += [row.hold.pk for row in response.context["rows"]]
        cursor = response.context["next_cursor"]
        url = reverse("queue") + f"?after={cursor}" if cursor else None

    assert seen == list(queue.open_holds().values_list("pk", flat=True))


def test_the_htmx_refresh_renders_only_the_body_and_counts_new_holds(
    alice_client, platform_client, platform_state, samples
):
    loaded_at = timezone.now().isoformat()
    platform_state.add_hold("default", {"question": "Fresh hold"})
    from holds.mirror import sync

    sync.sync_env(platform_client, "default")

    response = alice_client.get(
        reverse("queue"), {"loaded_at": loaded_at}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="queue-body"
    )

    body = response.content.decode()
    assert "<html" not in body
    assert "1 new hold arrived" in body


def test_an_empty_queue_says_so(alice_client):
    response = alice_client.get(reverse("queue"))

    assert b"Nothing to review" in response.content


def test_a_failing_sync_shows_the_platform_unreachable_banner(alice_client, samples, platform_client, platform_state):
    platform_state.push_faults([{"status": 503}])
    from holds.mirror import sync

    sync.sync_env(platform_client, "default")

    response = alice_client.get(reverse("queue"))

    assert b"Platform unreachable since" in response.content


def test_a_sync_older_than_three_intervals_is_flagged(alice_client, samples, settings):
    SyncState.objects.update(last_success_at=timezone.now() - timedelta(seconds=4 * settings.SYNC_INTERVAL_SECONDS))

    response = alice_client.get(reverse("queue"))

    assert b"Last successful sync" in response.content


# The hold page


def test_the_hold_page_shows_the_agents_text_as_text(alice_client, samples):
    response = alice_client.get(reverse("hold", args=[samples["h_16"].pk]))

    html = response.content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html and 'href="javascript:' not in html
    assert "<svg onload" not in html


def test_a_claim_without_javascript_lasts_claim_minutes_and_others_see_who_decides(client, alice, bob, samples):
    hold = samples["h_12"]
    client.force_login(alice)
    client.post(reverse("claim-hold", args=[hold.pk]))
    client.force_login(bob)

    response = client.get(reverse("hold", args=[hold.pk]))

    hold.refresh_from_db()
    assert hold.claimed_by == alice and hold.claim_expires_at > timezone.now() + timedelta(minutes=9)
    assert b"is deciding this hold since" in response.content and b"Take over" in response.content
    assert b'id="decide-form"' not in response.content


def test_taking_over_moves_the_claim(client, alice, bob, samples):
    hold = samples["h_12"]
    client.force_login(alice)
    client.post(reverse("claim-hold", args=[hold.pk]))
    client.force_login(bob)

    client.post(reverse("take-over", args=[hold.pk]))

    hold.refresh_from_db()
    assert hold.claimed_by == bob
    assert b'id="decide-form"' in client.get(reverse("hold", args=[hold.pk])).content


def test_a_timed_out_claim_is_free_again(client, alice, bob, samples):
    hold = samples["h_12"]
    client.force_login(alice)
    client.post(reverse("claim-hold", args=[hold.pk]))
    Hold.objects.filter(pk=hold.pk).update(claim_expires_at=timezone.now() - timedelta(seconds=1))
    client.force_login(bob)

    client.post(reverse("claim-hold", args=[hold.pk]))

    hold.refresh_from_db()
    assert hold.claimed_by == bob


def test_an_approve_reject_only_hold_offers_no_edit(alice_client, samples):
    response = alice_client.get(reverse("hold", args=[samples["h_15"].pk]))

    html = response.content.decode()
    assert 'name="item-0-field-' not in html
    assert "can't be edited" in html


def test_files_are_served_as_attachments_and_only_images_inline(alice_client, samples):
    image = samples["h_14"]
    html_file = samples["h_16"]

    download = alice_client.get(reverse("hold-file", args=[image.pk, image.files[0]["id"]]))
    preview = alice_client.get(reverse("hold-file", args=[image.pk, image.files[0]["id"]]) + "?inline=1")
    hostile = alice_client.get(reverse("hold-file", args=[html_file.pk, html_file.files[0]["id"]]) + "?inline=1")

    assert download["Content-Disposition"].startswith("attachment;") and download["X-Content-Type-Options"] == "nosniff"
    assert (
        preview["Content-Disposition"].startswith("inline;")
        and preview["Content-Type"] == image.files[0]["content_type"]
    )
    assert (
        hostile["Content-Disposition"].startswith("attachment;")
        and hostile["Content-Type"] == "application/octet-stream"
    )
    assert b"".join(hostile.streaming_content).startswith(b"<!doctype html>")
    assert "test-api-key" not in str(download.headers)


def test_the_run_context_still_shows_when_the_platform_is_down(alice_client, samples, platform_state):
    hold = samples["h_12"]
    alice_client.get(reverse("run-context", args=[hold.pk]))
    Hold.objects.filter(pk=hold.pk).update(run_fetched_at=timezone.now() - timedelta(hours=1))
    platform_state.push_faults([{"status": 503}])

    response = alice_client.get(reverse("run-context", args=[hold.pk]))

    assert b"Could not refresh the run" in response.content
    assert b"desk lamp from order A-1001" in response.content


def test_a_run_with_a_nul_in_its_input_still_shows(alice_client, samples, platform_state):
    hold = samples["h_12"]
    platform_state._runs["default"][hold.run_id]["input"] = {"message": "refund\x00 please"}

    response = alice_client.get(reverse("run-context", args=[hold.pk]))

    assert response.status_code == 200 and "refund\ufffd please" in response.content.decode()
