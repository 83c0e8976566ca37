"""What an event's payload holds, and the indexed columns copied out of it.

Each kind's builder in ``audit.events`` writes its payload; these keys are the ones the audit pages,
the filters and the export read (any other key is kept and shown as is):

=====================  ==============================================================
kind                   payload
=====================  ==============================================================
hold_seen              ``question``, ``items``: ``[{"id", "title", "data"}]`` (``hold_items``)
claimed, released      nothing needed
taken_over             ``from``: the username whose claim was taken
assigned, reassigned   ``assignee`` (a username or a group's name), ``assignee_kind`` ("person" or
                       "group"), ``note``; reassigned also ``from``, the previous assignee
unassigned             ``from``: the assignee whose assignment ended, ``note``
note_added             ``note`` (its pk), ``text``, ``told``: the usernames its @mentions told
decision_submitted     ``items``: ``[{"id", "action", "original_data", "data", "comment"}]``
                       (``decision_items``); for a decision a round of approvals made,
                       ``approvals``: ``[{"approval", "approver", "at"}]`` in order;
                       ``channel``: where it came from (``holds.models.DecisionChannel``:
                       page, bulk, email_link, chat_link, policy, remembered, api, slack; absent before
                       it was recorded); ``target_minutes``: the hold's policy's target
                       (``decide_within_minutes``) when it had one; ``policy`` for a policy's
                       own: ``name``, ``last_changed_by``, ``kind``, and ``remembered_by`` (the
                       owner's username) for a reviewer's remembered approval
withdrawn              ``items`` as for decision_submitted: what was undone, never sent;
                       ``approval_withdrawn``: the pk of the approval the undo took back
approval_given         ``approval`` (its pk), ``policy``, ``round``, ``position``, ``required``,
                       ``restarted`` (it changed the earlier round's decision), ``items`` and
                       ``channel`` as for decision_submitted; ``why``: why the policy asks for
                       that many people (absent before it was recorded)
escalated              ``escalation`` (its pk), ``policy``, ``group``, ``reason``, ``told``: the
                       usernames of the group's members who could see the hold and were told
delivery_attempt       ``attempt`` (1, 2 …), ``outcome`` ("applied", "retry" or the final
                       outcome's code), ``message``
applied, not_applied   ``outcome`` (``Decision.Outcome``), ``message`` (the platform's,
                       or who decided instead)
expired,               ``decided_by``, ``decided_at`` when the platform says, ``message``
decided_elsewhere
notification_sent,     ``channel``, ``recipient``, ``title``, ``error`` (failed only)
notification_failed
token_created,         ``token`` (its pk), ``name``, ``hint`` (its first characters), ``scopes``,
token_first_used,      ``owner`` (the username it acts as), ``expires_at``; the actor is who
token_revoked          created, used or revoked it (none: the ``createtoken`` command)
=====================  ==============================================================

``items`` become the item-id filter, the item-action filter and the search
inside item data; ``outcome`` becomes the outcome filter.
"""

from __future__ import annotations

import json

from django.core.serializers.json import DjangoJSONEncoder

from holds.models import DecisionChannel
from reviewqueue.agent_json import may_need_storable, scalars, storable

ITEM_ACTIONS = ("approve", "edit", "reject")


def cleaned(payload: dict | None) -> dict:
    """The payload exactly as the database will give it back, so the hash made now still holds when read.

    Decimals, datetimes and UUIDs become strings (an amount "49.90" stays "49.90").
    Postgres' jsonb cannot store NUL or lone surrogates, and prints a float such as
    1e16 as the integer 10000000000000000 and -0.0 as 0.0: those are stored as jsonb
    would return them, instead of failing the caller's transaction.
    """
    text = json.dumps(payload or {}, cls=DjangoJSONEncoder)
    value = json.loads(text)
    return storable(value) if may_need_storable(text) else value


def items_of(payload: dict) -> list[dict]:
    items = payload.get("items")
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def item_id(item: dict) -> str:
    value = item.get("id", item.get("item_id"))
    return "" if value is None else str(value)


def denormalised(payload: dict, hold_id: str = "", run_id: str = "") -> dict:
    """The columns the audit list filters on, read from a cleaned payload."""
    items = items_of(payload)
    ids = [identifier for identifier in (item_id(item) for item in items) if identifier]
    actions = sorted({item.get("action") for item in items} & set(ITEM_ACTIONS))
    values = [hold_id, run_id, *ids]
    for item in items:
        for key in ("title", "original_data", "data"):
            values.extend(scalars(item.get(key)))
    searchable = dict.fromkeys(str(value).lower() for value in values if value not in (None, ""))
    return {
        "item_ids": ids,
        "actions": " ".join(actions),
        "outcome": str(payload.get("outcome") or "")[:32],
        "search_text": "\n".join(searchable),
    }


def channel_of(payload: dict) -> str:
    """Where a decision or an approval came from, in words ("email link"); "" when its event did not record it."""
    channel = payload.get("channel")
    return DecisionChannel(channel).label if channel in DecisionChannel.values else ""


def decision_items(decision) -> list[dict]:
    """A submitted decision's items as the ``decision_submitted`` payload records them."""
    return [
        {
            "id": item.item_id,
            "action": item.action,
            "original_data": item.original_data,
            "data": item.data,
            "comment": item.comment,
        }
        for item in decision.items.all()
    ]


def hold_items(hold) -> list[dict]:
    """A hold's items as the agent proposed them, for ``hold_seen``."""
    return [{"id": item.item_id, "title": item.title, "data": item.data} for item in hold.items.all()]
