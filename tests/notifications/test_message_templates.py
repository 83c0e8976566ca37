"""What each notification says, as its templates write it: every time in the recipient's own zone, and agent-written
text coming out as the text it is, in the inbox, an email, Slack and Teams."""

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import Group

from approvals import chains
from approvals.models import Escalation
from holds.models import Assignment, Decision, DecisionItem, Hold, Note
from notifications import away, chain_news, channels, notify, subscriptions
from notifications.models import Notification, WebhookChannel
from people.models import Preference
from teams.scopes import viewer_of
from tests.helpers.chains import chain_policy

pytestmark = pytest.mark.django_db

SITE = "https://review.example.com"
ZONE = "Asia/Kolkata"  # UTC+05:30: no time written in UTC reads the same there
EXPIRES = datetime(2099, 1, 1, 9, 0, tzinfo=UTC)  # 14:30 IST


def in_app(user) -> dict[str, tuple[str, str]]:
    """The (title, body) of each event ``user`` was told of in the app."""
    return {n.event: (n.title, n.body) for n in Notification.objects.filter(user=user, channel="in_app")}


def test_every_event_is_worded_in_the_recipients_time_zone(samples, alice, bob, audrey, settings):
    settings.SITE_URL = SITE
    Preference.objects.bulk_create([Preference(user=person, time_zone=ZONE) for person in (alice, bob, audrey)])
    Hold.objects.filter(pk=samples["h_12"].pk).update(expires_at=EXPIRES, claimed_by=bob, claim_expires_at=EXPIRES)
    hold = Hold.objects.get(pk=samples["h_12"].pk)
    link = f"{SITE}/holds/{hold.pk}/"
    WebhookChannel.objects.create(name="ops", url="http://127.0.0.1:9/", secret="s", events=["expired"])
    away.save(bob, EXPIRES + timedelta(days=1), alice, by=bob)
    subscriptions.save_preferences(viewer_of(alice), {event: ["in_app"] for event in Notification.Event.values})
    by_policy = Decision.objects.create(
        hold=hold, decided_by_policy="Small refunds", created_at=EXPIRES - timedelta(minutes=5), next_attempt_at=EXPIRES
    )
    DecisionItem.objects.create(decision=by_policy, position=0, item_id="A-1001", action="approve", comment="Refunded.")
    refused = Decision.objects.create(
        hold=hold,
        reviewer=alice,
        created_at=EXPIRES - timedelta(minutes=20),
        next_attempt_at=EXPIRES,
        state=Decision.State.NOT_APPLIED,
        outcome=Decision.Outcome.INVALID,
        outcome_message="the amount is over the limit",
    )

    notify.expiring_soon([hold], EXPIRES - timedelta(minutes=10))
    notify.expired([hold])
    escalation = Escalation(hold=hold, group_name="Finance", at=EXPIRES - timedelta(minutes=30), reason="not claimed")
    notify.escalated([(escalation, [alice])])
    notify.default_outcome(by_policy, [bob])
    notify.assigned(Assignment.objects.create(hold=hold, user=alice, assigned_at=EXPIRES, note="yours"), bob)
    notify.mentioned(Note.objects.create(hold=hold, author=bob, text="@alice see this", created_at=EXPIRES), [alice])
    notify.not_applied(refused)
    notify.undelivered([refused], EXPIRES - timedelta(minutes=13))
    notify.new_holds_digest([hold], EXPIRES)
    alice.groups.add(Group.objects.create(name="Finance"))
    stages = chains.stages_of(chain_policy([(None, 1, False), ("Finance", 1, False)]))
    chain_news.stage_waiting(hold, chains.progress(stages, [], {})[1:], 2)

    told = {**in_app(audrey), **in_app(alice)}
    asked = "llamaindex-support asked: Refund 49.90 on order A-1001?"
    assert sorted(told) == sorted(Notification.Event.values)
    assert told == {
        "expiring_soon": (
            "Expires in 10 min: Refund 49.90 on order A-1001? (for bob, who is away until 2099-01-02 14:30 IST)",
            f"For bob, who is away until 2099-01-02 14:30 IST.\n{asked}\n"
            "It expires at 2099-01-01 14:30 IST; after that the agent is told nobody decided.",
        ),
        "expired": (
            "Expired undecided: Refund 49.90 on order A-1001?",
            f"{asked}\nNobody decided before 2099-01-01 14:30 IST; the agent was told so.",
        ),
        "escalated": (
            "Escalated to Finance: Refund 49.90 on order A-1001?",
            f"{asked}\nEscalated to Finance at 2099-01-01 14:00 IST: not claimed.",
        ),
        "default_outcome": (
            "Approved by policy ‘Small refunds’ before expiry: Refund 49.90 on order A-1001?",
            f"{asked}\nNobody decided it before 2099-01-01 14:25 IST, so policy ‘Small refunds’ approved it, ahead of"
            " its expiry at 2099-01-01 14:30 IST.\nThe agent was told: Refunded.\n"
            "The approvals given so far stay on record: bob.",
        ),
        "assigned": (
            "Assigned to alice by Bob Brown: Refund 49.90 on order A-1001?",
            f"Bob Brown assigned this hold to alice (note: yours).\n{asked}\nIt expires at 2099-01-01 14:30 IST.\n"
            f"Open the hold: {link}",
        ),
        "mentioned": (
            "Bob Brown mentioned you: Refund 49.90 on order A-1001?",
            "Bob Brown wrote on the hold “Refund 49.90 on order A-1001?”:\n@alice see this\n"
            f"Notes stay in Review Queue; the agent never sees them.\nOpen the hold: {link}",
        ),
        "not_applied": (
            "Decision not applied: Refund 49.90 on order A-1001?",
            "Refused as invalid: the amount is over the limit",
        ),
        "undelivered": (
            "Decision still not delivered after 7 min: Refund 49.90 on order A-1001?",
            "The platform has not answered for 7 minutes (no answer yet). "
            "Delivery goes on with the same idempotency key; nothing is lost.",
        ),
        "stage_waiting": (
            "Stage 2 of 2 waits for Finance: Refund 49.90 on order A-1001?",
            f"{asked}\nThe earlier stages of its approval chain are complete: stage 2 of 2 now needs 1 of Finance.",
        ),
        "new_holds": (
            "1 new hold to review",
            f"- Refund 49.90 on order A-1001? (llamaindex-support, expires 2099-01-01 14:30 IST): {link}",
        ),
    }
    [digest] = Notification.objects.filter(event="new_holds", user=alice).values_list("holds", flat=True)
    assert digest[0]["expires_at"] == "2099-01-01 14:30 IST"
    # The webhooks' copy is in the site's zone.
    webhook = Notification.objects.get(channel="webhook", event="expired")
    assert "Nobody decided before 2099-01-01 09:00 UTC;" in webhook.body


def test_agent_written_text_comes_out_as_text_in_every_channel(samples, alice, bob, mail, settings):
    settings.SITE_URL = SITE
    hold = samples["h_16"]  # the hostile fixture
    question = "Refund <script>alert(1)</script> on order A-1003?"
    assert hold.question == question
    text = 'Looks like {{ hold.question }} {% now "Y" %} <img src=x onerror=alert(2)> & "approve"'
    for shape in WebhookChannel.Format.values:
        WebhookChannel.objects.create(
            name=shape, url="http://127.0.0.1:9/", secret="s", format=shape, events=["mentioned"]
        )
    subscriptions.save_preferences(viewer_of(alice), {"mentioned": ["in_app", "email"]})

    notify.mentioned(Note.objects.create(hold=hold, author=bob, text=text, created_at=EXPIRES), [alice])

    # The message is the text as written: no entity, and nothing of the note's template syntax ran.
    [(title, body)] = in_app(alice).values()
    assert title == f"Bob Brown mentioned you: {question}"
    assert body.startswith(f"Bob Brown wrote on the hold “{question}”:\n{text}\nNotes stay in Review Queue")
    # An email's text part keeps it as written; its HTML part escapes it once.
    channels.send_email(Notification.objects.get(channel="email", user=alice))
    parts = {
        part.get_content_type(): part.get_payload(decode=True).decode()
        for part in mail[0].walk()
        if not part.is_multipart()
    }
    assert question in parts["text/plain"] and text in parts["text/plain"]
    assert "Refund &lt;script&gt;alert(1)&lt;/script&gt; on order A-1003?" in parts["text/html"]
    assert "<script>" not in parts["text/html"] and "&amp;lt;" not in parts["text/html"]
    # Slack's mrkdwn escapes it once (not the entities of an HTML escaping before); a Teams TextRun keeps it as is.
    bodies = {n.webhook.format: channels.webhook_body(n) for n in Notification.objects.filter(channel="webhook")}
    [context] = [block for block in bodies["slack"]["blocks"] if block["type"] == "context"]
    escaped = "Refund &lt;script&gt;alert(1)&lt;/script&gt; on order A-1003?"
    assert f"wrote on the hold “{escaped}”" in context["elements"][0]["text"]
    assert "&amp;lt;" not in str(bodies["slack"]["blocks"])
    card = bodies["teams"]["attachments"][0]["content"]
    runs = [run["text"] for block in card["body"] for run in block.get("inlines", [])]
    assert any(f"wrote on the hold “{question}”:\n{text}" in run for run in runs)
    assert bodies["json"]["body"] == body
