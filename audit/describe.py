"""One line saying what an audit event was, for the list, the timeline and the export.

Plain text only: the templates escape it, and the payload's text (written by
agents, reviewers or whoever typed a username) is never trusted as markup.
Payloads are read as their builders (``audit.events``) write them: a key a builder always
writes is read as such, one it writes only sometimes with a default. A row written before its
kind's builder wrote a key reads as its message, rather than failing the page.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from django.contrib.auth import get_user_model

from audit.models import AuditEvent, EventKind
from audit.payloads import channel_of, item_id, items_of
from holds.models import ACTION_WORDS, DecisionChannel
from people import naming
from reviewqueue.agent_json import ABSENT, same_json
from reviewqueue.agent_numbers import grouped, is_amount_key
from reviewqueue.showing import display, on_one_line, shortened

LIMIT = 200
EDIT_LIMIT = 80  # characters of one value in an edit shown in the list; the decision page shows it whole
USER_RECIPIENT = "user:"
CHANNELLED = (
    EventKind.DECISION_SUBMITTED,
    EventKind.APPROVAL_GIVEN,
)  # events whose payload's ``channel`` is a DecisionChannel


@dataclasses.dataclass(frozen=True)
class Edit:
    """One value a reviewer changed, as the list shows it: ``amount 49.90 → 20.00``."""

    item_id: str
    key: str
    before: str
    after: str


def summary(event: AuditEvent, names: Mapping[str, str] | None = None) -> str:
    """The event in one line; ``names`` turns a notification's recipient key ("user:4") into the person's name."""
    payload = event.payload or {}
    if event.kind in (EventKind.APPROVAL_GIVEN, EventKind.APPROVAL_WITHDRAWN):
        payload = {**payload, "approver": event.actor_label}
    try:
        if names and event.kind in (EventKind.NOTIFICATION_SENT, EventKind.NOTIFICATION_FAILED):
            payload = {**payload, "recipient": names.get(str(payload["recipient"]), payload["recipient"])}
        text = _summaries.get(event.kind, _message)(payload)
    except (KeyError, TypeError):  # written before its builder wrote that key
        text = _message(payload)
    # Where a decision or an approval came from, unless the usual way (the page), which a decision's page says.
    if event.kind in CHANNELLED and (channel := channel_of(payload)) and payload["channel"] != DecisionChannel.PAGE:
        text = f"{text} (through the {channel})"
    return on_one_line(str(text), LIMIT)


@dataclasses.dataclass(frozen=True)
class Row:
    """An event as a list or timeline shows it."""

    event: AuditEvent
    summary: str
    edits: list[Edit]
    whole_note: str = ""  # a note's text, when the summary had to cut it short: the timeline shows it whole


def _whole_note(event: AuditEvent, summary_text: str) -> str:
    if event.kind != EventKind.NOTE_ADDED or not summary_text.endswith("…"):
        return ""
    return str((event.payload or {}).get("text") or "")  # read for every row of a page: an old one must not fail it


def rows(events) -> list[Row]:
    """Each event with its summary and edits, the notifications' recipients named in one query for all."""
    events = list(events)
    names = recipient_names(events)
    found = []
    for event in events:
        text = summary(event, names)
        found.append(Row(event, text, edits(event), _whole_note(event, text)))
    return found


def decision_channel(rows: list[Row]) -> str:
    """Where the decision of these rows came from ("email link"), read from its ``decision_submitted`` event."""
    submitted = (row.event for row in rows if row.event.kind == EventKind.DECISION_SUBMITTED)
    return next((channel_of(event.payload or {}) for event in submitted), "")


def recipient_names(events: list[AuditEvent]) -> dict[str, str]:
    """The people notification events were addressed to, named by their recipient key ("user:4"), in one query."""
    user_ids = recipient_user_ids(events)
    users = get_user_model().objects.filter(pk__in=user_ids) if user_ids else []
    return {f"{USER_RECIPIENT}{user.pk}": naming.name(user) for user in users}


def recipient_user_ids(events) -> set[int]:
    """The ids of the users that notification events were addressed to, to name them in one query."""
    ids = set()
    for event in events:
        if event.kind in (EventKind.NOTIFICATION_SENT, EventKind.NOTIFICATION_FAILED):
            recipient = str((event.payload or {}).get("recipient") or "")
            number = recipient.removeprefix(USER_RECIPIENT)
            if recipient.startswith(USER_RECIPIENT) and number.isascii() and number.isdigit() and len(number) < 19:
                ids.add(int(number))
    return ids


def edits(event: AuditEvent) -> list[Edit]:
    """The values a submitted (or withdrawn) decision changed, key by key, from the event's own payload."""
    if event.kind not in (EventKind.DECISION_SUBMITTED, EventKind.WITHDRAWN):
        return []
    found = []
    for item in items_of(event.payload or {}):
        found += [
            Edit(item_id(item), key, shortened(display(before), EDIT_LIMIT), shortened(display(after), EDIT_LIMIT))
            for key, before, after in _changes(item)
        ]
    return found


def _changes(item: dict) -> list[tuple[str, object, object]]:
    """An edited item's changed values as (key, before, after); none for an approve or a reject."""
    if item.get("action") != "edit":
        return []
    original, decided = item.get("original_data"), item.get("data")
    if isinstance(original, dict) and isinstance(decided, dict):
        keys = [*original, *(key for key in decided if key not in original)]
        pairs = [(key, original.get(key, ABSENT), decided.get(key, ABSENT)) for key in keys]
    else:
        pairs = [("", original, decided)]
    return [
        (display(key) if key else "value", before, after)
        for key, before, after in pairs
        if not same_json(before, after)
    ]


def _message(payload: dict) -> str:
    return str(payload.get("message") or "")


def _hold_seen(payload: dict) -> str:
    items = items_of(payload)
    question = payload["question"] or ""
    return f"{question} ({len(items)} item{'s' if len(items) != 1 else ''})" if items else question


def _taken_over(payload: dict) -> str:
    return f"from {payload['from']}" if payload["from"] else ""


def _submitted(payload: dict) -> str:
    said = ", ".join(f"{_action_word(item.get('action'))} {item_id(item)}" for item in items_of(payload))
    return said + _checked(payload)


def _checked(payload: dict) -> str:
    """ ", possible duplicate of h_13, h_14 checked" when the decision or approval approved a possible duplicate."""
    checked = payload.get("duplicates_checked")
    if not isinstance(checked, dict):
        return ""
    return f", possible duplicate of {_duplicates(checked.get('holds') or [], checked.get('more') or 0)} checked"


def _duplicates(named: list, more: int) -> str:
    """ "h_13, h_14 and 1 more outside the reviewer's teams"."""
    words = ", ".join(str(one) for one in named) or "other holds"
    return f"{words} and {more} more outside the reviewer's teams" if more else words


def _held_for_people(payload: dict) -> str:
    """ "‘small refunds’ left it to people: possible duplicate of h_13, h_14"."""
    name = f"‘{payload['policy']}’" if payload["policy"] else "A policy"
    reason = payload["reason"]
    if reason == "possible_duplicate":
        reason = f"possible duplicate of {_duplicates(payload['duplicates'], 0)}"
    return f"{name} ({payload['path']}) left it to people: {reason}"


def _action_word(action) -> str:
    return ACTION_WORDS.get(str(action), str(action)) if action else "?"


def _approval(payload: dict) -> str:
    """ "alice gave approval 1 of 2 under “Large refunds”: amount 1,200.00 → 1,000.00", a restart said as such."""
    if payload["restarted"]:
        head = (
            f"{payload['approver']} changed the earlier approvers' decision, starting round "
            f"{payload['round']} with {_place(payload)}{_under(payload)}"
        )
    else:
        head = f"{payload['approver']} gave {_place(payload)}{_under(payload)}"
    return _with_items(head, payload) + _checked(payload)


def _place(payload: dict) -> str:
    stage = f", {payload['stage']}" if payload.get("stage") else ""
    return f"approval {payload['position']} of {payload['required']}{stage}"


def _stage_completed(payload: dict) -> str:
    """ "stage 2 of 3 (Finance) complete: 2 of 2, by bob, carol"."""
    return (
        f"stage {payload['stage']} of {payload['stages']} ({payload['who']}) complete: {payload['needs']} of "
        f"{payload['needs']}, by {', '.join(payload['approvers'])}"
    )


def _under(payload: dict) -> str:
    why = f" ({payload['why']})" if payload.get("why") else ""
    return f" under “{payload['policy']}”{why}" if payload["policy"] else ""


def _with_items(head: str, payload: dict) -> str:
    """``head``, then what the approval did to its items, if anything."""
    said = approved(items_of(payload))
    return f"{head}: {said}" if said else head


def approved(items: list[dict]) -> str:
    """What an approval did to its items: "amount 1,200.00 → 1,000.00", or "Approve A-1001, Reject A-1002"."""
    return ", ".join(_approved_item(item, named=len(items) > 1) for item in items if isinstance(item, dict))


def _approved_item(item: dict, named: bool) -> str:
    """What one approval did to one item: its changes (amounts grouped as 1,200.00), or the action word and the id."""
    changes = [f"{key} {_amount(key, before)} → {_amount(key, after)}" for key, before, after in _changes(item)]
    if not changes:
        return f"{_action_word(item.get('action'))} {item_id(item)}"
    return f"{item_id(item)}: {', '.join(changes)}" if named else ", ".join(changes)


def _amount(key: str, value) -> str:
    return (grouped(value) if is_amount_key(key) else None) or display(value)


def _escalated(payload: dict) -> str:
    reason = f": {payload['reason']}" if payload["reason"] else ""
    told = payload["told"]
    if told:
        reason += f" — told {', '.join(str(name) for name in told)}"
    else:
        reason += " — nobody in that group can see this hold"
    return f"to {payload['group'] or '?'}{_under(payload)}{reason}"


def _approval_withdrawn(payload: dict) -> str:
    """ "alice took back approval 1 of 2 under “Large refunds” before anyone built on it: amount 1,200.00 →
    1,000.00"."""
    head = (
        f"{payload['approver']} took back {_place(payload)}{_under(payload)} "
        "before anyone built on it; nothing was sent"
    )
    return _with_items(head, payload)


def _withdrawn(payload: dict) -> str:
    undone = _submitted(payload)
    return f"undone before sending, nothing reached the platform: {undone}" if undone else "undone before sending"


def _note(payload: dict) -> str:
    return f" (note: {payload['note']})" if payload["note"] else ""


def _assigned(payload: dict) -> str:
    """ "to bob (note: can you check?)", "to Finance leads, a group"."""
    group = ", a group" if payload["assignee_kind"] == "group" else ""
    return f"to {payload['assignee'] or '?'}{group}{_note(payload)}"


def _reassigned(payload: dict) -> str:
    return f"from {payload['from'] or '?'} {_assigned(payload)}"


def _unassigned(payload: dict) -> str:
    return f"from {payload['from'] or '?'}{_note(payload)}"


def _note_added(payload: dict) -> str:
    """ "“Check the order history, @bob” — told bob"."""
    told = payload["told"]
    named = f" — told {', '.join(str(name) for name in told)}" if told else ""
    return f"“{payload['text']}”{named}"


def _delivery(payload: dict) -> str:
    attempt = payload["attempt"]
    outcome = payload["outcome"] or ""
    message = payload["message"] or ""
    head = f"attempt {attempt}: {outcome}" if attempt else outcome
    return f"{head}: {message}" if message else head


def _platform_said(payload: dict) -> str:
    outcome = str(payload["outcome"] or "").replace("_", " ")
    message = payload["message"] or ""
    return f"{outcome}: {message}" if outcome and message else outcome or message


def _closed(payload: dict) -> str:
    decided_by = payload.get("decided_by") or ""  # an expiry here says nobody
    return f"by {decided_by}" if decided_by else _message(payload)


def _notification(payload: dict) -> str:
    parts = [payload["channel"], payload["recipient"], payload["title"], payload["error"]]
    return " · ".join(str(part) for part in parts if part) or _message(payload)


def _signed_in(payload: dict) -> str:
    return f"from {payload['ip']}" if payload.get("ip") else ""


def _sign_in_failed(payload: dict) -> str:
    origin = f" from {payload['ip']}" if payload.get("ip") else ""
    return f"as {payload.get('username') or '(no username)'}{origin}"


def _locked_out(payload: dict) -> str:
    return f"{_sign_in_failed(payload)} after {payload['failures']} failed sign-ins"


def _admin_change(payload: dict) -> str:
    head = f"{payload['action']} {payload['model']} {payload['object']}".strip()
    message = payload["message"] or ""
    return f"{head}: {message}" if message else head


def _token(payload: dict) -> str:
    """ "“nightly export” (rq_AbCd…, read, audit) of audrey"."""
    named = [f"{payload['hint']}…"] if payload["hint"] else []
    named += [str(scope) for scope in payload["scopes"]]
    listed = f" ({', '.join(named)})" if named else ""
    owner = f" of {payload['owner']}" if payload["owner"] else ""
    return f"“{payload['name']}”{listed}{owner}"


_summaries = {
    EventKind.HOLD_SEEN: _hold_seen,
    EventKind.TAKEN_OVER: _taken_over,
    EventKind.ASSIGNED: _assigned,
    EventKind.REASSIGNED: _reassigned,
    EventKind.UNASSIGNED: _unassigned,
    EventKind.NOTE_ADDED: _note_added,
    EventKind.DECISION_SUBMITTED: _submitted,
    EventKind.HELD_FOR_PEOPLE: _held_for_people,
    EventKind.APPROVAL_GIVEN: _approval,
    EventKind.ESCALATED: _escalated,
    EventKind.WITHDRAWN: _withdrawn,
    EventKind.APPROVAL_WITHDRAWN: _approval_withdrawn,
    EventKind.STAGE_COMPLETED: _stage_completed,
    EventKind.DELIVERY_ATTEMPT: _delivery,
    EventKind.APPLIED: _platform_said,
    EventKind.NOT_APPLIED: _platform_said,
    EventKind.EXPIRED: _closed,
    EventKind.DECIDED_ELSEWHERE: _closed,
    EventKind.NOTIFICATION_SENT: _notification,
    EventKind.NOTIFICATION_FAILED: _notification,
    EventKind.SIGNED_IN: _signed_in,
    EventKind.SIGN_IN_FAILED: _sign_in_failed,
    EventKind.LOCKED_OUT: _locked_out,
    EventKind.ROLE_CHANGED: _admin_change,
    EventKind.SETTING_CHANGED: _admin_change,
    EventKind.TOKEN_CREATED: _token,
    EventKind.TOKEN_FIRST_USED: _token,
    EventKind.TOKEN_REVOKED: _token,
}
