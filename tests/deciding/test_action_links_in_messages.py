"""One tap from an email or a chat message: the links arrive by real SMTP (or in a webhook's body) and decide once.

The links are read out of the mail as a person reads them (the text part's "Approve: …" line, the HTML part's
link whose text is "Approve"), then followed with a signed-in browser-like client.
"""

import json
import re
from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from audit.models import AuditEvent, EventKind
from holds.links import action_links
from holds.mirror import sync
from holds.models import Decision, Hold
from notifications import notify, sending, subscriptions
from notifications.models import Notification, WebhookChannel
from teams import scopes
from tests.helpers.action_links import SITE, path_of, posted, sent_decisions, signed_in


@pytest.fixture
def mail(mail, settings):
    """The root conftest's inbox, with the links' site address set."""
    settings.SITE_URL = SITE
    return mail


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self._href = [], None

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._href = dict(attrs).get("href")

    def handle_data(self, data):
        if self._href is not None and data.strip():
            self.links.append((data.strip(), self._href))

    def handle_endtag(self, tag):
        self._href = None


def parts_of(message) -> dict[str, str]:
    return {p.get_content_type(): p.get_payload(decode=True).decode() for p in message.walk() if not p.is_multipart()}


def html_links(message) -> list[tuple[str, str]]:
    parser = _Links()
    parser.feed(parts_of(message)["text/html"])
    return parser.links


def text_link(message, label: str, nth: int = 0) -> str:
    """The URL after "Approve: " (say) in the text part, as a person copies it."""
    return re.findall(rf"^\s*{label}: (\S+)\r?$", parts_of(message)["text/plain"], re.MULTILINE)[nth]


def deliver_pending(inbox, count: int = 1):
    for notification in Notification.objects.filter(status="pending", channel="email"):
        sending.send(notification.pk)
    assert len(inbox) == count
    return inbox


def remind(hold, *users):
    """The expiry reminder about ``hold``, by email, to whoever would get it (every reviewer when unclaimed)."""
    for user in users:
        subscriptions.save_preferences(scopes.viewer_of(user), {notify.Event.EXPIRING_SOON: ["email"]})
    notify.expiring_soon([hold], timezone.now())


@pytest.mark.django_db
def test_a_reminder_email_carries_approve_reject_and_open_and_approve_decides_once(mail, samples, alice):
    hold = samples["h_17"]
    remind(hold, alice)
    message = deliver_pending(mail)[0]

    assert [label for label, _ in html_links(message)][:3] == ["Approve", "Reject", "Open"]
    approve = text_link(message, "Approve")
    assert dict(html_links(message))["Approve"] == approve
    assert text_link(message, "Open") == f"{SITE}/holds/{hold.pk}/"
    client = signed_in(alice)
    opened = client.get(path_of(approve))
    assert opened.status_code == 200 and not sent_decisions(hold)  # opening decides nothing: scanners open links
    page = opened.content.decode()
    assert (
        "Goes ahead with amount 15.00, order_id A-1004" in page
        and 'Amount <strong class="untrusted">15.00</strong>' in page
    )
    assert "llamaindex-support" in page and "left" in page and ">Send</button>" in page

    sent = posted(client, path_of(approve))
    outcome = client.get(sent["Location"]).content.decode()

    decision = Decision.objects.get(hold=hold)
    assert (decision.reviewer, [item.action for item in decision.items.all()]) == (alice, ["approve"])
    assert decision.undo_until is not None and 'id="undo-form"' in outcome
    submitted = AuditEvent.objects.get(kind=EventKind.DECISION_SUBMITTED)
    assert submitted.payload["channel"] == "email_link"


@pytest.mark.django_db
def test_a_reject_link_sends_the_optional_comment_and_the_audit_shows_the_email_link(mail, samples, alice, audrey):
    hold = samples["h_17"]
    remind(hold, alice)
    reject = text_link(deliver_pending(mail)[0], "Reject")
    client = signed_in(alice)

    posted(client, path_of(reject), comment="Customer already refunded by phone")

    item = Decision.objects.get(hold=hold).items.get()
    assert (item.action, item.comment) == ("reject", "Customer already refunded by phone")
    auditor = signed_in(audrey)
    decision_page = auditor.get(reverse("audit:decision", args=[item.decision_id])).content.decode()
    assert "Came through" in decision_page and "the email link" in decision_page
    assert "Reject A-1004 (through the email link)" in auditor.get(reverse("audit:list")).content.decode()
    csv = b"".join(auditor.get(reverse("audit:export")).streaming_content).decode()
    header, *rows = csv.splitlines()
    assert header.endswith(",channel")
    assert any(row.endswith(",email link") and "decision_submitted" in row for row in rows)


@pytest.mark.django_db
def test_a_new_holds_digest_gives_each_listed_hold_its_own_links(mail, samples, alice):
    subscriptions.save_preferences(scopes.viewer_of(alice), {notify.Event.NEW_HOLDS: ["email"]})
    listed = [samples["h_17"], samples["h_16"]]  # h_16's agent wrote a <script> into its question
    notify.new_holds_digest(listed, timezone.now())
    message = deliver_pending(mail)[0]

    assert "<script>" not in parts_of(message)["text/html"] and "&lt;script&gt;" in parts_of(message)["text/html"]
    approves = [text_link(message, "Approve", n) for n in range(2)]
    opens = re.findall(r"^\s*Open: (\S+)\r?$", parts_of(message)["text/plain"], re.MULTILINE)
    assert opens == [f"{SITE}/holds/{hold.pk}/" for hold in listed]
    assert len(set(approves)) == 2
    assert [label for label, _ in html_links(message)].count("Approve") == 2
    for hold, approve in zip(listed, approves, strict=True):
        assert action_links.read(approve.rsplit("/", 1)[1]).hold_pk == hold.pk


@pytest.mark.django_db
def test_no_approve_link_where_the_hold_does_not_allow_approve(mail, platform_state, platform_client, alice):
    platform_state.add_hold("default", {"hold_id": "h_no", "actions": ["reject"]})
    sync.sync_env(platform_client, "default")
    remind(Hold.objects.get(hold_id="h_no"), alice)
    message = deliver_pending(mail)[0]

    labels = [label for label, _ in html_links(message)]
    assert "Approve" not in labels and "Reject" in labels
    assert "Approve:" not in parts_of(message)["text/plain"]


@pytest.mark.django_db
def test_a_webhook_carries_links_bound_to_nobody_and_whoever_opens_one_decides_as_themselves(
    webhook_receiver,
    samples,
    alice,
    bob,
    settings,
):
    settings.SITE_URL = SITE
    hold = samples["h_17"]
    WebhookChannel.objects.create(name="chat", url=webhook_receiver.url, secret="s" * 32, events=["expiring_soon"])
    notify.expiring_soon([hold], timezone.now())
    sending.send(Notification.objects.get(channel="webhook").pk)

    body = json.loads(webhook_receiver.received[0][1])
    assert body["text"].startswith("Expires in") and body["hold"]["hold_id"] == "h_17"  # as receivers had it
    assert body["actions"]["open"] == f"{SITE}/holds/{hold.pk}/"
    posted(signed_in(bob), path_of(body["actions"]["approve"]))

    decision = Decision.objects.get(hold=hold)
    assert decision.reviewer == bob
    assert AuditEvent.objects.get(kind=EventKind.DECISION_SUBMITTED).payload["channel"] == "chat_link"


@pytest.mark.django_db
def test_a_signed_out_reviewer_signs_in_and_lands_on_the_link(samples, alice, settings):
    settings.SITE_URL = SITE
    link = path_of(action_links.links_for(samples["h_17"], alice).approve)
    client = Client()

    to_sign_in = client.get(link)
    signed = client.post(to_sign_in["Location"], {"username": "alice", "password": "pw"})

    assert to_sign_in.status_code == 302 and to_sign_in["Location"].startswith("/login/")
    assert signed.status_code == 302 and signed["Location"] == link
    assert ">Send</button>" in client.get(link).content.decode()
