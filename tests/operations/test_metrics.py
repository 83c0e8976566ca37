"""Prometheus scrapes /metrics: numbers computed from the database, so every web and worker process agrees."""

from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth.models import Group
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from holds.deciding import decisions, delivery
from holds.deciding.decisions import ItemChoice
from holds.handover import assignments, notes
from holds.mirror import sync, writing
from holds.models import Decision, Hold, SyncState
from notifications.models import Notification
from operations import auditcheck
from operations.models import SyncStats
from tests.helpers.duplicates import every_duplicate
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.django_db

TOKEN = "scrape-token-0123456789abcdef"


@pytest.fixture
def scraper(client, settings):
    """A client that scrapes /metrics with the bearer token, returning {sample name: {labels: value}}."""
    settings.METRICS_TOKEN = TOKEN

    def scrape() -> dict[str, dict[tuple, float]]:
        response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
        assert response.status_code == 200, response.content
        return samples_of(response.content.decode())

    return scrape


def samples_of(text: str) -> dict[str, dict[tuple, float]]:
    found: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return found


def approve_all(hold):
    return [ItemChoice(item_id=item.item_id, action="approve") for item in hold.items.all()]


def test_metrics_is_not_there_at_all_until_a_token_or_an_address_is_configured(client, settings):
    settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS = "", []

    assert client.get("/metrics").status_code == 404


@pytest.mark.parametrize(
    "authorization", ["", "Bearer wrong-token", f"Basic {TOKEN}", f"Bearer {TOKEN}x", "Bearer \u00e9\u00e9"]
)
def test_metrics_refuses_a_scraper_without_the_right_token(client, settings, authorization):
    settings.METRICS_TOKEN = TOKEN

    response = client.get("/metrics", headers={"Authorization": authorization} if authorization else {})

    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert b"reviewqueue_" not in response.content


def test_an_allowed_address_scrapes_without_a_token_and_behind_a_proxy_the_client_address_counts(client, settings):
    import ipaddress

    settings.METRICS_TOKEN = ""
    settings.METRICS_ALLOWED_IPS = [ipaddress.ip_network("10.0.0.0/8")]
    settings.TRUSTED_PROXIES = [ipaddress.ip_network("192.0.2.1")]

    def scrape(forwarded_for, peer="192.0.2.1"):
        return client.get("/metrics", headers={"X-Forwarded-For": forwarded_for}, REMOTE_ADDR=peer)

    allowed = scrape("10.1.2.3")
    outsider = scrape("192.0.2.7")
    forged = scrape("10.1.2.3, 192.0.2.7")
    not_through_the_proxy = scrape("10.1.2.3", peer="192.0.2.9")

    assert allowed.status_code == 200 and b"reviewqueue_open_holds" in allowed.content
    assert outsider.status_code == 401
    assert forged.status_code == 401
    assert not_through_the_proxy.status_code == 401


def test_open_holds_are_counted_by_env_and_agent_with_the_oldest_age_and_those_expiring_soon(scraper, samples):
    metrics = scraper()

    open_holds = Hold.objects.filter(status="open")
    by_agent = metrics["reviewqueue_open_holds"]
    for agent in set(open_holds.values_list("agent", flat=True)):
        assert by_agent[(("agent", agent), ("env", "default"))] == open_holds.filter(agent=agent).count()
    assert sum(by_agent.values()) == open_holds.count()
    oldest = min(open_holds.values_list("created_at", flat=True))
    age = metrics["reviewqueue_oldest_open_hold_age_seconds"][(("env", "default"),)]
    assert abs(age - (timezone.now() - oldest).total_seconds()) < 5
    soon = open_holds.filter(expires_at__gt=timezone.now(), expires_at__lte=timezone.now() + timedelta(minutes=15))
    assert metrics["reviewqueue_holds_expiring_soon"][(("env", "default"),)] == soon.count()
    assert soon.count() >= 1  # the samples include a hold about to expire


def test_decisions_are_counted_by_outcome_with_the_time_to_decide_and_to_deliver(
    scraper, samples, alice, platform_client, platform_state, immediate_delivery
):
    applied = decisions.submit(
        samples["h_13"], alice, approve_all(samples["h_13"]), duplicates_checked=every_duplicate(samples["h_13"])
    )
    delivery.deliver(applied.pk, platform_client)
    elsewhere = decisions.submit(
        samples["h_12"], alice, approve_all(samples["h_12"]), duplicates_checked=every_duplicate(samples["h_12"])
    )
    platform_state.decide_elsewhere("default", "h_12", "bob@example.com")
    delivery.deliver(elsewhere.pk, platform_client)

    metrics = scraper()

    outcomes = metrics["reviewqueue_decisions_total"]
    assert outcomes == {(("outcome", "applied"),): 1, (("outcome", "not_applied"),): 1, (("outcome", "withdrawn"),): 0}
    assert metrics["reviewqueue_time_to_decide_seconds_count"][()] == 2
    assert metrics["reviewqueue_time_to_decide_seconds_bucket"][(("le", "+Inf"),)] == 2
    assert metrics["reviewqueue_delivery_latency_seconds_count"][()] == 1
    applied.refresh_from_db()
    latency = (applied.finished_at - applied.created_at).total_seconds()
    assert metrics["reviewqueue_delivery_latency_seconds_sum"][()] == pytest.approx(latency, abs=0.01)
    assert metrics["reviewqueue_delivery_latency_seconds_bucket"][(("le", "10.0"),)] == 1  # a local platform: fast


def test_a_decision_the_platform_keeps_refusing_is_a_delivery_in_retry_with_its_age(
    scraper, samples, alice, platform_client, platform_state, immediate_delivery
):
    decision = decisions.submit(
        samples["h_13"], alice, approve_all(samples["h_13"]), duplicates_checked=every_duplicate(samples["h_13"])
    )
    platform_state.push_faults([{"status": 503}])
    assert delivery.deliver(decision.pk, platform_client) is not None  # a retry is due
    Decision.objects.filter(pk=decision.pk).update(delivery_started_at=timezone.now() - timedelta(minutes=11))

    metrics = scraper()

    assert metrics["reviewqueue_deliveries_retrying"][()] == 1
    assert metrics["reviewqueue_oldest_retrying_delivery_seconds"][()] >= 11 * 60


def test_each_sync_is_counted_per_env_with_its_failures_and_duration(scraper, samples, platform_client, platform_state):
    platform_state.push_faults([{"status": 503}])
    sync.sync_env(platform_client, "default")  # fails: the platform is unavailable

    metrics = scraper()

    env = (("env", "default"),)
    assert metrics["reviewqueue_syncs_total"][env] == 2  # the samples' sync, then this one
    assert metrics["reviewqueue_sync_failures_total"][env] == 1
    assert 0 <= metrics["reviewqueue_sync_failing_seconds"][env] < 60  # failing since this last sync
    assert metrics["reviewqueue_last_sync_success_timestamp_seconds"][env] < timezone.now().timestamp()
    assert metrics["reviewqueue_sync_duration_seconds_total"][env] > 0
    assert metrics["reviewqueue_last_sync_duration_seconds"][env] == SyncStats.objects.get(env="default").last_seconds


@pytest.mark.django_db(transaction=True)
def test_a_sync_whose_counters_cannot_be_written_still_fails_with_its_own_error(
    platform_client, platform_state, monkeypatch
):
    from django.db import connection

    platform_state.add_hold("default", {})
    monkeypatch.setattr(writing, "store_listed", lambda *arguments: 1 / 0)
    with connection.cursor() as cursor:  # the counters' table is gone: recording the sync fails for real
        cursor.execute("ALTER TABLE operations_syncstats RENAME TO operations_syncstats_away")
    try:
        with pytest.raises(ZeroDivisionError):
            sync.sync_env(platform_client, "default")
    finally:
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE operations_syncstats_away RENAME TO operations_syncstats")

    state = SyncState.objects.get(env="default")
    assert state.failing and "ZeroDivisionError" in state.last_error
    assert not SyncStats.objects.exists()


def test_notifications_are_counted_sent_and_failed_per_channel(scraper, alice):
    now = timezone.now()
    common = {"event": "new_holds", "title": "t", "body": "b", "created_at": now, "next_attempt_at": now, "user": alice}
    Notification.objects.create(subject_key="1", channel="email", recipient_key="user:1", status="sent", **common)
    Notification.objects.create(subject_key="2", channel="email", recipient_key="user:1", status="failed", **common)
    Notification.objects.create(subject_key="3", channel="in_app", recipient_key="user:1", status="sent", **common)
    Notification.objects.create(
        subject_key="4", channel="webhook", recipient_key="webhook:1", status="pending", **common
    )
    Notification.objects.create(subject_key="5", channel="push", recipient_key="push:1", status="sent", **common)
    Notification.objects.create(subject_key="6", channel="push", recipient_key="push:2", status="pruned", **common)

    metrics = scraper()

    assert metrics["reviewqueue_notifications_sent_total"] == {
        (("channel", "email"),): 1,
        (("channel", "in_app"),): 1,
        (("channel", "push"),): 1,
        (("channel", "webhook"),): 0,
    }
    assert metrics["reviewqueue_notifications_failed_total"][(("channel", "email"),)] == 1
    assert metrics["reviewqueue_push_pruned_total"] == {(): 1}


def test_the_audit_chain_status_appears_once_verified_and_shows_a_break(scraper, samples):
    from tests.helpers.tampering import tamper

    assert "reviewqueue_audit_chain_intact" not in scraper()  # never verified: no sample rather than a guess

    auditcheck.verify_and_record()
    intact = scraper()
    tamper("UPDATE audit_auditevent SET actor_name = 'mallory' WHERE sequence = 1")
    auditcheck.verify_and_record()
    broken = scraper()

    assert intact["reviewqueue_audit_chain_intact"][()] == 1
    assert abs(intact["reviewqueue_audit_chain_verified_timestamp_seconds"][()] - timezone.now().timestamp()) < 60
    assert broken["reviewqueue_audit_chain_intact"][()] == 0


def test_hostile_agent_names_are_escaped_and_cannot_flood_the_series(scraper, samples, settings):
    from operations import metrics as metrics_module

    template = Hold.objects.filter(status="open").first()
    hostile = 'evil"} reviewqueue_decisions_total{outcome="applied"} 999\n#'
    agents = [hostile, hostile] + [f"agent-{n}" for n in range(metrics_module.MAX_AGENT_SERIES + 5)]
    for index, agent in enumerate(agents):
        template.pk, template.hold_id, template.agent = None, f"flood-{index}", agent
        template.save()

    metrics = scraper()

    by_agent = metrics["reviewqueue_open_holds"]
    assert by_agent[(("agent", hostile), ("env", "default"))] == 2
    assert len(by_agent) == metrics_module.MAX_AGENT_SERIES + 1  # the rest summed as "(other)"
    assert sum(by_agent.values()) == Hold.objects.filter(status="open").count()
    assert metrics["reviewqueue_decisions_total"][(("outcome", "applied"),)] == 0


def test_an_agent_named_like_the_roll_up_is_summed_into_it_not_given_a_second_series(scraper, samples):
    from operations import metrics as metrics_module

    template = Hold.objects.filter(status="open").first()
    # Three holds put "(other)" in the top series; five more agents than fit spill over into the roll-up.
    agents = [metrics_module.OTHER_AGENTS] * 3 + [f"agent-{n}" for n in range(metrics_module.MAX_AGENT_SERIES + 5)]
    for index, agent in enumerate(agents):
        template.pk, template.hold_id, template.agent = None, f"other-{index}", agent
        template.save()

    by_agent = scraper()["reviewqueue_open_holds"]

    # Two series labelled "(other)" would collapse into one here, and the sum would fall short.
    assert len(by_agent) == metrics_module.MAX_AGENT_SERIES + 1
    assert sum(by_agent.values()) == Hold.objects.filter(status="open").count()
    assert by_agent[(("agent", metrics_module.OTHER_AGENTS), ("env", "default"))] >= 3


@pytest.mark.django_db(transaction=True)
def test_counts_from_a_real_worker_are_what_any_web_process_scrapes(celery_processes, scraper, settings):
    """Syncs and the audit check run in a separate Celery process; the scrape reads what it wrote."""
    from operations import tasks as operations_tasks

    celery_processes("worker")
    from holds import tasks as holds_tasks

    holds_tasks.sync_holds.delay()
    holds_tasks.sync_holds.delay()
    operations_tasks.verify_audit_chain.delay()

    wait_until(lambda: SyncStats.objects.filter(env="default", syncs=2).exists())
    metrics = wait_until(lambda: (m := scraper()).get("reviewqueue_audit_chain_intact") and m)

    assert metrics["reviewqueue_syncs_total"][(("env", "default"),)] == 2
    assert metrics["reviewqueue_audit_chain_intact"][()] == 1


def test_decision_counters_grow_scrape_by_scrape_and_catch_up_on_history_in_chunks(
    scraper, samples, alice, platform_client, immediate_delivery, monkeypatch
):
    from operations import decisionstats

    first = decisions.submit(
        samples["h_13"], alice, approve_all(samples["h_13"]), duplicates_checked=every_duplicate(samples["h_13"])
    )
    delivery.deliver(first.pk, platform_client)
    monkeypatch.setattr(decisionstats, "FOLD_CHUNK", 3)  # the history is longer than one chunk

    scrapes = [scraper()["reviewqueue_decisions_total"][(("outcome", "applied"),)] for _ in range(10)]
    second = decisions.submit(
        samples["h_12"], alice, approve_all(samples["h_12"]), duplicates_checked=every_duplicate(samples["h_12"])
    )
    delivery.deliver(second.pk, platform_client)
    later = [scraper() for _ in range(5)][-1]  # three events a chunk: a few scrapes bring in the new ones

    assert scrapes[0] == 0 and scrapes[-1] == 1 and scrapes == sorted(scrapes)  # caught up, never going back
    assert later["reviewqueue_decisions_total"][(("outcome", "applied"),)] == 2
    assert later["reviewqueue_time_to_decide_seconds_count"][()] == 2


# One decision on the quickstart's SQLite: submitted 6 minutes after its hold appeared, applied 3 s later.
SQLITE_DECISION = """
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.utils import timezone
from audit.models import AuditEvent, EventKind
from holds.models import Decision, Hold
from operations import decisionstats, metrics

now = timezone.now()
hold = Hold.objects.create(
    env="default", hold_id="h1", run_id="r1", agent="a", capability="c", question="q", payload={}, payload_digest="d",
    created_at=now - timedelta(minutes=10), first_seen_at=now, last_synced_at=now,
)
decision = Decision.objects.create(
    hold=hold, reviewer=get_user_model().objects.create(username="r"), next_attempt_at=now,
    created_at=now - timedelta(minutes=4), finished_at=now - timedelta(minutes=4) + timedelta(seconds=3),
)
AuditEvent.objects.bulk_create([
    AuditEvent(sequence=1, at=now, kind=EventKind.DECISION_SUBMITTED, decision=decision, prev_hash="0", hash="1"),
    AuditEvent(sequence=2, at=now, kind=EventKind.APPLIED, decision=decision, prev_hash="1", hash="2"),
])
families = {family.name for family in metrics.ReviewQueueCollector().collect()}
print(decisionstats.outcomes()["applied"], decisionstats.histogram("time_to_decide")[1:],
      decisionstats.histogram("delivery_latency")[1:], "reviewqueue_decisions" in families)
"""


def test_the_decision_counters_fold_on_the_quickstarts_sqlite_too(tmp_path_factory, tmp_path):
    from tests.helpers.preloaded import start_django
    from tests.helpers.quickstart_db import migrated_var_dir

    var_dir = migrated_var_dir(tmp_path_factory, tmp_path / "var")
    started = start_django(SQLITE_DECISION, REVIEWQUEUE_VAR_DIR=str(var_dir))

    assert started.returncode == 0, started.stderr
    assert started.stdout.split("\n")[-2] == "1 (1, 360.0) (1, 3.0) True"


@pytest.mark.parametrize("value", ["10.0.0.0/33", "localhost", "10.0.0.1,,nonsense"])
def test_a_malformed_allow_list_stops_start_up_naming_the_variable(value, tmp_path):
    from tests.helpers.preloaded import start_django

    started = start_django(METRICS_ALLOWED_IPS=value, REVIEWQUEUE_VAR_DIR=str(tmp_path))

    assert started.returncode != 0
    assert "METRICS_ALLOWED_IPS must list IP addresses or networks" in started.stderr.splitlines()[-1]


def test_assignments_and_notes_are_counted_by_assignee_with_the_oldest_assignments_age(scraper, samples, alice, bob):
    first, second, third = list(Hold.objects.filter(status="open").order_by("pk"))[:3]
    finance = Group.objects.create(name="Finance leads")
    with time_machine.travel(timezone.now() - timedelta(hours=2)):
        assignments.assign(first, bob, "", by=alice)
    assignments.assign(second, bob, "", by=alice)
    assignments.assign(third, finance, "", by=alice)
    notes.add_note(first, alice, "the address looks wrong")
    notes.add_note(first, bob, "checked: it is right")
    notes.add_note(second, alice, "fine")

    metrics = scraper()

    assert metrics["reviewqueue_open_holds_assigned"] == {
        (("assignee", "bob"),): 2,
        (("assignee", "Finance leads"),): 1,
    }
    assert abs(metrics["reviewqueue_oldest_open_assignment_age_seconds"][()] - 7200) < 60
    notes_per_hold = metrics["reviewqueue_notes_per_open_hold_bucket"]
    open_count = Hold.objects.filter(status="open").count()
    assert notes_per_hold[(("le", "0"),)] == open_count - 2
    assert notes_per_hold[(("le", "1"),)] == open_count - 1
    assert notes_per_hold[(("le", "+Inf"),)] == open_count
    assert metrics["reviewqueue_notes_per_open_hold_sum"][()] == 3
