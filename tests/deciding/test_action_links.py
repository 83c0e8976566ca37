"""One tap from an email or a chat message: the links arrive by real SMTP, and every way of misusing one sends nothing.

The links are read out of the mail as a person reads them (the text part's "Approve: …" line, the HTML part's
link whose text is "Approve"), then followed with a signed-in browser-like client.
"""

import json
import re
from datetime import timedelta
from html.parser import HTMLParser

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from approvals import approving
from approvals.models import Approval
from audit.models import AuditEvent, EventKind
from holds import lifecycle
from holds.deciding import deciders, decisions
from holds.links import action_links
from holds.mirror import sync
from holds.models import ActionLinkUse, Decision, Hold
from notifications import notify, sending, subscriptions
from notifications.models import Notification, WebhookChannel
from reviewqueue import roles
from teams import scopes
from tests.helpers.approval_history import raise_on_the_platform
from tests.helpers.concurrently import at_once
from tests.helpers.users import make_user, scoped_group

SITE = "https://review.example.com"


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


def path_of(url: str) -> str:
    assert url.startswith(SITE), url
    return url.removeprefix(SITE)


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


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def posted(client, path, **fields):
    """Press Send on the page at ``path``: its form's hidden fields, plus ``fields``."""
    page = client.get(path).content.decode()
    round_shown = re.search(r'name="round" value="(\d+)"', page).group(1)
    return client.post(path, {"round": round_shown, **fields})


def sent_decisions(hold):
    return list(Decision.objects.filter(hold=hold))


@pytest.mark.django_db
def test_a_reminder_email_carries_approve_reject_and_open_and_approve_decides_once(mail, samples, alice):
    hold = samples["h_12"]
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
        "Goes ahead with amount 49.90, order_id A-1001" in page
        and 'Amount <strong class="untrusted">49.90</strong>' in page
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
    hold = samples["h_12"]
    remind(hold, alice)
    reject = text_link(deliver_pending(mail)[0], "Reject")
    client = signed_in(alice)

    posted(client, path_of(reject), comment="Customer already refunded by phone")

    item = Decision.objects.get(hold=hold).items.get()
    assert (item.action, item.comment) == ("reject", "Customer already refunded by phone")
    auditor = signed_in(audrey)
    decision_page = auditor.get(reverse("audit:decision", args=[item.decision_id])).content.decode()
    assert "Came through" in decision_page and "the email link" in decision_page
    assert "Reject A-1001 (through the email link)" in auditor.get(reverse("audit:list")).content.decode()
    csv = b"".join(auditor.get(reverse("audit:export")).streaming_content).decode()
    header, *rows = csv.splitlines()
    assert header.endswith(",channel")
    assert any(row.endswith(",email link") and "decision_submitted" in row for row in rows)


@pytest.mark.django_db
def test_a_new_holds_digest_gives_each_listed_hold_its_own_links(mail, samples, alice):
    subscriptions.save_preferences(scopes.viewer_of(alice), {notify.Event.NEW_HOLDS: ["email"]})
    listed = [samples["h_12"], samples["h_16"]]  # h_16's agent wrote a <script> into its question
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
    hold = samples["h_12"]
    WebhookChannel.objects.create(name="chat", url=webhook_receiver.url, secret="s" * 32, events=["expiring_soon"])
    notify.expiring_soon([hold], timezone.now())
    sending.send(Notification.objects.get(channel="webhook").pk)

    body = json.loads(webhook_receiver.received[0][1])
    assert body["text"].startswith("Expires in") and body["hold"]["hold_id"] == "h_12"  # as receivers had it
    assert body["actions"]["open"] == f"{SITE}/holds/{hold.pk}/"
    posted(signed_in(bob), path_of(body["actions"]["approve"]))

    decision = Decision.objects.get(hold=hold)
    assert decision.reviewer == bob
    assert AuditEvent.objects.get(kind=EventKind.DECISION_SUBMITTED).payload["channel"] == "chat_link"


@pytest.mark.django_db
def test_a_signed_out_reviewer_signs_in_and_lands_on_the_link(samples, alice, settings):
    settings.SITE_URL = SITE
    link = path_of(action_links.links_for(samples["h_12"], alice).approve)
    client = Client()

    to_sign_in = client.get(link)
    signed = client.post(to_sign_in["Location"], {"username": "alice", "password": "pw"})

    assert to_sign_in.status_code == 302 and to_sign_in["Location"].startswith("/login/")
    assert signed.status_code == 302 and signed["Location"] == link
    assert ">Send</button>" in client.get(link).content.decode()


@pytest.mark.django_db
def test_a_replayed_link_says_who_decided_and_when_and_sends_nothing(samples, alice, bob, settings):
    settings.SITE_URL = SITE
    hold = samples["h_12"]
    chat_link = path_of(action_links.links_for(hold).approve)
    posted(signed_in(alice), chat_link)

    bobs_replay = signed_in(bob).post(chat_link, {"round": "0"})
    alices_replay = signed_in(alice).post(chat_link, {"round": "0"})

    assert bobs_replay.status_code == 409
    assert "This link was used already: Alice Adams sent its decision with it at" in bobs_replay.content.decode()
    assert alices_replay.status_code == 200 and 'id="decision-status"' in alices_replay.content.decode()
    assert len(sent_decisions(hold)) == 1 and ActionLinkUse.objects.count() == 1


@pytest.mark.django_db
def test_someone_without_the_reviewer_role_learns_nothing_from_a_used_link(samples, alice, audrey, settings):
    settings.SITE_URL = SITE
    chat_link = path_of(action_links.links_for(samples["h_12"]).reject)
    posted(signed_in(alice), chat_link)

    opened = signed_in(audrey).get(chat_link)

    assert opened.status_code == 403 and "Alice" not in opened.content.decode()


@pytest.mark.django_db
def test_a_forwarded_email_link_reveals_nothing_and_sends_nothing(samples, alice, bob, settings):
    settings.SITE_URL = SITE
    hold = samples["h_12"]
    alices = path_of(action_links.links_for(hold, alice).approve)

    opened = signed_in(bob).get(alices)
    sent = signed_in(bob).post(alices, {"round": "0"})

    page = opened.content.decode()
    assert opened.status_code == sent.status_code == 403
    assert "This link was sent to someone else" in page
    assert hold.question[:20] not in page and f"/holds/{hold.pk}/" not in page
    assert not sent_decisions(hold)


@pytest.mark.django_db
@pytest.mark.parametrize("change", ["one character", "cut short", "another salt", "garbage", "forged payload"])
def test_a_tampered_link_gives_a_clear_page_never_a_500(samples, alice, settings, change):
    token = action_links.make(samples["h_12"], "approve", alice)
    from django.core import signing

    tampered = {
        "one character": token[:-3] + ("A" if token[-3] != "A" else "B") + token[-2:],
        "cut short": token[: len(token) // 2],
        "another salt": signing.dumps(
            signing.loads(token, salt=action_links.SALT), salt="holds.deciding.review.summary"
        ),
        "garbage": "%00..%2F" * 3,
        "forged payload": signing.dumps(
            {"t": "x", "h": samples["h_12"].pk, "a": "edit", "d": "", "r": alice.pk, "c": "email_link", "x": 2**40},
            salt=action_links.SALT,
        ),
    }[change]
    client = signed_in(alice)

    opened = client.get(reverse("action-link", args=[tampered]) if "/" not in tampered else f"/links/{tampered}")
    sent = client.post(reverse("action-link", args=[tampered]) if "/" not in tampered else f"/links/{tampered}")

    assert opened.status_code in (400, 404) and sent.status_code in (400, 404)
    if opened.status_code == 400:
        assert "This link is not one Review Queue made" in opened.content.decode()
    assert not Decision.objects.exists()


@pytest.mark.django_db
def test_a_send_that_names_no_round_of_approvals_is_a_400(samples, alice):
    link = reverse("action-link", args=[action_links.make(samples["h_12"], "approve", alice)])

    sent = signed_in(alice).post(link)

    assert sent.status_code == 400 and not Decision.objects.exists() and not ActionLinkUse.objects.exists()


@pytest.mark.django_db
def test_an_expired_link_gives_a_clear_page_and_a_link_expires_with_its_hold(
    samples, alice, platform_state, platform_client
):
    hold = samples["h_12"]
    a_day_ago = timezone.now() - timedelta(hours=25)
    stale = action_links.make(hold, "approve", alice, now=a_day_ago)
    soon = timezone.now() + timedelta(minutes=5)
    Hold.objects.filter(pk=hold.pk).update(expires_at=soon)
    hold.refresh_from_db()

    sent = signed_in(alice).post(reverse("action-link", args=[stale]), {"round": "0"})

    assert sent.status_code == 410 and "This link expired at" in sent.content.decode()
    assert action_links.read(stale).expires_at.timestamp() == int((a_day_ago + action_links.LIFETIME).timestamp())
    assert action_links.read(action_links.make(hold, "approve", alice)).expires_at.timestamp() == int(soon.timestamp())
    assert not Decision.objects.exists()


@pytest.mark.django_db
def test_out_of_the_recipients_team_scopes_the_link_is_a_404(samples, alice):
    hold = samples["h_12"]
    link = reverse("action-link", args=[action_links.make(hold, "approve", alice)])
    alice.groups.add(scoped_group("Billing", agent="billing-*"))  # the scopes changed since the message

    assert signed_in(alice).get(link).status_code == 404
    assert signed_in(alice).post(link, {"round": "0"}).status_code == 404
    assert not Decision.objects.exists()


@pytest.mark.django_db
def test_a_hold_decided_elsewhere_meanwhile_is_said_so(samples, alice, bob):
    hold = samples["h_12"]
    link = reverse("action-link", args=[action_links.make(hold, "reject", alice)])
    decisions.submit(hold, bob, [decisions.ItemChoice("A-1001", "approve")])

    sent = signed_in(alice).post(link, {"round": "0"})

    assert sent.status_code == 409 and "Decided by Bob Brown at" in sent.content.decode()
    assert [d.reviewer for d in sent_decisions(hold)] == [bob]


@pytest.mark.django_db
def test_a_hold_changed_on_the_platform_since_the_message_offers_the_hold_page(
    alice,
    refund,
    platform_state,
    platform_client,
):
    link = reverse("action-link", args=[action_links.make(refund, "approve", alice)])
    raise_on_the_platform(platform_state, platform_client, refund, "5000.00")

    sent = signed_in(alice).post(link, {"round": "0"})

    page = sent.content.decode()
    assert sent.status_code == 409 and "changed on the platform since this message was sent" in page
    assert f'href="/holds/{refund.pk}/"' in page
    assert not Decision.objects.exists()


@pytest.mark.django_db
def test_four_eyes_through_two_links_records_one_approval_each_and_the_second_sends(
    alice,
    bob,
    large_refunds,
    refund,
):
    large_refunds.later_approver_group = Group.objects.create(name="Finance leads")
    large_refunds.save()
    fiona = make_user("fiona", roles.REVIEWERS, "Finance leads")
    alices = signed_in(alice)
    alices_link = reverse("action-link", args=[action_links.make(refund, "approve", alice)])

    first = posted(alices, alices_link)
    recorded = alices.get(first["Location"]).content.decode()
    bobs_page = (
        signed_in(bob).get(reverse("action-link", args=[action_links.make(refund, "approve", bob)])).content.decode()
    )
    assert "1 of 2 approvals: yours is recorded; the next approval can come from Finance leads" in recorded
    assert Approval.objects.count() == 1 and not Decision.objects.exists()
    assert "must come from a member of Finance leads" in bobs_page and ">Send</button>" not in bobs_page
    replay = alices.post(alices_link, {"round": "0"})
    assert replay.status_code == 200 and Approval.objects.count() == 1

    posted(signed_in(fiona), reverse("action-link", args=[action_links.make(refund, "approve", fiona)]))

    decision = Decision.objects.get()
    assert decision.reviewer == fiona and approving.decided_by(decision, deciders.platform_name) == (
        "alice@example.com, fiona@example.com"
    )
    given = AuditEvent.objects.filter(kind=EventKind.APPROVAL_GIVEN).order_by("sequence")
    assert [event.payload["channel"] for event in given] == ["email_link", "email_link"]


@pytest.mark.django_db
def test_a_claim_held_by_someone_else_is_refused_with_their_name_and_the_link_still_works_later(samples, alice, bob):
    hold = samples["h_12"]
    link = reverse("action-link", args=[action_links.make(hold, "approve", alice)])
    lifecycle.claim(hold, bob)
    alices = signed_in(alice)

    page = alices.get(link).content.decode()
    sent = alices.post(link, {"round": "0"})

    assert "Bob Brown" in page and "is reviewing this hold now" in page and ">Send</button>" not in page
    assert sent.status_code == 409 and "Bob Brown is reviewing this hold" in sent.content.decode()
    assert not Decision.objects.exists() and not ActionLinkUse.objects.exists()
    lifecycle.release_claim(hold, bob)
    assert alices.post(link, {"round": "0"}).status_code == 302 and len(sent_decisions(hold)) == 1


@pytest.mark.django_db
def test_undo_from_the_outcome_withdraws_and_the_link_stays_used(samples, alice):
    hold = samples["h_12"]
    link = reverse("action-link", args=[action_links.make(hold, "approve", alice)])
    alices = signed_in(alice)
    posted(alices, link)
    decision = Decision.objects.get()

    alices.post(reverse("decision-undo", args=[hold.pk]), {"decision": decision.pk})
    again = alices.post(link, {"round": "0"})

    decision.refresh_from_db()
    assert decision.state == Decision.State.WITHDRAWN
    assert again.status_code == 200 and "Undone at" in again.content.decode()
    assert Decision.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_taps_on_one_chat_link_at_the_same_moment_send_one_decision(samples, alice, bob):
    token = action_links.make(samples["h_12"], "approve")

    def tap(user):
        def send():
            try:
                return action_links.send(token, scopes.viewer_of(user), round_shown=0)
            except (action_links.Refused, decisions.DecisionRefused) as refused:
                return refused

        return send

    outcomes = at_once(tap(alice), tap(bob), tap(alice))

    assert sum(isinstance(outcome, Decision) for outcome in outcomes) == 1
    assert Decision.objects.count() == 1 and ActionLinkUse.objects.count() == 1
