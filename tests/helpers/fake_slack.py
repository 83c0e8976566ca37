"""A fake Slack on 127.0.0.1 for the Slack app's tests, and presses signed as Slack signs them.

The server answers the Web API methods the app calls as Slack documents them (``chat.postMessage`` with the new
message's ``ts``, ``chat.update``, ``views.open``, and ``users.info``, which takes a form and answers for the
people in ``people`` with the bot's token only) and keeps every post to a press's ``response_url``
(``/respond/<n>``); everything it receives is in ``received``, as (path, body, headers).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode

SIGNING_SECRET = "slack-signing-secret"
BOT_TOKEN = "xoxb-test-token"
TEAM = "T0TEAM"
CHANNEL = "C0REVIEWS"


def slack_person(user_id: str, name: str, email: str, team_id: str = TEAM, **fields) -> dict:
    """A user as ``users.info`` answers for them (``users:read.email``): ``fields`` overrides any of it."""
    profile = {"real_name": name.title(), "display_name": name, "email": email}
    return {
        "id": user_id,
        "team_id": team_id,
        "name": name,
        "real_name": name.title(),
        "deleted": False,
        "is_bot": False,
        "is_email_confirmed": True,
        "profile": profile,
        **fields,
    }


PEOPLE = {  # the Slack users the tests' reviewers are, by their accounts' emails (tests/helpers/users.py)
    f"U0{name.upper()}": slack_person(f"U0{name.upper()}", name, f"{name}@example.com")
    for name in ("alice", "bob", "carol", "fiona")
}


class FakeSlack:
    def __init__(self):
        self.received: list[tuple[str, dict, dict]] = []
        self.refusing: dict[str, str] = {}  # method → the error Slack answers it with
        self.people: dict[str, dict] = {user_id: dict(person) for user_id, person in PEOPLE.items()}
        counter = itertools.count(1)
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Type", "").startswith("application/x-www-form-urlencoded"):
                    body = {name: values[-1] for name, values in parse_qs(raw.decode()).items()}
                else:
                    body = json.loads(raw or b"{}")
                fake.received.append((self.path, body, dict(self.headers)))
                method = self.path.removeprefix("/api/")
                if self.path.startswith("/respond/"):
                    answer = b"ok"
                elif method in fake.refusing:
                    answer = json.dumps({"ok": False, "error": fake.refusing[method]}).encode()
                elif method == "chat.postMessage":
                    ts = f"1700000000.{next(counter):06d}"
                    answer = json.dumps({"ok": True, "channel": body.get("channel"), "ts": ts}).encode()
                elif method == "users.info":
                    answer = json.dumps(fake.user_info(body, self.headers.get("Authorization"))).encode()
                elif method in ("chat.update", "views.open"):
                    answer = json.dumps({"ok": True, "channel": body.get("channel"), "ts": body.get("ts")}).encode()
                else:
                    answer = json.dumps({"ok": False, "error": "unknown_method"}).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.api_url = f"{self.url}/api"
        self._responses = itertools.count(1)

    def __enter__(self) -> FakeSlack:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def user_info(self, form: dict, authorization: str | None) -> dict:
        """``users.info`` as Slack answers it: a form's ``user``, with a bot token."""
        if authorization != f"Bearer {BOT_TOKEN}":
            return {"ok": False, "error": "invalid_auth"}
        if form.get("user") not in self.people:
            return {"ok": False, "error": "user_not_found"}
        return {"ok": True, "user": self.people[form["user"]]}

    def response_url(self) -> str:
        """A fresh response_url, as Slack gives each press."""
        return f"{self.url}/respond/{next(self._responses)}"

    def posts_to(self, prefix: str) -> list[dict]:
        """The bodies posted to paths starting with ``prefix`` ("/respond/1", a whole response_url, "/api/chat.update"),
        in order."""
        prefix = prefix.removeprefix(self.url)
        return [body for path, body, _ in list(self.received) if path.startswith(prefix)]

    def texts(self, prefix: str) -> list[str]:
        """Every mrkdwn and plain text of the bodies posted under ``prefix``, joined per body."""
        return [" ".join(_texts(body)) for body in self.posts_to(prefix)]


def _texts(value) -> list[str]:
    if isinstance(value, dict):
        found = [value["text"]] if isinstance(value.get("text"), str) else []
        return found + [text for inner in value.values() if not isinstance(inner, str) for text in _texts(inner)]
    if isinstance(value, list):
        return [text for inner in value for text in _texts(inner)]
    return []


def button_press(value: str, action: str, response_url: str, user: str = "U0ALICE", ts: str = "1700000000.000001"):
    """A block_actions payload as Slack posts it for a press of one of our buttons."""
    return {
        "type": "block_actions",
        "team": {"id": TEAM, "domain": "example"},
        "user": {"id": user, "username": "alice", "name": "alice", "team_id": TEAM},
        "api_app_id": "A0APP",
        "trigger_id": "1234.5678.abcdef",
        "container": {"type": "message", "message_ts": ts, "channel_id": CHANNEL, "is_ephemeral": False},
        "channel": {"id": CHANNEL, "name": "reviews"},
        "response_url": response_url,
        "actions": [
            {"type": "button", "action_id": action, "block_id": "b1", "value": value, "action_ts": "1700000001.1"}
        ],
    }


def signed(payload: dict | str, secret: str = SIGNING_SECRET, timestamp: int | None = None) -> tuple[bytes, dict]:
    """A request body (the form Slack posts) and its headers, signed with ``secret`` at ``timestamp`` (now)."""
    text = payload if isinstance(payload, str) else json.dumps(payload)
    body = urlencode({"payload": text}).encode()
    return body, signed_body(body, secret, timestamp)


def signed_body(body: bytes, secret: str = SIGNING_SECRET, timestamp: int | None = None) -> dict:
    """The headers that sign ``body``, any bytes, with ``secret`` at ``timestamp`` (now), as Slack signs."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    signature = "v0=" + hmac.new(secret.encode(), f"v0:{stamp}:".encode() + body, hashlib.sha256).hexdigest()
    return {"HTTP_X_SLACK_REQUEST_TIMESTAMP": stamp, "HTTP_X_SLACK_SIGNATURE": signature}


def post_press(client, body: bytes, headers: dict):
    """Post a signed body to the request URL through Django's test client."""
    return client.post("/slack/interactivity", data=body, content_type="application/x-www-form-urlencoded", **headers)


def linked(user, slack_user_id: str, team_id: str = TEAM, proof: str = "email"):
    """``user`` linked to a Slack user, as connecting (proven by email) would leave them; ``proof=""`` as a link
    made before links were proven."""
    from django.utils import timezone

    from slackapp.models import SlackAccount

    return SlackAccount.objects.create(
        team_id=team_id, slack_user_id=slack_user_id, user=user, linked_at=timezone.now(), proof=proof
    )
