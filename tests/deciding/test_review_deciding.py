"""Reviewers deciding through Django's test client: field errors, the summary, claims and refusals."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from holds.deciding import decisions, delivery
from holds.models import Decision, Hold
from holds.queue import listing as queue
from tests.helpers.forms import fields_of
from tests.helpers.reviewing import confirm, field_name, review_form

pytestmark = pytest.mark.django_db


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
    shown["duplicates-confirmed"] = ["yes"]  # h_13's A-1001 refund is a possible duplicate: the reviewer checked
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
