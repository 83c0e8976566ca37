"""Bulk decisions: a reviewer ticks holds in the queue, checks one summary, and each hold becomes its own decision."""

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from audit.models import AuditEvent, EventKind
from holds import lifecycle
from holds.deciding import decisions
from holds.deciding.decisions import ItemChoice
from holds.mirror import sync
from holds.models import Decision, Hold
from tests.helpers.bulk import BULK, confirm, selected
from tests.helpers.forms import fields_of
from tests.helpers.waiting import wait_until


def add_refunds(platform_state, platform_client, count, **overrides):
    """``count`` one-item refund holds on the platform, mirrored; answers them in queue order."""
    hold_ids = [
        platform_state.add_hold(
            "default",
            {
                "question": f"Refund 5.{n:02d} on order B-{n}?",
                "items": [
                    {
                        "id": f"call_{n}",
                        "title": f"Refund B-{n}",
                        "data": {"order_id": f"B-{n}", "amount": f"5.{n:02d}"},
                    }
                ],
                **overrides,
            },
        )["hold_id"]
        for n in range(count)
    ]
    sync.sync_env(platform_client, "default")
    return [Hold.objects.get(hold_id=hold_id) for hold_id in hold_ids]


def decision_posts(platform_state):
    return [r for r in platform_state.requests if r["method"] == "POST" and r["path"].endswith("/decision")]


@pytest.mark.django_db(transaction=True)
def test_twenty_holds_approved_in_one_go_reach_the_platform_as_twenty_decisions(
    alice_client, alice, platform_client, platform_state, celery_processes, settings
):
    settings.UNDO_SECONDS = 0  # this test is about delivery; the undo window has its own tests
    celery_processes("worker", UNDO_SECONDS="0")
    holds = add_refunds(platform_state, platform_client, 20)
    queue_page = alice_client.get("/").content.decode()
    assert all(f'name="hold" value="{hold.pk}"' in queue_page for hold in holds)

    summary = alice_client.post(BULK, selected(holds, "approve", "Small refunds: policy 4.2"))

    assert summary.status_code == 200
    page = summary.content.decode()
    assert "Approve</strong> every item of 20 holds" in page and "Send 20 decisions" in page
    assert all(f"Refund B-{n}" in page for n in range(20))
    result = confirm(alice_client, summary)
    assert result.status_code == 200 and "20 decisions sent" in result.content.decode()

    wait_until(lambda: Decision.objects.filter(state="applied").count() == 20, timeout=60)
    posts = decision_posts(platform_state)
    assert len(posts) == 20
    assert {post["path"].split("/")[-2]: post["body"] for post in posts} == {
        hold.hold_id: {
            "items": [{"id": f"call_{n}", "action": "approve", "comment": "Small refunds: policy 4.2"}],
            "decided_by": "alice@example.com",
        }
        for n, hold in enumerate(holds)
    }
    keys = {post["headers"].get("idempotency-key") for post in posts}
    assert keys == {str(key) for key in Decision.objects.values_list("idempotency_key", flat=True)} and len(keys) == 20
    assert AuditEvent.objects.filter(kind=EventKind.DECISION_SUBMITTED, actor=alice).count() == 20
    assert Hold.objects.filter(status="decided", decided_by="alice@example.com").count() == 20


@pytest.mark.django_db
def test_the_summary_leaves_out_by_name_every_hold_that_cannot_be_approved(
    alice_client, bob, platform_client, platform_state
):
    fine, reject_only, expired, decided, claimed = add_refunds(platform_state, platform_client, 5)
    Hold.objects.filter(pk=reject_only.pk).update(actions=["reject"])
    Hold.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    decisions.submit(decided, bob, [ItemChoice("call_3", "reject")])
    lifecycle.claim(claimed, bob)

    summary = alice_client.post(BULK, selected([fine, reject_only, expired, decided, claimed], "approve"))

    page = summary.content.decode()
    included, left_out = page.split('id="confirm-form"')[0].split("<h2>Left out</h2>")
    assert "Refund 5.00 on order B-0?" in included and "Refunds 5.00 on order B-0" in included
    assert "Send 1 decision<" in page
    for hold in (reject_only, expired, decided, claimed):
        assert hold.question not in included and hold.question in left_out
    assert "This hold does not allow approve." in left_out
    assert "This hold expired at" in left_out
    assert "Already decided by Bob Brown at" in left_out
    assert "Bob Brown is reviewing this hold" in left_out
    assert fields_of(page, "confirm-form")["hold"] == [str(fine.pk)]

    confirm(alice_client, summary)

    assert list(Decision.objects.filter(reviewer__username="alice").values_list("hold", flat=True)) == [fine.pk]


@pytest.mark.django_db
def test_a_hold_decided_between_summary_and_confirm_is_reported_and_the_others_are_sent(
    alice_client, bob, platform_client, platform_state
):
    first, second, third = add_refunds(platform_state, platform_client, 3)
    summary = alice_client.post(BULK, selected([first, second, third], "reject", "Duplicate request."))
    decisions.submit(second, bob, [ItemChoice("call_1", "approve")])

    result = confirm(alice_client, summary)

    assert result.status_code == 200
    page = result.content.decode()
    sent, not_sent = page.split("<h2>Not sent</h2>")
    assert "2 decisions sent" in sent and first.question in sent and third.question in sent
    assert second.question in not_sent and "Already decided by Bob Brown at" in not_sent
    assert sorted(Decision.objects.filter(reviewer__username="alice").values_list("hold", flat=True)) == [
        first.pk,
        third.pk,
    ]
    assert Decision.objects.get(hold=first).items.get().comment == "Duplicate request."


@pytest.mark.django_db
def test_a_hold_changed_since_the_summary_is_not_sent(alice_client, platform_client, platform_state):
    first, second = add_refunds(platform_state, platform_client, 2)
    summary = alice_client.post(BULK, selected([first, second], "approve"))
    second.items.update(data={"order_id": "B-1", "amount": "500.00"})

    page = confirm(alice_client, summary).content.decode()

    assert "1 decision sent" in page and "Changed since the summary you confirmed" in page
    assert list(Decision.objects.values_list("hold", flat=True)) == [first.pk]


@pytest.mark.django_db
def test_after_an_undo_the_old_bulk_confirm_does_not_send_that_hold_again(
    alice_client, alice, platform_client, platform_state, settings
):
    settings.UNDO_SECONDS = 10
    first, second = add_refunds(platform_state, platform_client, 2)
    summary = alice_client.post(BULK, selected([first, second], "approve"))
    confirm(alice_client, summary)
    decisions.withdraw(Decision.objects.get(hold=first).pk, alice)

    replayed = confirm(alice_client, summary).content.decode()

    sent, not_sent = replayed.split("<h2>Not sent</h2>")
    assert "0 decisions sent" in sent
    assert first.question in not_sent and "decided since your summary was made" in not_sent
    assert list(Decision.objects.filter(hold=first).values_list("state", flat=True)) == ["withdrawn"]
    assert Decision.objects.filter(hold=second).count() == 1


@pytest.mark.django_db
def test_a_bulk_summary_older_than_claim_minutes_sends_nothing_and_is_shown_again(
    alice_client, platform_client, platform_state, settings
):
    holds = add_refunds(platform_state, platform_client, 2)
    with time_machine.travel(timezone.now(), tick=False) as traveller:
        summary = alice_client.post(BULK, selected(holds, "approve"))
        traveller.shift(timedelta(minutes=settings.CLAIM_MINUTES, seconds=1))

        expired = confirm(alice_client, summary)
        nothing_stored = not Decision.objects.exists()
        fresh = confirm(alice_client, expired)

    assert expired.status_code == 409 and nothing_stored
    assert "Nothing was sent: this summary is more than 10 minutes old." in expired.content.decode()
    assert "2 decisions sent" in fresh.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("tamper", ["forged digest", "another hold", "other comment", "other action", "other reviewer"])
def test_a_confirm_that_no_summary_showed_sends_nothing(
    tamper, alice_client, bob, client, platform_client, platform_state
):
    first, second, third = add_refunds(platform_state, platform_client, 3)
    form = fields_of(alice_client.post(BULK, selected([first, second], "approve")).content.decode(), "confirm-form")
    form["confirm"] = "yes"
    if tamper == "forged digest":
        form["digest"] = [form["digest"][0].rsplit(":", 1)[0] + ":forged"]
    elif tamper == "another hold":
        form["hold"] = form["hold"] + [str(third.pk)]
    elif tamper == "other comment":
        form["comment"] = ["Approved by the manager."]
    elif tamper == "other action":
        form["action"] = ["reject"]
    else:
        alice_client.logout()
        alice_client.force_login(bob)

    refused = alice_client.post(BULK, form)

    assert refused.status_code == 409
    assert "Nothing was sent" in refused.content.decode()
    assert not Decision.objects.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    "form",
    [
        {"hold": ["abc"], "action": "approve"},
        {"hold": ["1"], "action": "edit"},
        {"hold": ["1"]},
        {"hold": ["1"], "action": "approve", "comment": "x" * 5001},
        {"hold": [str(n) for n in range(1, 502)], "action": "approve"},
    ],
)
def test_a_hostile_selection_is_a_400(form, alice_client):
    assert alice_client.post(BULK, form).status_code == 400


@pytest.mark.django_db
def test_nothing_selected_goes_back_to_the_queue_saying_so(alice_client):
    response = alice_client.post(BULK, {"action": "approve"}, follow=True)

    assert response.redirect_chain == [("/", 302)]
    assert "Select one or more holds in the queue first." in response.content.decode()


@pytest.mark.django_db
def test_only_reviewers_decide_in_bulk(client, audrey, samples):
    client.force_login(audrey)

    response = client.post(BULK, selected(samples.values(), "approve"))

    assert response.status_code == 403
    assert not Decision.objects.exists()
