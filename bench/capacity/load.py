"""One step of the scenario under Locust: ``python -m bench.capacity.load PLAN.json RESULT.json``.

Started by ``bench.capacity`` in a process of its own, as Locust patches the standard library for gevent as it is
imported. Runs Locust as a library (``locust.env.Environment``, a local runner, its stats and CSV) with the plan's
users for its seconds, and the arrivals beside them, then writes what it saw: each request kind's percentiles and
failures, the 5xx, each new hold's first sight on each stream, the decisions made and their Idempotency-Keys, and
this process's CPU (the load generator shares the machine, so its share is reported next to the app's).

Who does what (think times from the plan, drawn around ``think`` seconds):

- **reviewers** keep the queue open with its live stream (a real SSE connection to ``/events/``) and fetch the
  queue's body again on each event about holds, as ``static/live/live.js`` does (50 ms after the event, or as late
  as the body's ``data-live-every`` asks, one more after the fetch in flight if events came meanwhile); they
  filter and search, open holds, and decide through the hold page's form and summary: approve, edit (an amount
  lowered), reject, undo within the window now and then (and decide that hold again later, as the Undo left them
  its claim), a few holds in bulk, and now and then a Slack button (signed as Slack signs, to
  ``/slack/interactivity``);
- **auditors** browse the trail and export a day's decisions as CSV;
- **API scripts** list the queue and decide with a token, one Idempotency-Key per decision;
- **arrivals**: holds asked on the simulated platform at ``rate`` a second (not counted as requests).
"""

import json
import os
import random
import re
import socket
import sys
import time
import uuid
from collections import deque
from urllib.parse import urlencode, urlsplit

import gevent
import locust
import psutil
from locust import FastHttpUser, between, events, task
from locust.env import Environment
from locust.stats import PERCENTILES_TO_REPORT, StatsCSVFileWriter

from bench.decide import form_fields
from tests.helpers import fake_slack

REFRESHING_KINDS = {"hold", "decision", "claim", "assignment", "approval", "refresh"}  # queue.html's data-live-on
FORM = "application/x-www-form-urlencoded"
LIVE_DELAY = 0.05  # live.js's fetchSoon
PLAN: dict = {}
HOLD_EVENTS: dict[int, list[float]] = {}  # each stream's "hold" events, when they came
DECISIONS: list[dict] = []  # what the users decided: kind, hold, and the key of an API decision
SERVER_ERRORS: list[str] = []
STREAM_FAILURES: list[str] = []


@events.request.add_listener
def _note_server_errors(request_type, name, response, exception, **kwargs):
    if response is not None and getattr(response, "status_code", 0) >= 500:
        SERVER_ERRORS.append(f"{request_type} {name} {response.status_code}")


def _cookies(person: dict) -> str:
    return f"sessionid={person['session']}; csrftoken={PLAN['csrf']}"


def _take(pool: str, count: int = 1) -> list:
    holds = PLAN[pool]
    taken = [holds.popleft() for _ in range(min(count, len(holds)))]
    return taken


class SignedIn(FastHttpUser):
    abstract = True
    max_redirects = 0  # each request a kind of its own: a redirect's page is asked as the browser asks it
    people: deque = deque()

    def on_start(self):
        self.person = self.people.popleft()
        self.client.headers = {"Cookie": _cookies(self.person)}

    def form_post(self, path: str, fields, name: str, ok=(200, 302)):
        headers = {"X-CSRFToken": PLAN["csrf"], "Cookie": _cookies(self.person), "Content-Type": FORM}
        with self.client.post(
            path,
            data=urlencode(fields if isinstance(fields, list) else list(fields.items())),
            headers=headers,
            name=name,
            catch_response=True,
        ) as response:
            if response.status_code not in ok:
                response.failure(f"{response.status_code}")
            return response

    def get(self, path: str, name: str, **headers):
        with self.client.get(
            path, name=name, headers={"Cookie": _cookies(self.person), **headers}, catch_response=True
        ) as response:
            if response.status_code != 200:
                response.failure(f"{response.status_code}")
            return response


class Reviewer(SignedIn):
    wait_time = between(0.5, 1.5)
    people = deque()

    def on_start(self):
        super().on_start()
        self.on_queue = True
        self.refresh_due = None
        self.refresh_again = self.fetching = False
        self.last_refresh, self.live_every = 0.0, 0.0
        self.queue_url = "/"
        # Holds this reviewer undid: theirs to decide again, as the Undo gave them the hold's claim back. Back in the
        # shared pool, another reviewer's decision of one would be refused (409) while that claim runs.
        self.undone = deque()
        self.hold_events = HOLD_EVENTS[len(HOLD_EVENTS)] = []
        self.open_queue()
        self.stream = gevent.spawn(self.listen)

    def on_stop(self):
        self.stream.kill(block=False)

    def open_queue(self, query: str = ""):
        page = self.get("/" + query, "queue page" if not query else "queue filtered")
        found = re.search(r'id="queue-body"\s+hx-get="([^"]+)"', page.text or "")
        self.queue_url = found[1].replace("&amp;", "&") if found else "/"
        every = re.search(r'id="queue-body"[^>]*data-live-every="([\d.]+)"', page.text or "")
        self.live_every = float(every[1]) if every else 0.0  # the least time between two refreshes, if set
        self.on_queue = True

    # The live stream, and the queue's refresh it causes.

    def listen(self):
        while True:
            try:
                self._read_stream()
            except (OSError, ValueError) as error:
                STREAM_FAILURES.append(repr(error))
            gevent.sleep(1)  # as the browser's EventSource retries

    def _read_stream(self):
        address = urlsplit(PLAN["events_url"])
        with socket.create_connection((address.hostname, address.port), timeout=60) as connection:
            connection.sendall(
                f"GET /events/ HTTP/1.1\r\nHost: {address.netloc}\r\nAccept: text/event-stream\r\n"
                f"Cookie: {_cookies(self.person)}\r\n\r\n".encode()
            )
            reader = connection.makefile("rb")
            status = reader.readline().split()
            if len(status) < 2 or status[1] != b"200":
                raise ValueError(f"the stream answered {status!r}")
            while reader.readline() not in (b"\r\n", b""):
                pass
            text = b""
            while size := int(reader.readline().strip() or b"0", 16):  # chunked, as uvicorn sends a stream
                text += reader.read(size)
                reader.readline()
                while b"\n\n" in text:
                    message, text = text.split(b"\n\n", 1)
                    self._event(message.decode())

    def _event(self, message: str):
        kind = next((line[7:] for line in message.splitlines() if line.startswith("event: ")), "")
        if kind == "hold":  # a new hold is told of without its id (reviewqueue/changes.py): the moments are kept
            self.hold_events.append(time.time())
        if kind in REFRESHING_KINDS and self.on_queue and self.refresh_due is None:
            delay = max(LIVE_DELAY, self.last_refresh + self.live_every - time.monotonic())
            self.refresh_due = gevent.spawn_later(delay, self._refresh)

    def _refresh(self):
        """As live.js fires its timer (events after it schedule the next) and htmx asks once more, after the
        request in flight, for a trigger that came during it."""
        self.refresh_due = None
        self.last_refresh = time.monotonic()
        if self.fetching:
            self.refresh_again = True
            return
        self.fetching = True
        try:
            while True:
                self.refresh_again = False
                self.get(self.queue_url, "queue refresh (live)", **{"HX-Request": "true", "HX-Target": "queue-body"})
                if not self.refresh_again:
                    break
        finally:
            self.fetching = False

    # What a reviewer does between reading.

    @task(6)
    def read_the_queue(self):
        gevent.sleep(random.uniform(0.5, 1.5) * PLAN["think"])

    @task(2)
    def filter_and_search(self):
        query = random.choice(["?q=A-5", "?sort=amount", "?agent=upsonic-support", "?expiring=24h", "?q=refund"])
        self.open_queue(query)

    @task(4)
    def decide_one(self):
        taken = [self.undone.popleft()] if self.undone else _take("reviewers_holds")
        if not taken:
            return
        pk = taken[0]
        self.on_queue = False
        page = self.get(f"/holds/{pk}/", "hold page")
        gevent.sleep(random.uniform(0.5, 1.5) * PLAN["think"])
        choice = random.choices(["approve", "edit", "reject"], weights=[6, 2, 2])[0]
        if choice == "reject":
            answer = self.form_post(f"/holds/{pk}/reject", {"comment": "not this time"}, "reject", ok=(302,))
        else:
            answer = self._review(pk, page.text or "", edit=choice == "edit")
        if answer is not None and answer.status_code == 302:
            DECISIONS.append({"kind": choice, "hold": pk})
            if random.random() < 0.1:  # a second thought, within the undo window, on the page the decision led to
                try:
                    fields = form_fields(self.get(f"/holds/{pk}/", "hold page").text or "", "undo-form")
                except SystemExit:
                    fields = None
                undo = fields and self.form_post(f"/holds/{pk}/decision/undo", fields, "undo", ok=(302,))
                if undo and undo.status_code == 302:
                    DECISIONS.append({"kind": "undo", "hold": pk})
                    self.undone.append(pk)
        self.open_queue()

    def _review(self, pk: int, page: str, edit: bool):
        try:
            fields = form_fields(page, "decide-form")
        except SystemExit:
            return None
        chosen, edited = [], False
        for name, value in fields:
            if name.endswith("-action"):
                value = "approve"
            elif edit and not edited and re.fullmatch(r"\d+\.\d\d", value) and float(value) > 2:
                value, edited = f"{float(value) - 1:.2f}", True
            chosen.append((name, value))
        actions = {name.removesuffix("-comment") + "-action" for name, _ in fields if name.endswith("-comment")}
        chosen += [(action, "approve") for action in sorted(actions - {name for name, _ in chosen})]
        summary = self.form_post(f"/holds/{pk}/review", chosen, "edit: summary" if edit else "approve: summary")
        try:
            confirm = form_fields(summary.text or "", "confirm-form") + [("confirm", "yes")]
        except SystemExit:
            return None
        return self.form_post(f"/holds/{pk}/review", confirm, "edit: send" if edit else "approve: send", ok=(302,))

    @task(1)
    def decide_in_bulk(self):
        pks = _take("reviewers_holds", 5)
        if not pks:
            return
        fields = [("hold", str(pk)) for pk in pks] + [("action", "approve"), ("comment", "")]
        summary = self.form_post("/holds/bulk/review", fields, "bulk: summary")
        try:
            confirm = form_fields(summary.text or "", "confirm-form") + [("confirm", "yes")]
        except SystemExit:
            return
        if self.form_post("/holds/bulk/review", confirm, "bulk: send").status_code == 200:
            DECISIONS.extend({"kind": "bulk", "hold": pk} for pk in pks)

    @task(1)
    def press_in_slack(self):
        taken = _take("slack")
        if not taken:
            return
        press = fake_slack.button_press(taken[0], "approve", PLAN["slack_response_url"], user=self.person["slack_user"])
        body, signature = fake_slack.signed(press, PLAN["slack_secret"])
        headers = {name.removeprefix("HTTP_").replace("_", "-"): value for name, value in signature.items()}
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        with self.client.post(
            "/slack/interactivity", data=body, headers=headers, name="slack press", catch_response=True
        ) as answer:
            if answer.status_code != 200:
                answer.failure(f"{answer.status_code}")
            else:
                DECISIONS.append({"kind": "slack", "hold": None})


class Auditor(SignedIn):
    wait_time = between(0.5, 1.5)
    people = deque()

    @task(4)
    def browse(self):
        self.get(random.choice(["/audit/", "/audit/?view=decisions", "/audit/?action=reject"]), "audit list")
        gevent.sleep(random.uniform(0.5, 1.5) * PLAN["think"])

    @task(1)
    def export(self):
        self.get(f"/audit/export.csv?view=decisions&since={time.strftime('%Y-%m-%d')}", "audit CSV export")
        gevent.sleep(random.uniform(0.5, 1.5) * PLAN["think"])


class Script(FastHttpUser):
    wait_time = between(0.5, 1.5)
    max_redirects = 0
    people = deque()

    def on_start(self):
        self.token = self.people.popleft()["token"]

    def call(self, method: str, path: str, name: str, ok=(200,), **options):
        headers = {"Authorization": f"Bearer {self.token}", **options.pop("headers", {})}
        with self.client.request(method, path, headers=headers, name=name, catch_response=True, **options) as answer:
            if answer.status_code not in ok:
                answer.failure(f"{answer.status_code} {(answer.text or '')[:160]}")
            return answer

    @task
    def list_and_decide(self):
        self.call("GET", "/api/v1/holds", "API: list")
        taken = _take("scripts_holds")
        if taken:
            hold = self.call("GET", f"/api/v1/holds/{taken[0]}", "API: hold")
            items = [{"id": item["id"], "action": "approve"} for item in (hold.json() or {}).get("items", [])]
            key = str(uuid.uuid4())
            answer = self.call(
                "POST", f"/api/v1/holds/{taken[0]}/decision", "API: decide", ok=(201,),
                json={"items": items}, headers={"Idempotency-Key": key},
            )  # fmt: skip
            if answer.status_code == 201:
                DECISIONS.append({"kind": "api", "hold": taken[0], "key": key})
        gevent.sleep(random.uniform(0.5, 1.5) * PLAN["think"])


def arrivals(rate: float, platform_url: str, asked: list):
    """Holds asked on the platform at ``rate`` a second, in a steady beat; each one's id and moment noted."""
    import geventhttpclient

    address = urlsplit(platform_url)
    client = geventhttpclient.HTTPClient(address.hostname, address.port, connection_timeout=10, network_timeout=10)
    started = time.monotonic()
    for number in range(sys.maxsize):
        gevent.sleep(max(0.0, started + number / rate - time.monotonic()))
        answer = client.post("/_control/holds", body=b'{"generate": 1}', headers={"Content-Type": "application/json"})
        asked.extend((hold["hold_id"], time.time()) for hold in json.loads(answer.read())["holds"])


def main() -> None:
    plan_path, result_path = sys.argv[1:3]
    with open(plan_path) as plan_file:
        PLAN.update(json.load(plan_file))
    for pool in ("reviewers_holds", "scripts_holds", "slack"):
        PLAN[pool] = deque(PLAN[pool])
    counts = PLAN["users"]
    for kind, people in (("reviewers", Reviewer), ("auditors", Auditor), ("scripts", Script)):
        people.people.extend(PLAN[kind][: counts[kind]])
        people.fixed_count = counts[kind]
    user_classes = [kind for kind in (Reviewer, Auditor, Script) if kind.fixed_count]
    for kind in user_classes:
        kind.host = PLAN["web_url"]
    environment = Environment(user_classes=user_classes, events=events)
    runner = environment.create_local_runner()
    csv_writer = StatsCSVFileWriter(environment, PERCENTILES_TO_REPORT, PLAN["csv_prefix"])
    writing = gevent.spawn(csv_writer)
    me = psutil.Process()
    cpu_before, wall_before = sum(me.cpu_times()[:2]), time.monotonic()
    asked: list = []
    total = sum(counts.values())
    runner.start(total, spawn_rate=max(total / 2, 1))  # everyone within 2 s; the orchestrator starts its clock after
    arriving = gevent.spawn(arrivals, PLAN["rate"], PLAN["platform_url"], asked) if PLAN["rate"] else None
    gevent.sleep(PLAN["ramp"])
    environment.stats.reset_all()  # the first sight of each page is a ramp, not the step
    started = time.time()
    gevent.sleep(PLAN["duration"])
    ended = time.time()
    if arriving:
        arriving.kill()
    stats = {
        name: {
            "requests": entry.num_requests,
            "failures": entry.num_failures,
            "p50": entry.get_response_time_percentile(0.5),
            "p95": entry.get_response_time_percentile(0.95),
            "p99": entry.get_response_time_percentile(0.99),
        }
        for (name, _method), entry in environment.stats.entries.items()
        if entry.num_requests
    }
    failures = [
        f"{error.method} {error.name}: {error.error} x{error.occurrences}"
        for error in environment.stats.errors.values()
    ]
    cpu = (sum(me.cpu_times()[:2]) - cpu_before) / (time.monotonic() - wall_before)
    runner.quit()
    writing.kill()
    csv_writer.close_files()
    result = {
        "started": started, "ended": ended, "stats": stats, "failures": failures, "server_errors": SERVER_ERRORS,
        "stream_failures": STREAM_FAILURES[:20], "stream_failure_count": len(STREAM_FAILURES),
        "hold_events": list(HOLD_EVENTS.values()), "asked": asked, "decisions": DECISIONS,
        "load_cpu": cpu, "locust": locust.__version__, "slack_left": len(PLAN["slack"]),
    }  # fmt: skip
    with open(result_path, "w") as result_file:
        json.dump(result, result_file)
    os._exit(0)  # the users' greenlets and sockets need no orderly end


if __name__ == "__main__":
    main()
