"""Each webhook format as its receiver gets it over HTTP: Block Kit for Slack (with the structured fields beside it),
an Adaptive Card for Teams, the structured fields alone for JSON. The JSON is checked against the documented limits
with hostile agent text, which stays inert text in every format."""

import hashlib
import hmac
import json
import re

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from holds.mirror import sync
from holds.models import Hold, HoldItem
from notifications import notify, sending, webhook_formats
from notifications.hold_links import ActionLinks
from notifications.models import Notification, WebhookChannel
from tests.helpers.migrating import back_to, latest, migrate

SECRET = "webhook-secret"
SITE = "https://review.example.com"
HOSTILE = "<!channel> <https://evil.example|click> @here *bold* [here](https://evil.example) & more"
LONG_QUESTION = "Refund <!channel> & " + "x" * 4000


# One checker for Block Kit's documented limits


def utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def block_kit_problems(body: dict) -> list[str]:
    """What breaks Block Kit's documented limits, or its safety for agent text (mrkdwn verbatim, nothing unescaped)."""
    problems = []
    blocks = body["blocks"]
    if not 0 < len(blocks) <= 50:
        problems.append(f"{len(blocks)} blocks")

    def text_object(obj: dict, limit: int, where: str) -> None:
        if obj["type"] not in ("plain_text", "mrkdwn") or not 1 <= utf16(obj["text"]) <= limit:
            problems.append(f"{where}: {obj['type']} of {utf16(obj['text'])} characters (limit {limit})")
        if obj["type"] == "mrkdwn":
            if obj.get("verbatim") is not True:
                problems.append(f"{where}: mrkdwn not verbatim")
            if "<" in obj["text"] or ">" in obj["text"] or re.search(r"&(?!amp;|lt;|gt;)", obj["text"]):
                problems.append(f"{where}: unescaped markup in {obj['text'][:80]!r}")
            if not obj["text"].strip():
                problems.append(f"{where}: blank mrkdwn")

    for number, block in enumerate(blocks):
        where = f"block {number} ({block['type']})"
        if block["type"] == "header":
            assert block["text"]["type"] == "plain_text"
            text_object(block["text"], 150, where)
        elif block["type"] == "section":
            text_object(block["text"], 3000, where)
            if len(block.get("fields", [])) > 10:
                problems.append(f"{where}: {len(block['fields'])} fields")
            for field in block.get("fields", []):
                text_object(field, 2000, where + " field")
        elif block["type"] == "context":
            if not 0 < len(block["elements"]) <= 10:
                problems.append(f"{where}: {len(block['elements'])} elements")
            for element in block["elements"]:
                text_object(element, 3000, where)
        elif block["type"] == "actions":
            if not 0 < len(block["elements"]) <= 25:
                problems.append(f"{where}: {len(block['elements'])} elements")
            for button in block["elements"]:
                assert button["type"] == "button" and button["text"]["type"] == "plain_text"
                text_object(button["text"], 75, where + " button")
                if not 0 < len(button["url"]) <= 3000 or len(button.get("action_id", "")) > 255:
                    problems.append(f"{where}: button url or action_id too long")
                if button.get("style") not in (None, "primary", "danger"):
                    problems.append(f"{where}: style {button['style']}")
        else:
            problems.append(f"{where}: unexpected block")
    return problems


def mrkdwn_texts(body: dict) -> list[str]:
    found = []

    def walk(node):
        if isinstance(node, dict):
            if node.get("type") == "mrkdwn":
                found.append(node["text"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(body["blocks"])
    return found


def buttons(block: dict) -> dict[str, str]:
    return {button["text"]["text"]: button["url"] for button in block["elements"]}


def card_texts(card: dict) -> dict[str, list[str]]:
    """Every text of an Adaptive Card, by the element that holds it (TextRun, TextBlock, an action's title…)."""
    found: dict[str, list[str]] = {}

    def walk(node):
        if isinstance(node, dict):
            for key in ("text", "title", "value"):
                if isinstance(node.get(key), str):
                    found.setdefault(f"{node.get('type')}.{key}", []).append(node[key])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(card)
    return found


# Through the real path: a notification, a receiver over HTTP


def webhook(receiver, format: str, events=("expiring_soon",)) -> WebhookChannel:
    return WebhookChannel.objects.create(
        name=format, url=receiver.url, secret=SECRET, events=list(events), format=format
    )


def hostile(hold: Hold, question: str = HOSTILE) -> Hold:
    Hold.objects.filter(pk=hold.pk).update(question=question, agent=f"agent {HOSTILE}")
    item = HoldItem.objects.filter(hold=hold).first()
    item.data = {**item.data, "currency": "EUR"}
    item.save()
    return Hold.objects.get(pk=hold.pk)


def received(receiver, format: str) -> dict:
    """The body the webhook of ``format`` received, after checking it is signed as every format is."""
    notification = Notification.objects.get(channel="webhook", webhook__format=format)
    sending.send(notification.pk)
    headers, raw = receiver.received[-1]
    expected = "sha256=" + hmac.new(SECRET.encode(), raw, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(headers["X-ReviewQueue-Signature"], expected)
    return json.loads(raw)


@pytest.fixture
def site(settings):
    settings.SITE_URL = SITE


@pytest.mark.django_db
def test_a_slack_webhook_gets_block_kit_with_the_holds_facts_and_buttons_beside_the_structured_fields(
    webhook_receiver, samples, site
):
    hold = hostile(samples["h_12"])
    webhook(webhook_receiver, "slack")
    notify.expiring_soon([hold], timezone.now())

    body = received(webhook_receiver, "slack")

    assert block_kit_problems(body) == []
    header, section, context, actions = body["blocks"]
    assert header["type"] == "header" and header["text"]["text"].startswith("Expires in")
    assert section["text"]["text"] == webhook_formats.slack_escaped(HOSTILE)
    fields = [field["text"] for field in section["fields"]]
    assert fields[0] == "*Agent*\nagent " + webhook_formats.slack_escaped(HOSTILE)
    assert fields[1] == "*Amount*\n49.90 EUR" and fields[2].startswith("*Expires*\n20")
    assert context["type"] == "context"
    assert list(buttons(actions)) == ["Approve", "Reject", "Open"]
    assert buttons(actions)["Open"] == f"{SITE}/holds/{hold.pk}/"
    assert buttons(actions)["Approve"] == body["actions"]["approve"]  # the same links as the structured field
    # what receivers other than Slack read stays as it was, text the fallback
    assert body["text"].startswith("Expires in") and body["hold"]["hold_id"] == "h_12"
    assert body["hold"]["question"] == HOSTILE and body["event"] == "expiring_soon"


@pytest.mark.django_db
def test_agent_text_in_block_kit_makes_no_mention_link_or_auto_link(webhook_receiver, samples, site):
    webhook(webhook_receiver, "slack")
    notify.expiring_soon([hostile(samples["h_12"])], timezone.now())

    body = received(webhook_receiver, "slack")

    texts = mrkdwn_texts(body)
    assert texts and all("<" not in text and ">" not in text for text in texts)
    assert any("&lt;!channel&gt; &lt;https://evil.example|click&gt; @here" in text for text in texts)
    assert block_kit_problems(body) == []  # every mrkdwn verbatim too: @here and the bare URL stay words


@pytest.mark.django_db
def test_a_4000_character_question_is_cut_with_an_ellipsis_inside_every_limit(webhook_receiver, samples, site):
    webhook(webhook_receiver, "slack")
    webhook(webhook_receiver, "teams")
    notify.expiring_soon([hostile(samples["h_12"], LONG_QUESTION)], timezone.now())

    slack, teams = received(webhook_receiver, "slack"), received(webhook_receiver, "teams")

    assert block_kit_problems(slack) == []
    question = slack["blocks"][1]["text"]["text"]
    assert question.startswith("Refund &lt;!channel&gt; &amp; xxx") and question.endswith("x…")
    assert len(question) == 3000 and slack["hold"]["question"] == LONG_QUESTION  # the structured field is whole
    runs = card_texts(teams)["TextRun.text"]
    assert any(run.startswith("Refund <!channel> & xxx") and run.endswith("x…") and len(run) == 3000 for run in runs)
    assert len(json.dumps(teams).encode()) < 28 * 1024  # Teams' message size


@pytest.mark.django_db
def test_a_hold_that_cannot_be_approved_gets_no_approve_button_in_slack_or_teams(webhook_receiver, samples, site):
    Hold.objects.filter(pk=samples["h_12"].pk).update(actions=["reject"])
    webhook(webhook_receiver, "slack")
    webhook(webhook_receiver, "teams")
    notify.expiring_soon([Hold.objects.get(pk=samples["h_12"].pk)], timezone.now())

    slack, teams = received(webhook_receiver, "slack"), received(webhook_receiver, "teams")

    assert list(buttons(slack["blocks"][-1])) == ["Reject", "Open"]
    assert [action["title"] for action in teams["attachments"][0]["content"]["actions"]] == ["Reject", "Open"]


@pytest.mark.django_db
def test_a_teams_webhook_gets_an_adaptive_card_with_agent_text_only_in_text_runs(webhook_receiver, samples, site):
    hold = hostile(samples["h_12"])
    webhook(webhook_receiver, "teams")
    notify.expiring_soon([hold], timezone.now())

    body = received(webhook_receiver, "teams")

    assert body["type"] == "message" and len(body["attachments"]) == 1
    attachment = body["attachments"][0]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    card = attachment["content"]
    assert card["type"] == "AdaptiveCard" and card["version"] == "1.4"
    texts = card_texts(card)
    agent_written = [text for texts_of in texts.values() for text in texts_of if "evil.example" in text]
    assert agent_written and all(text in texts["TextRun.text"] for text in agent_written)
    assert HOSTILE in texts["TextRun.text"] and f"agent {HOSTILE}" in texts["TextRun.text"]
    assert "49.90 EUR" in texts["TextRun.text"]
    actions = {action["title"]: action for action in card["actions"]}
    assert list(actions) == ["Approve", "Reject", "Open"]
    assert all(action["type"] == "Action.OpenUrl" for action in actions.values())
    assert actions["Open"]["url"] == f"{SITE}/holds/{hold.pk}/"
    assert "event" not in body  # a Teams body is the card message alone


@pytest.mark.django_db
def test_a_json_webhook_gets_the_structured_fields_alone(webhook_receiver, samples, site):
    webhook(webhook_receiver, "json")
    notify.expiring_soon([samples["h_12"]], timezone.now())

    body = received(webhook_receiver, "json")

    assert "blocks" not in body and body["hold"]["hold_id"] == "h_12" and body["actions"]["reject"]


@pytest.mark.django_db
def test_a_digest_of_30_holds_lists_10_with_their_buttons_and_links_to_the_rest(
    webhook_receiver, platform_state, platform_client, site
):
    platform_state.generate("default", 30)
    sync.sync_env(platform_client, "default")
    holds = list(Hold.objects.order_by("pk"))
    Hold.objects.filter(pk=holds[0].pk).update(agent=HOSTILE)
    webhook(webhook_receiver, "slack", events=["new_holds"])
    webhook(webhook_receiver, "teams", events=["new_holds"])
    notify.new_holds_digest(list(Hold.objects.order_by("pk")), timezone.now())

    slack, teams = received(webhook_receiver, "slack"), received(webhook_receiver, "teams")

    assert len(holds) == 30 and block_kit_problems(slack) == []
    header, *listed, more, to_queue = slack["blocks"]
    assert header["text"]["text"] == "30 new holds to review"
    assert [block["type"] for block in listed] == ["section", "actions"] * 10
    assert [buttons(block)["Open"] for block in listed[1::2]] == [f"{SITE}/holds/{hold.pk}/" for hold in holds[:10]]
    assert all("Reject" in buttons(block) for block in listed[1::2])
    assert "*Agent*\n" + webhook_formats.slack_escaped(HOSTILE) in mrkdwn_texts(slack)
    assert more["elements"][0]["text"] == "and 20 more in Review Queue"
    assert buttons(to_queue) == {"Open the queue": SITE + reverse("queue")}
    assert len(slack["holds"]) == 30  # the structured listing keeps every hold

    card = teams["attachments"][0]["content"]
    action_sets = [element for element in card["body"] if element["type"] == "ActionSet"]
    assert len(action_sets) == 10
    assert [action["url"] for action in action_sets[0]["actions"]][-1] == f"{SITE}/holds/{holds[0].pk}/"
    assert "and 20 more in Review Queue" in card_texts(card)["TextBlock.text"]
    assert [(action["title"], action["url"]) for action in card["actions"]] == [
        ("Open the queue", SITE + reverse("queue"))
    ]
    assert HOSTILE in card_texts(card)["TextRun.text"]
    assert len(json.dumps(teams).encode()) < 28 * 1024


# The builders over any text


# Any text, and long runs of what grows when escaped or counts twice, around the limits
shown_text = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=200),
    st.builds(
        lambda text, times: text * times, st.sampled_from(["&", "<!channel>", "x", "😀", "a&"]), st.integers(1, 4100)
    ),
)


@hypothesis_settings(max_examples=60, deadline=None)
@given(
    title=shown_text,
    body=shown_text,
    question=shown_text,
    agent=shown_text,
    amounts=st.lists(st.text(max_size=80), max_size=5),
    count=st.integers(0, 40),
)
def test_block_kit_and_the_card_stay_inside_the_limits_with_agent_text_inert_whatever_the_text(
    title, body, question, agent, amounts, count
):
    links = ActionLinks(f"{SITE}/holds/1/", f"{SITE}/a/{'x' * 200}", f"{SITE}/r/{'y' * 200}")
    hold = webhook_formats.HoldShown(question, agent, tuple(amounts), "2026-12-02 10:00 UTC", links)
    one = webhook_formats.Announcement(title, body, f"{SITE}/holds/1/", hold=hold)
    digest = webhook_formats.Announcement(title, body, f"{SITE}/", listed=(hold,) * count)

    for announcement in (one, digest):
        assert block_kit_problems({"blocks": webhook_formats.block_kit(announcement)}) == []
        texts = card_texts(webhook_formats.adaptive_card(announcement))
        assert all(utf16(text) <= 3000 for text in texts["TextRun.text"])
        # anything but a TextRun carries only our own words: agent text is never parsed as Markdown
        assert all(re.fullmatch(r"and \d+ more in Review Queue", text) for text in texts.get("TextBlock.text", []))
        assert set(texts["Action.OpenUrl.title"]) <= {"Approve", "Reject", "Open", "Open the queue"}


# The format: stored, defaulted, edited in the admin


@pytest.mark.django_db(transaction=True)
def test_webhooks_added_before_formats_existed_are_slack_and_keep_everything_else():
    try:
        old = migrate(back_to(("notifications", "0006_away")))
        old.get_model("notifications", "WebhookChannel").objects.create(
            name="ops", url="https://hooks.example.com/x", secret=SECRET, events=["expired"]
        )
        migrate(latest())

        hook = WebhookChannel.objects.get(name="ops")
        assert (hook.format, hook.secret, hook.events) == ("slack", SECRET, ["expired"])
    finally:
        migrate(latest())


@pytest.mark.django_db
def test_a_webhook_row_the_previous_release_inserts_without_a_format_is_slack():
    with connection.cursor() as cursor:  # as the previous release inserts during a rolling deploy
        cursor.execute(
            "INSERT INTO holds_webhookchannel (name, url, secret, events, active, last_error, failing) "
            "VALUES ('old', 'https://hooks.example.com/x', 's', '[]', true, '', false)"
        )

    assert WebhookChannel.objects.get(name="old").format == "slack"
    assert WebhookChannel(name="new").format == "slack"


@pytest.mark.django_db
def test_an_admin_sets_a_webhooks_format_on_its_change_form_and_an_unknown_one_is_a_field_error(admin_client):
    hook = WebhookChannel.objects.create(name="chat", url="https://8.8.8.8/hook", secret=SECRET, events=["expired"])
    change = reverse("admin:notifications_webhookchannel_change", args=[hook.pk])
    form = {"name": "chat", "url": "https://8.8.8.8/hook", "secret": "", "events": ["expired"], "active": "on"}

    page = admin_client.get(change).content.decode()
    unknown = admin_client.post(change, form | {"format": "xml"})
    saved = admin_client.post(change, form | {"format": "teams"})

    assert 'name="format"' in page and "Microsoft Teams (Adaptive Card)" in page
    assert unknown.status_code == 200 and "format" in unknown.context["adminform"].form.errors
    assert saved.status_code == 302
    hook.refresh_from_db()
    assert hook.format == "teams" and hook.secret == SECRET
