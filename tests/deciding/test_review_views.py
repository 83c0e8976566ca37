"""Reviewers in the browser, through Django's test client: the queue, the hold page, decisions."""

from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone

from holds.deciding import deciders, decisions, delivery
from holds.models import Decision, Hold, SyncState
from holds.queue import listing as queue
from tests.helpers.forms import fields_of
from tests.helpers.reviewing import confirm, field_name, review_form, send, summary_of
from tests.helpers.users import make_user
from tests.helpers.waiting import wait_until

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


# Deciding


def test_a_broken_rule_is_shown_next_to_the_field_and_nothing_is_stored(alice_client, samples):
    hold = samples["h_12"]

    response = confirm(alice_client, hold, **{field_name(hold, 0, "amount"): "60.00"})

    assert response.status_code == 422
    assert "must not be more than the 49.90 the agent asked for" in response.content.decode()
    assert not Decision.objects.exists()


def test_a_malformed_value_is_an_error_not_a_500(alice_client, samples):
    response = confirm(alice_client, samples["h_12"], **{field_name(samples["h_12"], 0, "amount"): "twenty"})

    assert response.status_code == 422
    assert not Decision.objects.exists()


def test_no_action_chosen_asks_for_one(alice_client, samples):
    form = review_form(samples["h_12"], confirm="yes")
    del form["item-0-action"]

    response = alice_client.post(reverse("hold-review", args=[samples["h_12"].pk]), form)

    assert b"Choose approve or reject." in response.content
    assert not Decision.objects.exists()


def test_the_summary_shows_each_change_before_anything_is_sent(alice_client, samples):
    hold = samples["h_14"]

    response = alice_client.post(
        reverse("hold-review", args=[hold.pk]), review_form(hold, **{field_name(hold, 0, "amount"): "20"})
    )

    html = response.content.decode()
    assert "Check your decision" in html and "Approve with edits" in html
    assert "49.90" in html and "20.00" in html
    assert not Decision.objects.exists()


def test_a_confirmed_edit_is_stored_with_its_full_data(alice_client, alice, samples):
    hold = samples["h_14"]

    response = confirm(
        alice_client, hold, **{field_name(hold, 0, "amount"): "20.00", "item-0-comment": "partial refund"}
    )

    decision = Decision.objects.get(hold=hold)
    item = decision.items.get()
    assert response.status_code == 302
    assert (item.action, item.data, item.original_data["amount"], item.comment) == (
        "edit",
        {"order_id": "A-1001", "amount": "20.00"},
        "49.90",
        "partial refund",
    )
    assert decision.reviewer == alice and decision.state == "sending"


def test_edits_to_a_hold_that_forbids_them_are_ignored(alice_client, samples):
    hold = samples["h_15"]

    confirm(alice_client, hold, **{"item-0-field-0": "1.00", "item-0-field-1": "1.00"})

    assert Decision.objects.get(hold=hold).items.get().action == "approve"


def test_a_second_decision_is_refused_with_who_decided_first(client, alice, bob, samples):
    hold = samples["h_12"]
    client.force_login(alice)
    confirm(client, hold)
    client.force_login(bob)

    response = confirm(client, hold)

    assert Decision.objects.filter(hold=hold).count() == 1
    assert "Already decided by Alice Adams at" in response.content.decode()


def test_deciding_a_hold_someone_else_reviews_is_refused(client, alice, bob, samples):
    hold = samples["h_12"]
    client.force_login(alice)
    client.post(reverse("claim-hold", args=[hold.pk]))
    client.force_login(bob)

    response = confirm(client, hold)

    assert "Alice Adams is reviewing this hold; take it over first." in response.content.decode()
    assert not Decision.objects.exists()


def test_a_decision_ends_the_claim(alice_client, alice, samples):
    hold = samples["h_12"]
    alice_client.post(reverse("claim-hold", args=[hold.pk]))

    confirm(alice_client, hold)

    hold.refresh_from_db()
    assert hold.claimed_by is None


def test_a_decision_after_expiry_is_refused_and_not_stored(alice_client, samples):
    hold = samples["h_12"]
    Hold.objects.filter(pk=hold.pk).update(expires_at=timezone.now() - timedelta(minutes=1))

    response = confirm(alice_client, hold)

    assert "; the agent was told nobody decided." in response.content.decode()
    assert not Decision.objects.exists()


def test_the_decision_status_partial_polls_while_sending(alice_client, samples, immediate_delivery):
    hold = samples["h_12"]
    confirm(alice_client, hold)

    sending = alice_client.get(reverse("decision-status", args=[hold.pk]), HTTP_HX_REQUEST="true").content.decode()
    Decision.objects.filter(hold=hold).update(state="applied", finished_at=timezone.now())
    applied = alice_client.get(reverse("decision-status", args=[hold.pk]), HTTP_HX_REQUEST="true").content.decode()

    assert "Sending to the platform" in sending and "hx-trigger" in sending
    assert "Applied by the platform" in applied and "hx-trigger" not in applied


def test_the_decide_form_works_without_javascript(alice_client, samples):
    hold = samples["h_13"]
    form = review_form(hold, **{"item-1-action": "reject", "item-1-comment": "changed mind is not covered"})

    summary = alice_client.post(reverse("hold-review", args=[hold.pk]), form)
    shown = fields_of(summary.content.decode(), "confirm-form")
    sent = alice_client.post(reverse("hold-review", args=[hold.pk]), {**shown, "confirm": "yes"})

    assert summary.status_code == 200 and sent.status_code == 302
    assert [i.action for i in Decision.objects.get(hold=hold).items.all()] == ["approve", "reject"]
    assert decisions.Decision.objects.count() == 1


def test_a_decision_made_while_redis_is_down_is_stored_and_waits(
    alice_client, samples, caplog, django_capture_on_commit_callbacks
):
    from reviewqueue.celery import app

    def publish_to(url):
        # The URL tasks are sent to; None: broker_url's again. (Setting broker_url itself is ignored by Celery 5.6,
        # which reads the namespaced CELERY_BROKER_URL of the settings first.)
        app.conf.broker_write_url = url
        app._pool = app.amqp._producer_pool = None  # drop pooled connections to the old URL

    hold = samples["h_12"]
    publish_to("redis://127.0.0.1:9/0")  # nothing listens on the discard port
    try:
        with django_capture_on_commit_callbacks(execute=True):
            response = confirm(alice_client, hold)
    finally:
        publish_to(None)

    decision = Decision.objects.get(hold=hold)
    assert response.status_code == 302
    assert decision.state == "sending"
    assert f"could not queue delivery of decision {decision.pk}" in caplog.text
    assert delivery.due_for_requeue(timezone.now() + timedelta(minutes=2)) == [decision.pk]


def test_a_decision_in_flight_leaves_the_queue_at_once(alice_client, samples):
    confirm(alice_client, samples["h_12"])

    listed = {row.hold.hold_id for row in alice_client.get(reverse("queue")).context["rows"]}

    assert "h_12" not in listed and "h_13" in listed


def test_a_refused_decision_lets_the_hold_be_decided_again(alice_client, alice, samples):
    hold = samples["h_12"]
    confirm(alice_client, hold)
    Decision.objects.filter(hold=hold).update(state="not_applied", outcome="invalid", outcome_message="unknown item id")

    page = alice_client.get(reverse("hold", args=[hold.pk])).content.decode()
    confirm(alice_client, hold)

    assert "unknown item id" in page and 'id="decide-form"' in page
    assert list(Decision.objects.filter(hold=hold).values_list("state", flat=True).order_by("pk")) == [
        "not_applied",
        "sending",
    ]


def test_next_hold_opens_the_first_hold_nobody_else_decides(client, alice, bob, samples):
    first = queue.open_holds().first()
    client.force_login(bob)
    client.post(reverse("claim-hold", args=[first.pk]))
    client.force_login(alice)

    response = client.get(reverse("next-hold"))

    second = queue.open_holds().exclude(pk=first.pk).first()
    assert response.url == reverse("hold", args=[second.pk])


@pytest.mark.parametrize("loaded_at, status", [("2026-11-29T10:00:00", 200), ("", 200), ("yesterday", 400)])
def test_a_naive_refresh_time_is_read_as_utc_and_a_mangled_one_is_a_400(alice_client, samples, loaded_at, status):
    response = alice_client.get(reverse("queue"), {"loaded_at": loaded_at})

    assert response.status_code == status


def test_a_mangled_cursor_is_a_plain_400(alice_client, samples):
    response = alice_client.get(reverse("queue"), {"after": "not-a-cursor"})

    assert response.status_code == 400 and b"after" in response.content


def test_nul_characters_in_filters_and_comments_are_a_400_and_nothing_is_decided(alice_client, samples):
    hold = samples["h_12"]

    queue_page = alice_client.get(reverse("queue"), {"q": "\x00", "agent": "a\x00"})
    decided = confirm(alice_client, hold, **{"item-0-comment": "ok\x00", field_name(hold, 0, "order_id"): "A-1\x00"})

    assert queue_page.status_code == 400 and decided.status_code == 400
    assert not Decision.objects.filter(hold=hold).exists()


def test_the_new_count_covers_every_page(alice_client, platform_client, platform_state, monkeypatch):
    from holds.mirror import sync

    monkeypatch.setattr(queue, "PAGE_SIZE", 2)
    loaded_at = timezone.now().isoformat()
    platform_state.generate("default", 5)
    sync.sync_env(platform_client, "default")

    response = alice_client.get(reverse("queue"), {"loaded_at": loaded_at})

    assert response.context["new_count"] == 5


def test_a_hold_past_its_expiry_leaves_the_queue_before_the_sweep(alice_client, samples):
    Hold.objects.filter(pk=samples["h_12"].pk).update(expires_at=timezone.now() - timedelta(seconds=1))

    listed = {row.hold.hold_id for row in alice_client.get(reverse("queue")).context["rows"]}

    assert "h_12" not in listed and Hold.objects.get(pk=samples["h_12"].pk).status == "open"


def test_taking_over_asks_for_confirmation_without_javascript(client, alice, bob, samples):
    hold = samples["h_12"]
    client.force_login(alice)
    client.post(reverse("claim-hold", args=[hold.pk]))
    client.force_login(bob)

    asked = client.get(reverse("take-over", args=[hold.pk]))

    hold.refresh_from_db()
    assert b"Take this hold over?" in asked.content and hold.claimed_by.username == "alice"


def test_a_file_id_with_a_slash_still_links_and_downloads(alice_client, platform_client, platform_state):
    from holds.mirror import sync

    platform_state.add_hold(
        "default",
        {
            "hold_id": "h_900",
            "files": [
                {"id": "dir/f 1", "name": "a.png", "content_type": "image/png", "content_base64": "iVBORw0KGgo="}
            ],
        },
    )
    sync.sync_env(platform_client, "default")
    hold = Hold.objects.get(hold_id="h_900")

    page = alice_client.get(reverse("hold", args=[hold.pk]))
    download = alice_client.get(reverse("hold-file", args=[hold.pk, "dir/f 1"]))

    assert page.status_code == 200 and download.status_code == 200
    assert b"".join(download.streaming_content) == b"\x89PNG\r\n\x1a\n"


def test_an_auditor_lands_on_the_audit_and_reviewers_see_the_audit_link_only_with_the_role(
    client, alice, audrey, samples
):
    client.force_login(audrey)

    landing = client.get(reverse("queue"))

    assert landing.status_code == 302 and landing.url == reverse("audit:list")
    client.force_login(alice)
    assert b'href="/audit/"' not in client.get(reverse("queue")).content


# What the reviewer saw is what is sent


def posted_hold_ids(platform_state) -> list[str]:
    return [r["path"].split("/holds/")[1].split("/")[0] for r in platform_state.requests if r["method"] == "POST"]


@pytest.mark.django_db(transaction=True)
def test_a_confirm_forged_without_the_summary_shows_the_summary_and_sends_nothing(
    celery_processes, immediate_delivery, alice_client, samples, platform_state
):
    celery_processes("worker")
    forged_hold, honest_hold = samples["h_12"], samples["h_17"]

    forged = alice_client.post(
        reverse("hold-review", args=[forged_hold.pk]), {"item-0-action": "approve", "confirm": "yes"}
    )
    confirm(alice_client, honest_hold)
    wait_until(lambda: Decision.objects.filter(hold=honest_hold, state="applied").exists())

    html = forged.content.decode()
    assert forged.status_code == 409
    assert (
        "Check your decision" in html and "Nothing was sent: the decision did not match a summary shown to you." in html
    )
    assert not Decision.objects.filter(hold=forged_hold).exists()
    assert posted_hold_ids(platform_state) == ["h_17"]


@pytest.mark.parametrize(
    "key, value, stored",
    [
        ("item-0-action", "reject", ("reject", "")),
        ("amount", "20.00", ("edit", "")),
        ("item-0-comment", "approved by the manager", ("approve", "approved by the manager")),
    ],
)
def test_a_digest_shown_for_other_choices_does_not_send_the_changed_ones(alice_client, samples, key, value, stored):
    hold = samples["h_12"]
    shown = summary_of(alice_client, hold, review_form(hold))
    name = field_name(hold, 0, key) if key == "amount" else key

    refused = send(alice_client, hold, {**shown, name: value})

    assert refused.status_code == 409 and "Nothing was sent" in refused.content.decode()
    assert not Decision.objects.exists()
    send(alice_client, hold, fields_of(refused.content.decode(), "confirm-form"))  # checked on the new summary
    item = Decision.objects.get(hold=hold).items.get()
    assert (item.action, item.comment) == stored


def test_a_summary_older_than_claim_minutes_sends_nothing_and_is_shown_again(alice_client, samples, settings):
    hold = samples["h_12"]
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        shown = summary_of(alice_client, hold, review_form(hold))
        traveller.shift(timedelta(minutes=settings.CLAIM_MINUTES, seconds=1))

        expired = send(alice_client, hold, shown)
        nothing_stored = not Decision.objects.exists()
        fresh = send(alice_client, hold, fields_of(expired.content.decode(), "confirm-form"))

    assert expired.status_code == 409 and nothing_stored
    assert "Nothing was sent: this summary is more than 10 minutes old." in expired.content.decode()
    assert fresh.status_code == 302 and Decision.objects.filter(hold=hold).count() == 1


def test_a_digest_shown_for_one_hold_does_not_decide_its_twin(alice_client, platform_client, platform_state):
    from holds.mirror import sync

    item = {"id": "A-1", "title": "A-1 · 10.00", "data": {"order_id": "A-1", "amount": "10.00"}}
    for hold_id in ("h_a", "h_b"):
        platform_state.add_hold("default", {"hold_id": hold_id, "items": [item]})
    sync.sync_env(platform_client, "default")
    first, twin = Hold.objects.get(hold_id="h_a"), Hold.objects.get(hold_id="h_b")
    shown_for_first = summary_of(alice_client, first, review_form(first))
    shown_for_twin = summary_of(alice_client, twin, review_form(twin))

    response = send(alice_client, twin, shown_for_first)

    assert {**shown_for_first, "digest": None, "csrfmiddlewaretoken": None} == {
        **shown_for_twin,
        "digest": None,
        "csrfmiddlewaretoken": None,
    }  # the same choices: only the hold differs
    assert response.status_code == 409
    assert not Decision.objects.exists()


def test_a_digest_shown_to_one_reviewer_does_not_let_another_send(client, alice, bob, samples):
    hold = samples["h_12"]
    client.force_login(alice)
    shown_to_alice = summary_of(client, hold, review_form(hold))
    client.force_login(bob)

    response = send(client, hold, shown_to_alice)

    assert response.status_code == 409
    assert not Decision.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_two_reviewers_racing_to_decide_an_unclaimed_hold_make_one_decision(alice, bob, samples):
    import threading

    from django.db import connection
    from django.test import Client

    for hold in (samples["h_12"], samples["h_13"], samples["h_17"]):
        ready = []
        for reviewer in (alice, bob):
            reviewer_client = Client()
            reviewer_client.force_login(reviewer)
            ready.append((reviewer.username, reviewer_client, summary_of(reviewer_client, hold, review_form(hold))))
        start, answers = threading.Barrier(len(ready)), {}

        def decide(username, reviewer_client, shown, hold=hold, start=start, answers=answers):
            start.wait()
            try:
                answers[username] = send(reviewer_client, hold, shown)
            finally:
                connection.close()

        racers = [threading.Thread(target=decide, args=racer) for racer in ready]
        for racer in racers:
            racer.start()
        for racer in racers:
            racer.join()

        decision = Decision.objects.get(hold=hold)
        loser = "bob" if decision.reviewer == alice else "alice"
        assert sorted(answer.status_code for answer in answers.values()) == [302, 409]
        assert f"Already decided by {deciders.reviewer_name(decision.reviewer)} at" in answers[loser].content.decode()


def test_a_reviewer_whose_claim_was_taken_over_cannot_decide(client, alice, bob, samples):
    hold = samples["h_12"]
    client.force_login(alice)
    client.post(reverse("claim-hold", args=[hold.pk]))
    shown_to_alice = summary_of(client, hold, review_form(hold))
    client.force_login(bob)
    client.post(reverse("take-over", args=[hold.pk]))
    client.force_login(alice)

    response = send(client, hold, shown_to_alice)

    assert response.status_code == 409
    assert "Bob Brown is reviewing this hold; take it over first." in response.content.decode()
    assert not Decision.objects.exists()
    assert Hold.objects.get(pk=hold.pk).claimed_by == bob


def test_a_claim_that_timed_out_is_taken_by_the_reviewer_who_decides(client, alice, bob, samples):
    hold = samples["h_12"]
    client.force_login(bob)
    client.post(reverse("claim-hold", args=[hold.pk]))
    Hold.objects.filter(pk=hold.pk).update(claim_expires_at=timezone.now() - timedelta(seconds=1))
    client.force_login(alice)

    response = confirm(client, hold)

    hold.refresh_from_db()
    assert response.status_code == 302
    assert Decision.objects.get(hold=hold).reviewer == alice
    assert hold.claimed_by is None
