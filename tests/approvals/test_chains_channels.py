"""The issue's chain, each approval through another door: Support leads on the page, Finance in Slack and with a
one-tap link, Legal through the API. The platform hears once, after the fourth; a fifth approval by someone who
approved already is refused at every door, and a reject by Legal rejects the hold."""

import json

import pytest
from django.test import Client
from django.urls import reverse

from approvals.models import Approval
from audit.models import AuditEvent, EventKind
from holds.deciding import delivery
from holds.links import action_links
from holds.models import Decision, DecisionChannel
from slackapp import payloads, pressing
from tests.helpers.action_links import posted
from tests.helpers.api import approve_every_item, bearer, token_of
from tests.helpers.approvals_setup import confirm, decision_posts, signed_in
from tests.helpers.fake_slack import button_press, linked

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_delivery")]


def press(hold, slack, user: str) -> str:
    value = action_links.make(hold, "approve", channel=DecisionChannel.SLACK)
    return pressing.handle(payloads.read(json.dumps(button_press(value, "approve", slack.response_url(), user=user))))


def by_api(user, hold, body=None):
    return Client().post(
        f"/api/v1/holds/{hold.pk}/decision",
        json.dumps(body or approve_every_item(hold)),
        content_type="application/json",
        **bearer(token_of(user)),
    )


def by_link(user, hold):
    return posted(signed_in(user), reverse("action-link", args=[action_links.make(hold, "approve", user)]))


def test_four_people_through_four_doors_send_one_decision_and_a_fifth_is_refused_everywhere(
    chain, refund, slack_app, platform_state, platform_client
):
    linked(chain.fay, "U0FAY")
    linked(chain.sam, "U0SAM")

    confirm(signed_in(chain.sam), refund)  # the page
    fays = press(refund, slack_app, "U0FAY")  # Slack
    api_answer = by_api(chain.lee, refund)  # the API
    api_hold = Client().get(f"/api/v1/holds/{refund.pk}", **bearer(token_of(chain.rex))).json()
    nothing_yet = not Decision.objects.exists()
    sams_second = press(refund, slack_app, "U0SAM")  # he approved in stage 1: he counts once
    sams_call = by_api(chain.sam, refund)
    by_link(chain.fin, refund)  # a one-tap link
    decision = Decision.objects.get()
    delivery.deliver(decision.pk, platform_client)
    sams_late = press(refund, slack_app, "U0SAM")

    assert "Stage 2 of 3 · Finance · 1 of 2" in fays and "yours is recorded" in fays
    assert api_answer.status_code == 202 and nothing_yet
    assert [
        (stage["group"], stage["quorum"], stage["state"], [a["by"] for a in stage["approvals"]])
        for stage in api_hold["stages"]
    ] == [
        ("Support leads", 1, "done", ["sam"]),
        ("Finance", 2, "waiting", ["fay"]),
        ("Legal", 1, "done", ["lee"]),
    ]
    assert len(decision_posts(platform_state)) == 1
    assert decision_posts(platform_state)[0]["body"]["decided_by"] == (
        "sam@example.com, fay@example.com, lee@example.com, fin@example.com"
    )
    channels = AuditEvent.objects.filter(kind=EventKind.APPROVAL_GIVEN).order_by("sequence")
    assert [event.payload["channel"] for event in channels] == ["page", "slack", "api", "email_link"]
    assert (
        sams_second
        == "You gave approval 1 of 4 of this decision; another person must give the next one. Nothing was sent."
    )
    assert sams_call.status_code == 409 and "another person must give the next one" in sams_call.json()["detail"]
    assert sams_late.endswith("nothing was sent.") and Decision.objects.count() == 1 and Approval.objects.count() == 4


def test_a_reject_by_legal_through_the_api_rejects_the_hold(chain, refund, platform_state, platform_client):
    confirm(signed_in(chain.sam), refund)
    body = {"items": [{"id": "call_1", "action": "reject", "comment": "No contract on file"}]}

    answer = by_api(chain.lee, refund, body)
    delivery.deliver(Decision.objects.get().pk, platform_client)

    assert answer.status_code == 201
    assert decision_posts(platform_state)[0]["body"] == {
        "items": [{"id": "call_1", "action": "reject", "comment": "No contract on file"}],
        "decided_by": "lee@example.com",
    }


@pytest.mark.parametrize(
    "hold_id, framework",
    [("h_12", "LlamaIndex"), ("h_13", "Upsonic"), ("h_14", "Agno"), ("h_15", "OpenAI Agents SDK")],
)
def test_each_frameworks_hold_goes_through_a_chain_and_reaches_the_platform_once(
    hold_id, framework, samples, platform_state, platform_client
):
    from tests.helpers.chains import chain_policy, member

    chain_policy([("Support leads", 1, False), ("Finance", 1, False), ("Legal", 1, True)], over="40")
    sam, fay, lee = member("sam", "Support leads"), member("fay", "Finance"), member("lee", "Legal")
    hold = samples[hold_id]

    confirm(signed_in(sam), hold)  # the page, the possible duplicates checked on its summary
    waiting = not Decision.objects.filter(hold=hold).exists()
    by_api(fay, hold)
    still_waiting = not Decision.objects.filter(hold=hold).exists()
    confirm(signed_in(lee), hold)  # a possible duplicate is approved on its page only, never by a link or a button
    decision = Decision.objects.get(hold=hold)
    delivery.deliver(decision.pk, platform_client)

    [post] = [one for one in decision_posts(platform_state) if f"/holds/{hold_id}/" in one["path"]]
    assert waiting and still_waiting, framework
    assert post["body"]["decided_by"] == "sam@example.com, fay@example.com, lee@example.com"
    assert [item["id"] for item in post["body"]["items"]] == [item.item_id for item in hold.items.all()]
    assert {item["action"] for item in post["body"]["items"]} == {"approve"}
