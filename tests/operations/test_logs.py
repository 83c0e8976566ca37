"""With LOG_FORMAT=json every log line is one JSON object naming the request, user, hold, decision or task."""

import io
import json
import logging
import os

import pytest

from holds.deciding import decisions
from holds.deciding.decisions import ItemChoice
from operations.logcontext import ContextFilter
from operations.logformat import JsonFormatter
from tests.helpers import preloaded
from tests.helpers.duplicates import every_duplicate
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.django_db


@pytest.fixture
def json_log_lines():
    """The root logger's output formatted as LOG_FORMAT=json configures it, as a function returning parsed lines."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(ContextFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    root.removeHandler(handler)


def test_a_request_is_logged_with_its_request_id_user_and_hold(alice_client, json_log_lines):
    response = alice_client.get("/holds/987654/", headers={"X-Request-ID": "lb-4f1c2e9a-0001"})

    assert response.status_code == 404
    assert response["X-Request-ID"] == "lb-4f1c2e9a-0001"
    [line] = [line for line in json_log_lines() if line["logger"] == "django.request"]
    assert line["level"] == "WARNING" and "Not Found: /holds/987654/" in line["message"]
    assert line["request_id"] == "lb-4f1c2e9a-0001"
    assert line["user"] == "alice"
    assert line["hold_id"] == "987654"
    assert line["timestamp"].endswith("+00:00")


@pytest.mark.parametrize(
    "incoming", ["short", "x" * 200, "ok-but\r\nSet-Cookie: a=b", "<script>alert(1)</script>", "id with spaces"]
)
def test_an_insane_incoming_request_id_is_replaced_by_a_new_one(client, incoming):
    response = client.get("/healthz", headers={"X-Request-ID": incoming})

    assert response["X-Request-ID"] != incoming
    assert len(response["X-Request-ID"]) == 32 and response["X-Request-ID"].isalnum()


def test_nothing_of_one_request_is_left_on_the_next_ones_lines(alice_client, client, json_log_lines):
    alice_client.get("/holds/987654/")
    client.logout()
    logging.getLogger("tests").warning("between requests")

    between = [line for line in json_log_lines() if line["message"] == "between requests"]
    assert between and not {"request_id", "user", "hold_id"} & set(between[0])


def test_agent_text_with_line_breaks_stays_on_one_json_line(json_log_lines):
    logging.getLogger("tests").warning("agent said: %s", 'line one\nline two "quoted" \x00 \u2028')

    [line] = json_log_lines()
    assert line["message"] == 'agent said: line one\nline two "quoted" \x00 \u2028'


@pytest.mark.django_db(transaction=True)
def test_a_worker_with_log_format_json_logs_its_tasks_with_task_and_decision_ids(
    celery_processes, samples, alice, platform_state, settings, tmp_path
):
    settings.UNDO_SECONDS = 0
    celery_processes("worker", LOG_FORMAT="json", UNDO_SECONDS="0")
    hold = samples["h_13"]
    platform_state.push_faults([{"status": 503}])  # the first delivery is refused, so the worker logs a retry
    decision = decisions.submit(
        hold,
        alice,
        [ItemChoice(item.item_id, "approve") for item in hold.items.all()],
        duplicates_checked=every_duplicate(hold),
    )

    def task_lines():
        lines = [
            json.loads(line) for line in (tmp_path / "worker.log").read_text().splitlines() if line.startswith("{")
        ]
        return [line for line in lines if line.get("decision_id") == str(decision.pk)]

    lines = wait_until(lambda: len(task_lines()) >= 2 and task_lines(), timeout=30)
    worker_output = (tmp_path / "worker.log").read_text().splitlines()

    retry = next(line for line in lines if "not delivered" in line["message"])
    assert retry["logger"] == "holds.deciding.delivery" and retry["level"] == "INFO"
    assert retry["task_name"] == "holds.tasks.deliver_decision" and len(retry["task_id"]) == 36
    # Every line the worker wrote itself (Celery's banner aside, which it prints rather than logs) is JSON.
    assert all(json.loads(line) for line in worker_output if line.startswith("{"))
    assert sum(line.startswith("{") for line in worker_output) >= 3


def test_an_unknown_log_format_stops_start_up_naming_the_variable():
    checked = preloaded.run_module(
        "manage", ["check"], {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "LOG_FORMAT": "xml"}
    )

    assert checked.returncode != 0
    assert "LOG_FORMAT must be one of plain, json, not 'xml'" in checked.stderr
