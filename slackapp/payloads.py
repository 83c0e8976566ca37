"""Reading what Slack posts to the request URL: one strict reader per kind of interaction we take.

Slack posts a form with one field, ``payload``, holding JSON. Only what we act on is read, each value checked for
its kind (``reviewqueue.readers``); anything else is a ``readers.BadValue``, a plain 400. The request was verified
as Slack's before any of this runs (``slackapp.verifying``), but the reader trusts it no more for that.
"""

from __future__ import annotations

import dataclasses
import json
import re

from notifications import slack_api
from reviewqueue import readers

MAX_PAYLOAD = 100_000  # characters: Slack's interaction payloads are a few kilobytes
SLACK_ID = re.compile(r"[A-Za-z0-9_.-]{1,40}")
TS = re.compile(r"[0-9]{1,20}\.[0-9]{1,10}")
BUTTONS = ("approve", "reject", "undo")  # the interactive buttons' action_ids (``webhook_formats``)
MAX_VALUE = 2000  # Slack's limit on a button's value
MAX_TRIGGER = 200
MAX_REASON = 5000  # a reject's comment: review.MAX_COMMENT
MAX_NAME = 100  # a Slack user's name or a workspace's domain, as the payload gives them
REASON_BLOCK, REASON_ACTION = "reason", "reason_input"
REJECT_VIEW = "reject_reason"


@dataclasses.dataclass(frozen=True)
class Press:
    """A press of one of our buttons: who (``team_id``, ``slack_user_id``; their ``user_name`` and the workspace's
    ``team_domain`` as the payload names them, only ever shown), which (``action``, its signed ``value``), where (the
    message's ``channel_id`` and ``message_ts``, when it has them) and how to answer (``response_url``; ``trigger_id``
    for a modal)."""

    team_id: str
    slack_user_id: str
    action: str
    value: str
    response_url: str = ""
    trigger_id: str = ""
    channel_id: str = ""
    message_ts: str = ""
    reason: str = ""  # a reject's, from the modal
    user_name: str = ""
    team_domain: str = ""

    def as_task_argument(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_task_argument(cls, fields: dict) -> Press:
        return cls(**{field.name: str(fields.get(field.name, "")) for field in dataclasses.fields(cls)})


def read(form_payload: str) -> Press | None:
    """The press in a request's ``payload`` field; None for an interaction we take no action on (an Open button,
    a modal closed, a shortcut); ``readers.BadValue`` for anything malformed."""
    if not isinstance(form_payload, str) or not 0 < len(form_payload) <= MAX_PAYLOAD:
        raise readers.BadValue("payload", "is missing or too long")
    payload = readers.json_value(form_payload, "payload")
    if not isinstance(payload, dict):
        raise readers.BadValue("payload", "is not an object")
    kind = payload.get("type")
    if kind == "block_actions":
        return _button_press(payload)
    if kind == "view_submission":
        return _reject_reason(payload)
    if isinstance(kind, str):
        return None
    raise readers.BadValue("type", "is missing")


def _button_press(payload: dict) -> Press | None:
    actions = payload.get("actions")
    if not isinstance(actions, list) or not actions or not isinstance(actions[0], dict):
        raise readers.BadValue("actions", "is missing")
    action_id = actions[0].get("action_id")
    if action_id not in BUTTONS:
        return None  # a URL button (Open) is posted too; it needs nothing from us
    container = _object(payload, "container", required=False)
    response_url = _string(payload, "response_url", 500, required=False)
    if response_url and not slack_api.response_url_allowed(response_url):
        raise readers.BadValue("response_url", "is not one Slack gives")
    return Press(
        team_id=_slack_id(_team_of(payload), "team.id"),
        slack_user_id=_slack_id(_object(payload, "user").get("id"), "user.id"),
        action=action_id,
        value=_string(actions[0], "value", MAX_VALUE),
        response_url=response_url,
        trigger_id=_string(payload, "trigger_id", MAX_TRIGGER, required=False),
        channel_id=_slack_id(container.get("channel_id"), "container.channel_id", required=False),
        message_ts=_ts(container.get("message_ts")),
        **_names(payload),
    )


def _reject_reason(payload: dict) -> Press | None:
    """The Reject modal's submission: the press it was opened for (its ``private_metadata``) with the reason."""
    view = _object(payload, "view")
    if view.get("callback_id") != REJECT_VIEW:
        return None
    kept = readers.json_value(_string(view, "private_metadata", 3000), "private_metadata")
    if not isinstance(kept, dict):
        raise readers.BadValue("private_metadata", "is not an object")
    entered = _object(view, "state")
    for key in ("values", REASON_BLOCK, REASON_ACTION):
        entered = entered.get(key) if isinstance(entered, dict) else None
    reason = entered.get("value") if isinstance(entered, dict) else None
    response_url = _string(kept, "response_url", 500, required=False)
    if response_url and not slack_api.response_url_allowed(response_url):
        raise readers.BadValue("response_url", "is not one Slack gives")
    return Press(
        team_id=_slack_id(_team_of(payload), "team.id"),
        slack_user_id=_slack_id(_object(payload, "user").get("id"), "user.id"),
        action="reject",
        value=_string(kept, "value", MAX_VALUE),
        response_url=response_url,
        channel_id=_slack_id(kept.get("channel_id"), "channel_id", required=False),
        message_ts=_ts(kept.get("message_ts")),
        reason=readers.text(reason if isinstance(reason, str) else "", "reason", MAX_REASON),
        **_names(payload),
    )


def modal_metadata(press: Press) -> str:
    """What the Reject modal keeps of its press, for its submission to carry back."""
    kept = {"value": press.value, "response_url": press.response_url}
    return json.dumps({**kept, "channel_id": press.channel_id, "message_ts": press.message_ts})


def _names(payload: dict) -> dict:
    """The presser's name and their workspace's domain, when the payload gives them (only ever shown, as text)."""
    user, team = _object(payload, "user"), payload.get("team")
    team = team if isinstance(team, dict) else {}  # as ``_team_of`` reads it
    return {
        "user_name": _string(user, "name", MAX_NAME, required=False) or _string(user, "username", MAX_NAME, False),
        "team_domain": _string(team, "domain", MAX_NAME, required=False),
    }


def _team_of(payload: dict):
    team = payload.get("team")
    if isinstance(team, dict) and team.get("id"):
        return team.get("id")
    return _object(payload, "user").get("team_id")


def _object(payload: dict, name: str, required: bool = True) -> dict:
    value = payload.get(name)
    if isinstance(value, dict):
        return value
    if value is None and not required:
        return {}
    raise readers.BadValue(name, "is not an object")


def _string(payload: dict, name: str, limit: int, required: bool = True) -> str:
    value = payload.get(name)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value):
        raise readers.BadValue(name, "is missing")
    return readers.text(value, name, limit)


def _slack_id(value, name: str, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not SLACK_ID.fullmatch(value):
        raise readers.BadValue(name, "is not a Slack id")
    return value


def _ts(value) -> str:
    if value is None:
        return ""
    if not isinstance(value, str) or not TS.fullmatch(value):
        raise readers.BadValue("message_ts", "is not a Slack timestamp")
    return value
