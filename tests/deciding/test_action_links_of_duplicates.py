"""One-tap links of a possible duplicate: the reminder, by real SMTP, says "Possible duplicate of h_…" (only ids
its recipient may see), its Approve opens the hold's page, and an Approve link made before the hold was flagged
opens the page too, deciding nothing; Reject still decides in one step."""

import re

import pytest
from django.utils import timezone

from holds.links import action_links
from holds.mirror import sync
from holds.models import Decision
from notifications import notify, sending, subscriptions
from notifications.models import Notification
from reviewqueue import roles
from teams import scopes
from tests.helpers.action_links import SITE, path_of, posted, signed_in
from tests.helpers.users import make_user, scoped_group

pytestmark = pytest.mark.django_db


def remind(hold, user):
    """The expiry reminder about ``hold`` by email to ``user``, delivered by real SMTP; the message received."""
    subscriptions.save_preferences(scopes.viewer_of(user), {notify.Event.EXPIRING_SOON: ["email"]})
    notify.expiring_soon([hold], timezone.now())
    for notification in Notification.objects.filter(status="pending", channel="email"):
        sending.send(notification.pk)


def parts_of(message) -> dict[str, str]:
    return {p.get_content_type(): p.get_payload(decode=True).decode() for p in message.walk() if not p.is_multipart()}


def text_link(message, label: str) -> str:
    return re.findall(rf"^\s*{label}: (\S+)\r?$", parts_of(message)["text/plain"], re.MULTILINE)[0]


@pytest.fixture
def mail(mail, settings):
    settings.SITE_URL = SITE
    return mail


def test_a_reminder_of_a_possible_duplicate_names_the_others_and_its_approve_opens_the_page(mail, samples, alice):
    hold = samples["h_12"]
    remind(hold, alice)
    [message] = mail

    text = parts_of(message)["text/plain"]
    assert "Possible duplicate of h_13, h_14, h_15" in text
    assert "Possible duplicate of h_13, h_14, h_15" in parts_of(message)["text/html"]
    assert text_link(message, "Approve") == f"{SITE}/holds/{hold.pk}/"

    reject = text_link(message, "Reject")
    posted(signed_in(alice), path_of(reject), comment="asked four times")
    assert [item.action for item in Decision.objects.get(hold=hold).items.all()] == ["reject"]


def test_a_reminder_names_only_the_duplicates_its_recipient_may_see(mail, samples):
    scoped_group("OpenAI Agents team", agent="support-openai-agents")
    dana = make_user("dana", roles.REVIEWERS, "OpenAI Agents team")
    remind(samples["h_15"], dana)

    [message] = mail
    text = parts_of(message)["text/plain"]
    assert "Possible duplicate of 3 other holds" in text
    assert "h_12" not in text and "h_13" not in text and "h_14" not in text


def test_an_approve_link_of_a_possible_duplicate_opens_its_page_and_decides_nothing(samples, alice, settings):
    settings.SITE_URL = SITE
    hold = samples["h_15"]
    token = action_links.make(hold, "approve", alice)
    client = signed_in(alice)
    path = path_of(action_links._url(token))

    opened = client.get(path)
    sent = client.post(path, {"round": "0"})

    assert opened.status_code == 302 and opened["Location"] == f"/holds/{hold.pk}/"
    assert sent.status_code == 302 and sent["Location"] == f"/holds/{hold.pk}/"
    assert not Decision.objects.filter(hold=hold).exists()


def test_a_channels_message_names_only_duplicates_every_reader_of_the_hold_may_see(
    samples, platform_state, platform_client, settings
):
    """A channel's message is bound to nobody: it names the duplicates of the same env, agent and capability (every
    team scope admitting the hold admits them) and counts the others."""
    settings.SITE_URL = SITE
    platform_state.add_hold(
        "default",
        {
            "hold_id": "h_retry",
            "agent": "llamaindex-support",
            "capability": samples["h_12"].capability,
            "items": [{"id": "A-1001", "title": "A-1001 · 49.90", "data": {"order_id": "A-1001", "amount": "49.90"}}],
        },
    )
    sync.sync_env(platform_client, "default")

    links = action_links.links_for(samples["h_12"])

    assert links.warning == "Possible duplicate of h_retry and 3 more of other agents or envs"
    assert links.approve == f"{SITE}/holds/{samples['h_12'].pk}/" and "/links/" in links.reject
