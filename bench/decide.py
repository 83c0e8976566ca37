"""From a reviewer's confirming POST to the platform receiving the decision: p50, p95 and max.

    .venv/bin/python -m bench.decide [--decisions 100] [--port 8211]

The production path end to end: gunicorn (2 workers, DEBUG off, docs/operating.md's
production settings) on a fresh database (BENCH_DATABASE, default
``reviewqueue_bench_decide``), a real Celery worker as docs/operating.md starts it, Redis
(BENCH_REDIS_URL, default database 3, flushed) and the simulated platform over HTTP
on 127.0.0.1. ``UNDO_SECONDS=0``: the undo window is a wait the reviewer chose, so
the time measured is what the machinery adds, from the moment the window closes.

A reviewer signed in through the login form decides one hold at a time as a browser
would: opens the hold, posts the form with every item approved, gets the summary,
and confirms it. The clock starts just before the confirming POST is sent and stops
at the simulator's receipt time of the decision's POST (its request log's
``received_at``; both clocks are this machine's). The next decision waits for the
previous one to arrive, so each is measured alone.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from html.parser import HTMLParser
from pathlib import Path

from bench import serving, setup

REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/3")
REVIEWER = "bench-reviewer"
TARGET_P95_MS = 100


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--decisions", type=int, default=100)
    parser.add_argument("--port", type=int, default=8211, help="gunicorn's port; the simulator takes the next one")
    options = parser.parse_args()
    if "BENCH_DATABASE" not in os.environ:
        setup.DATABASE = "reviewqueue_bench_decide"
    started = time.perf_counter()
    setup.django_on_fresh_database()

    import redis
    from django.conf import settings

    from holds.mirror import platform, sync
    from holds.models import Decision, Hold
    from reviewqueue import roles

    redis.Redis.from_url(REDIS_URL).flushdb()
    serving.create_user(REVIEWER, roles.REVIEWERS)
    with (
        serving.stopped_at_exit(),
        tempfile.TemporaryDirectory() as logs,
        setup.simulated_platform(options.decisions, port=options.port + 1) as state,
    ):
        with platform.PlatformClient.from_settings() as client:
            sync.sync_env(client, "default")
        holds = list(Hold.objects.filter(status="open").order_by("pk").values_list("pk", "hold_id"))
        environment = serving.production_environment(
            options.port, os.environ["DATABASE_URL"], REDIS_URL, settings.AGENTOS_URL, settings.AGENTOS_API_KEY
        ) | {"UNDO_SECONDS": "0"}
        serving.collectstatic_if_needed(environment)
        worker = serving.start(
            [sys.executable, "-m", "celery", "-A", "reviewqueue", "worker", "--loglevel", "INFO", "--concurrency", "2"],
            environment,
            Path(logs) / "worker.log",
        )
        try:
            serving.wait_for(
                lambda: b" ready." in (Path(logs) / "worker.log").read_bytes(), "the Celery worker", worker
            )
            with serving.gunicorn(environment, options.port, Path(logs) / "gunicorn.log") as url:
                print(f"set up in {time.perf_counter() - started:.0f} s; deciding {len(holds)} holds", file=sys.stderr)
                reviewer = serving.sign_in(url, REVIEWER)
                moments = [decide(reviewer, state, pk, hold_id) for pk, hold_id in holds]
        finally:
            serving.stop(worker)
    leases = dict(Decision.objects.values_list("hold_id", "delivery_started_at"))
    for (pk, _), moment in zip(holds, moments, strict=True):
        moment["leased"] = leases[pk].timestamp()
    delays = [m["received"] - m["sent"] for m in moments]
    print(
        f"\nbench.decide: {len(delays)} decisions through gunicorn (2 workers, DEBUG=0), a Celery worker "
        f"(--concurrency 2) and the simulated platform; UNDO_SECONDS=0"
    )
    print(f"confirming POST sent -> platform received the decision: {spread(delays)}")
    print("  of which:")
    print(
        f"  confirming POST sent -> its 302 answered:             "
        f"{spread([m['answered'] - m['sent'] for m in moments])}"
    )
    print(
        f"  confirming POST sent -> the worker leased it:          {spread([m['leased'] - m['sent'] for m in moments])}"
    )
    print(
        f"  the worker leased it -> platform received it:          "
        f"{spread([m['received'] - m['leased'] for m in moments])}"
    )
    verdict = "met" if setup.percentile(delays, 0.95) * 1000 <= TARGET_P95_MS else "NOT met"
    print(f"target p95 <= {TARGET_P95_MS} ms: {verdict}; machine load average (1 min) {os.getloadavg()[0]:.1f}")


def decide(reviewer, state, pk: int, hold_id: str) -> dict[str, float]:
    """Approve every item of the hold as a browser does; answer when the confirm was sent and answered, and the decision
    received."""
    page = reviewer.get(f"/holds/{pk}/")
    fields = form_fields(page.text, "decide-form")
    actions = {
        name.removesuffix("-comment") + "-action" for name, _ in fields if name.endswith("-comment")
    }  # one per item
    summary = reviewer.post(
        f"/holds/{pk}/review", data=as_form(fields + [(action, "approve") for action in sorted(actions)])
    )
    if summary.status_code != 200:
        raise SystemExit(f"the review form of hold {pk} answered {summary.status_code}")
    confirm = form_fields(summary.text, "confirm-form") + [("confirm", "yes")]
    sent = time.time()
    answer = reviewer.post(f"/holds/{pk}/review", data=as_form(confirm))
    answered = time.time()
    if answer.status_code != 302:
        raise SystemExit(f"confirming hold {pk} answered {answer.status_code}")
    path = f"/holds/{hold_id}/decision"
    received = serving.wait_for(
        lambda: next(
            (r["received_at"] for r in state.requests if r["method"] == "POST" and r["path"].endswith(path)), None
        ),
        f"the decision on {hold_id} at the platform",
    )
    return {"sent": sent, "answered": answered, "received": received}


def as_form(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
    """Name/value pairs as httpx posts them, repeated names kept."""
    form: dict[str, list[str]] = {}
    for name, value in pairs:
        form.setdefault(name, []).append(value)
    return form


def spread(seconds: list[float]) -> str:
    return (
        f"p50 {statistics.median(seconds) * 1000:6.1f} ms, p95 {setup.percentile(seconds, 0.95) * 1000:6.1f} ms, "
        f"max {max(seconds) * 1000:6.1f} ms"
    )


class _FormFields(HTMLParser):
    """The name/value pairs a browser would submit from the form with id ``form_id`` (submit buttons aside)."""

    def __init__(self, form_id: str):
        super().__init__()
        self.form_id = form_id
        self.inside = False
        self.fields: list[tuple[str, str]] = []
        self.textarea: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "form":
            self.inside = attributes.get("id") == self.form_id
        elif not self.inside or not attributes.get("name"):
            return
        elif tag == "input":
            kind = attributes.get("type", "text")
            if kind in ("submit", "button") or (kind in ("radio", "checkbox") and "checked" not in attributes):
                return
            self.fields.append((attributes["name"], attributes.get("value") or ""))
        elif tag == "textarea":
            self.textarea = [attributes["name"], ""]

    def handle_data(self, data):
        if self.textarea is not None:
            self.textarea[1] += data

    def handle_endtag(self, tag):
        if tag == "textarea" and self.textarea is not None:
            name, text = self.textarea
            self.fields.append((name, text.removeprefix("\n")))  # HTML drops the newline right after <textarea>
            self.textarea = None
        elif tag == "form":
            self.inside = False


def form_fields(html: str, form_id: str) -> list[tuple[str, str]]:
    parser = _FormFields(form_id)
    parser.feed(html)
    if not parser.fields:
        raise SystemExit(f"no form #{form_id} with fields in the page")
    return parser.fields


if __name__ == "__main__":
    main()
