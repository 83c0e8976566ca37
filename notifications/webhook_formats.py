"""The shapes a webhook's message takes: Slack's Block Kit and Microsoft Teams' Adaptive Card.

Pure functions from what a message says (``Announcement``: its title, what happened, and each
hold it is about with its facts and one-tap links) to the JSON a receiver takes; ``channels``
gathers the announcement and picks the shape by the webhook's ``format``.

Agent-written text (the question, the agent's name, amounts, and the title and body that quote
them) is untrusted and is only ever shown as text:

- In Block Kit, mrkdwn is Slack's markup, so agent text is escaped (``slack_escaped``: ``&``,
  ``<``, ``>``), which makes ``<!channel>`` and ``<https://evil.example|click>`` inert; and every
  mrkdwn object is ``verbatim``, so Slack does not auto-link the URLs, #channels or @mentions
  left in plain words. Slack's own bold, italics and code still apply to the words, and only to
  their look. plain_text (the header, the buttons) is never parsed.
- In an Adaptive Card, a TextBlock parses a Markdown subset (links among it) and a Fact's title
  and value do too, so agent text goes only in a RichTextBlock's TextRuns, which parse none.

Both stay inside their documented limits however long the agent's text: Block Kit's 3,000
characters per text object (2,000 per section field, 150 per header, 75 per button), 50 blocks
and 25 elements per actions block; a card about one hold cuts its text at the same lengths. Text
is cut before it is escaped, never inside an entity, and ends with an ellipsis where it was cut.
A digest lists its first ``DIGEST_LISTED`` holds, each with its buttons, and links to the rest.

With the Slack app on, a message about one hold carries interactive Approve and Reject buttons (``ChatButtons``:
an ``action_id`` and a signed ``value``, pressed inside Slack; an Undo one in the undo window) instead of URL
buttons; Open stays a URL button, and a digest keeps URL buttons, one message serving many holds.
"""

from __future__ import annotations

import dataclasses

from notifications.hold_links import ActionLinks, ChatButtons

DIGEST_LISTED = 10
TEXT_LIMIT = 3000  # a Block Kit text object, and a card's text
FIELD_LIMIT = 2000  # a section's field
HEADER_LIMIT = 150
ELLIPSIS = "…"
ADAPTIVE_CARD = "application/vnd.microsoft.card.adaptive"
ADAPTIVE_CARD_VERSION = "1.4"  # what Teams renders from a webhook


@dataclasses.dataclass(frozen=True)
class HoldShown:
    """One hold as a message shows it: its agent's words, our expiry wording, and its links."""

    question: str
    agent: str
    amounts: tuple[str, ...]
    expires: str
    links: ActionLinks
    buttons: ChatButtons | None = None  # interactive buttons, for Slack; instead of the links' Approve and Reject


@dataclasses.dataclass(frozen=True)
class Announcement:
    """What one webhook message says: about one ``hold``, with ``body`` saying what happened; or, a digest, the
    holds it ``listed`` (its body is that list)."""

    title: str
    body: str
    link: str
    hold: HoldShown | None = None
    listed: tuple[HoldShown, ...] = ()


def slack_escaped(text: str) -> str:
    """Agent-written text as Slack shows it literally: no links, mentions or @channel pings of its own."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def size(text: str) -> int:
    """Length as counted in UTF-16 code units, never fewer than characters: an emoji outside the basic plane
    counts twice, so no way of counting by the receiver makes a text longer than its limit."""
    return len(text.encode("utf-16-le")) // 2


def cut(text: str, limit: int, escape=lambda piece: piece) -> str:
    """``text`` escaped by ``escape``, within ``limit``; cut between characters, so never inside an entity, with an
    ellipsis where it was cut."""
    whole = escape(text)
    if size(whole) <= limit:
        return whole
    kept, room = [], limit - size(ELLIPSIS)
    for char in text:
        piece = escape(char)
        room -= size(piece)
        if room < 0:
            break
        kept.append(piece)
    return "".join(kept) + ELLIPSIS


# Slack: Block Kit


def block_kit(announcement: Announcement) -> list[dict]:
    """The message's blocks: a header; the hold's section, what happened as context, and its buttons; or a
    digest's first ``DIGEST_LISTED`` holds, each a section and its buttons, then how many more and the queue."""
    title = cut(_or(announcement.title, "Review Queue"), HEADER_LIMIT)
    blocks = [{"type": "header", "text": _plain(title)}]
    if announcement.listed:
        for hold in announcement.listed[:DIGEST_LISTED]:
            blocks += [_hold_section(hold), _buttons(hold.links)]
        rest = len(announcement.listed) - DIGEST_LISTED
        if rest > 0:
            blocks += [
                {"type": "context", "elements": [_mrkdwn(f"and {rest} more in Review Queue")]},
                {"type": "actions", "elements": [_button("Open the queue", announcement.link)]},
            ]
        return blocks
    hold = announcement.hold
    if hold:
        blocks.append(_hold_section(hold))
    if announcement.body.strip():
        blocks.append({"type": "context", "elements": [_mrkdwn(cut(announcement.body, TEXT_LIMIT, slack_escaped))]})
    blocks.append(
        _buttons(hold.links, hold.buttons)
        if hold
        else {"type": "actions", "elements": [_button("Open", announcement.link)]}
    )
    return blocks


def _facts(hold: HoldShown) -> list[tuple[str, str]]:
    """The hold's facts beside its question, as (label, value), leaving out those it has none of."""
    facts = [("Agent", hold.agent), ("Amount", ", ".join(hold.amounts)), ("Expires", hold.expires)]
    facts.append(("Caution", hold.links.warning))  # "Possible duplicate of h_13": its Approve opens the hold
    return [(label, value) for label, value in facts if value.strip()]


def _question(hold: HoldShown) -> str:
    return _or(hold.question, "(no question)")


def _hold_section(hold: HoldShown) -> dict:
    section = {"type": "section", "text": _mrkdwn(cut(_question(hold), TEXT_LIMIT, slack_escaped))}
    fields = [_mrkdwn(_field(label, value)) for label, value in _facts(hold)]
    return {**section, "fields": fields} if fields else section


def _field(label: str, value: str) -> str:
    shown = f"*{label}*\n"
    return shown + cut(value, FIELD_LIMIT - size(shown), slack_escaped)


def _buttons(links: ActionLinks, pressable: ChatButtons | None = None) -> dict:
    """Approve and Reject as interactive buttons where ``pressable`` is given, else as the links; then Open."""
    buttons = []
    if pressable is not None:
        shown = [("Approve", pressable.approve, "primary"), ("Reject", pressable.reject, "danger")]
        shown.append(("Undo", pressable.undo, ""))
        if links.warning and links.approve and not pressable.approve:  # a possible duplicate: Approve opens it
            buttons.append(_button("Approve", links.approve, style="primary"))
        buttons += [_pressed(words, value, style) for words, value, style in shown if value]
    else:
        if links.approve:
            buttons.append(_button("Approve", links.approve, style="primary"))
        if links.reject:
            buttons.append(_button("Reject", links.reject, style="danger"))
    buttons.append(_button("Open", links.open))
    return {"type": "actions", "elements": buttons}


def _pressed(words: str, value: str, style: str = "") -> dict:
    """An interactive button: Slack posts its ``action_id`` and ``value`` to the app's request URL."""
    button = {"type": "button", "text": _plain(words), "action_id": words.lower(), "value": value}
    return {**button, "style": style} if style else button


def _button(words: str, url: str, style: str = "") -> dict:
    button = {"type": "button", "text": _plain(words), "url": url, "action_id": words.lower().replace(" ", "_")}
    return {**button, "style": style} if style else button


def _or(text: str, instead: str) -> str:
    """``text``, or ``instead`` where it is blank: Slack refuses a blank text object, and a card shows nothing."""
    return text if text.strip() else instead


def _plain(text: str) -> dict:
    return {"type": "plain_text", "text": text, "emoji": False}


def _mrkdwn(escaped: str) -> dict:
    """mrkdwn of text already escaped; verbatim, so Slack auto-links nothing in it."""
    return {"type": "mrkdwn", "text": escaped, "verbatim": True}


# Microsoft Teams: an Adaptive Card


def adaptive_card(announcement: Announcement) -> dict:
    """A Teams message carrying one Adaptive Card: the title, the hold's facts as TextRuns and its links as OpenUrl
    actions; or a digest's first ``DIGEST_LISTED`` holds, each with its own actions, then the queue."""
    title = cut(_or(announcement.title, "Review Queue"), HEADER_LIMIT)
    body = [_runs([_run(title, weight="Bolder", size="Medium")])]
    hold = announcement.hold
    if announcement.listed:
        for listed in announcement.listed[:DIGEST_LISTED]:
            body += [*_hold_facts(listed), {"type": "ActionSet", "actions": _open_urls(listed.links)}]
        rest = len(announcement.listed) - DIGEST_LISTED
        if rest > 0:
            body.append({"type": "TextBlock", "text": f"and {rest} more in Review Queue", "wrap": True})
        actions = [_open_url("Open the queue", announcement.link)]
    else:
        body += _hold_facts(hold) if hold else []
        if announcement.body.strip():
            body.append(_runs([_run(cut(announcement.body, TEXT_LIMIT), isSubtle=True)]))
        actions = _open_urls(hold.links) if hold else [_open_url("Open", announcement.link)]
    card = {"type": "AdaptiveCard", "version": ADAPTIVE_CARD_VERSION, "body": body, "actions": actions}
    return {"type": "message", "attachments": [{"contentType": ADAPTIVE_CARD, "contentUrl": None, "content": card}]}


def _hold_facts(hold: HoldShown) -> list[dict]:
    return [
        _runs([_run(cut(_question(hold), TEXT_LIMIT))], separator=True),
        *(_runs([_run(f"{label}: ", weight="Bolder"), _run(cut(value, FIELD_LIMIT))]) for label, value in _facts(hold)),
    ]


def _open_urls(links: ActionLinks) -> list[dict]:
    actions = []
    if links.approve:
        actions.append(_open_url("Approve", links.approve, style="positive"))
    if links.reject:
        actions.append(_open_url("Reject", links.reject, style="destructive"))
    return [*actions, _open_url("Open", links.open)]


def _open_url(title: str, url: str, style: str = "") -> dict:
    action = {"type": "Action.OpenUrl", "title": title, "url": url}
    return {**action, "style": style} if style else action


def _runs(inlines: list[dict], separator: bool = False) -> dict:
    block = {"type": "RichTextBlock", "inlines": inlines}
    return {**block, "separator": True} if separator else block


def _run(text: str, **style) -> dict:
    """A TextRun: shown as written, Markdown not parsed (unlike a TextBlock's text)."""
    return {"type": "TextRun", "text": text, **style}
