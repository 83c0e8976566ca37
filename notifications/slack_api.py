"""Slack's Web API and a press's ``response_url``: the calls the Slack app makes, each one POST of JSON (of a form
for ``users.info``, which takes no JSON).

``SLACK_API_URL`` is where the Web API is (Slack's own unless tests point it elsewhere), ``SLACK_BOT_TOKEN`` the bot's
token for the methods that need one (``chat.postMessage``, ``chat.update``, ``views.open``, ``users.info``). Slack
answers a Web API call with HTTP 200 and ``{"ok": false, "error": …}`` when it refuses it: that is ``Refused``, with
Slack's error code; a 429, a 5xx or no answer is ``Unavailable``, to retry. What either records is the status or
Slack's error code, never the rest of an answer.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx
from django.conf import settings

from reviewqueue import tls

RESPONSE_URL_HOSTS = ("hooks.slack.com",)  # where Slack's response_url points


class Refused(Exception):
    """Slack refused the call for good (its error code, or a 4xx)."""


class Unavailable(Exception):
    """Slack could not take the call now: retry later."""


def response_url_allowed(url: str) -> bool:
    """Whether ``url`` is a response_url Slack gives: https on Slack's hooks host, or under ``SLACK_API_URL``'s
    origin when that points elsewhere (the tests' fake Slack). Anything else is never posted to."""
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.hostname in RESPONSE_URL_HOSTS and not parts.username:
        return True
    api = urlsplit(settings.SLACK_API_URL)
    return api.hostname not in ("slack.com", None) and (parts.scheme, parts.netloc) == (api.scheme, api.netloc)


def call(method: str, payload: dict, form: bool = False) -> dict:
    """Call Web API ``method`` with the bot token; Slack's answer, once it says ``ok``. ``form`` posts the arguments
    as a form, for the methods that take no JSON (``users.info``)."""
    headers = {"Authorization": f"Bearer {settings.SLACK_BOT_TOKEN}"}
    answer = _post(f"{settings.SLACK_API_URL}/{method}", payload, headers, form=form)
    try:
        found = answer.json()
    except ValueError:
        raise Unavailable(f"{method}: not JSON") from None
    if not isinstance(found, dict) or found.get("ok") is not True:
        error = found.get("error") if isinstance(found, dict) else None
        raise Refused(f"{method}: {error if isinstance(error, str) else 'refused'}"[:200])
    return found


def post_message(channel: str, text: str, blocks: list[dict]) -> str:
    """Post a message to ``channel`` (an id) as the bot; its ``ts``, by which ``update_message`` replaces it."""
    ts = call("chat.postMessage", {"channel": channel, "text": text, "blocks": blocks}).get("ts")
    if not isinstance(ts, str) or not ts:
        raise Refused("chat.postMessage: no ts")
    return ts


def update_message(channel: str, ts: str, text: str, blocks: list[dict]) -> None:
    call("chat.update", {"channel": channel, "ts": ts, "text": text, "blocks": blocks})


def open_view(trigger_id: str, view: dict) -> None:
    call("views.open", {"trigger_id": trigger_id, "view": view})


def user_info(user_id: str) -> dict:
    """Slack's profile of ``user_id`` (``users.info``: ``users:read``, and ``users:read.email`` for its email), as
    Slack wrote it: every value in it is for the caller to check."""
    user = call("users.info", {"user": user_id}, form=True).get("user")
    if not isinstance(user, dict):
        raise Refused("users.info: no user")
    return user


def respond(response_url: str, body: dict) -> None:
    """Post ``body`` to a press's ``response_url``: an ephemeral answer to the presser, or the message replaced."""
    if not response_url_allowed(response_url):
        raise Refused("not a response_url Slack gives")
    _post(response_url, body, {})


def _post(url: str, payload: dict, headers: dict, form: bool = False) -> httpx.Response:
    body = {"data": payload} if form else {"json": payload}
    try:
        with httpx.Client(trust_env=False, verify=tls.trust_store(), follow_redirects=False) as client:
            answer = client.post(url, headers=headers, timeout=settings.WEBHOOK_TIMEOUT_SECONDS, **body)
    except (httpx.HTTPError, OSError):
        raise Unavailable("unreachable") from None
    if answer.status_code == 429 or answer.status_code >= 500:
        raise Unavailable(f"answered {answer.status_code}")
    if not 200 <= answer.status_code < 300:
        raise Refused(f"answered {answer.status_code}")
    return answer
