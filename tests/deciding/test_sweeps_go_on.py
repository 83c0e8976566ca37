"""One bad hold never stops a sweep (issue 45): the others are handled, the bad one is left to people, logged with
its id and counted in /metrics.

A refund asking 20,000,000,000,000,000.00 under a policy needing 0 people used to fail every run of the
policies' sweep with a numeric overflow, and no other hold was approved by itself again. The reader now
leaves such an amount to people; and whatever else fails on one hold, each sweep goes on with the others.
Failures other than that amount are forced here on one hold, by making one step raise for it alone.
"""

from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.utils import timezone

from approvals import escalation, policies, rounds
from approvals.models import ApprovalPolicy, AwaitedStage, Escalation, PolicyDecision
from holds import tasks
from holds.deciding import by_policy, decisions, delivery
from holds.mirror import sync
from holds.models import Decision, Hold
from holds.sweeps import expiry
from notifications import notify
from notifications import tasks as notification_tasks
from notifications.models import Notification
from operations.models import SweepStats
from reviewqueue import agent_numbers
from teams import scopes
from tests.helpers import escalation as escalating
from tests.helpers.approvals_setup import add_refund, signed_in
from tests.helpers.chains import desk
from tests.helpers.duplicates import every_duplicate
from tests.helpers.waiting import wait_until

pytestmark = pytest.mark.django_db

HUGE = "100000000000000000.00"  # 10^17: more than any amount column holds (< 10^16)


def refunds_alone() -> ApprovalPolicy:
    """Every refund approves itself, at once, with no daily cap: the policy of the finding."""
    return ApprovalPolicy.objects.create(name="refunds alone", capability_pattern="refund", approvals_required=0)


def failing_for(monkeypatch, owner, name: str, bad) -> None:
    """Make ``owner.name`` raise whenever it is called about ``bad`` (a hold or a decision, alone or in a list), and
    work as before otherwise: a failure forced on one hold."""
    real = getattr(owner, name)

    def about_bad(value) -> bool:
        if isinstance(value, list | tuple):
            return any(about_bad(one) for one in value)
        return value == bad or getattr(value, "hold", None) == bad or getattr(value, "pk", value) == bad

    def failing(*args, **kwargs):
        if any(about_bad(value) for value in (*args, *kwargs.values())):
            raise RuntimeError("a failure forced on one hold")
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, failing)


def failures() -> dict[str, int]:
    return dict(SweepStats.objects.values_list("sweep", "failures"))


def scraped_failures(client, settings) -> dict[str, float]:
    settings.METRICS_TOKEN = "scrape-token-0123456789abcdef"
    text = client.get("/metrics", headers={"Authorization": f"Bearer {settings.METRICS_TOKEN}"}).content.decode()
    prefix = 'reviewqueue_sweep_failures_total{sweep="'
    return {
        line[len(prefix) : line.index('"', len(prefix))]: float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith(prefix)
    }


def test_a_hold_asking_10_to_the_17_is_left_to_people_and_the_other_refunds_approve_themselves(
    platform_client, platform_state, alice
):
    refunds_alone()
    small = add_refund(platform_client, platform_state, "h_small", "20.00")
    huge = add_refund(platform_client, platform_state, "h_huge", HUGE)
    later = add_refund(platform_client, platform_state, "h_later", "30.00")

    made = by_policy.approve_due(timezone.now() + timedelta(seconds=1))

    assert {decision.hold for decision in made} == {small, later}
    assert not Decision.objects.filter(hold=huge).exists() and failures() == {}
    need = policies.requirement(huge, policies.all_policies())
    assert need.sure_total is None
    assert need.doubt == "amount '100000000000000000.00' is more than an amount can be"
    page = signed_in(alice).get(f"/holds/{huge.pk}/").content.decode()
    assert "leaves it to people, as amount &#x27;100000000000000000.00&#x27; is more than an amount can be" in page


def test_a_hold_that_still_fails_the_policies_sweep_is_counted_and_the_others_are_approved_on_the_next_sweep(
    platform_client, platform_state, monkeypatch, caplog, client, settings
):
    """The finding itself, with the reader's bound lifted: the overflow when the policy's decision is stored."""
    refunds_alone()
    small = add_refund(platform_client, platform_state, "h_small", "20.00")
    huge = add_refund(platform_client, platform_state, "h_huge", HUGE)
    monkeypatch.setattr(agent_numbers, "fits_amount_columns", lambda number: True)

    first = by_policy.approve_due(timezone.now() + timedelta(seconds=1))
    later = add_refund(platform_client, platform_state, "h_later", "30.00")
    second = tasks.approve_due_holds()

    assert [decision.hold for decision in first] == [small] and second == 1
    assert Decision.objects.get(hold=later).decided_by_policy == "refunds alone"
    assert not Decision.objects.filter(hold=huge).exists() and not PolicyDecision.objects.filter(hold=huge).exists()
    assert scraped_failures(client, settings) == {"policy_approvals": 2.0}  # tried again by the next sweep
    logged = [record for record in caplog.records if record.name == "reviewqueue.sweeping"]
    assert [record.hold_id for record in logged] == [huge.pk, huge.pk]
    assert "numeric field overflow" in logged[0].exc_text or "NumericValueOutOfRange" in logged[0].exc_text


def test_the_default_outcomes_go_on_past_a_hold_that_fails(platform_client, platform_state, monkeypatch):
    ApprovalPolicy.objects.create(
        name="refunds", capability_pattern="refund", approvals_required=2, expiry_outcome="reject",
        expiry_outcome_minutes=10,
    )  # fmt: skip
    expires_at = (timezone.now() + timedelta(hours=1)).isoformat()
    bad = add_refund(platform_client, platform_state, "h_bad", "20.00", expires_at=expires_at)
    good = add_refund(platform_client, platform_state, "h_good", "30.00", expires_at=expires_at)
    failing_for(monkeypatch, notify, "default_outcome", bad)

    made = by_policy.send_default_outcomes(timezone.now() + timedelta(minutes=55))

    assert [decision.hold for decision in made] == [good]
    assert not Decision.objects.filter(hold=bad).exists() and not PolicyDecision.objects.filter(hold=bad).exists()
    assert failures() == {"default_outcomes": 1}


def test_escalation_goes_on_past_a_hold_that_fails(platform_client, platform_state, monkeypatch, alice):
    policy = escalating.policy()
    alice.groups.add(policy.escalation_group)
    bad = escalating.add_refund(platform_client, platform_state, "h_bad")
    good = escalating.add_refund(platform_client, platform_state, "h_good")
    failing_for(monkeypatch, scopes, "users_who_may_see", bad)

    made = escalating.sweep_at(timezone.now() + timedelta(minutes=31))

    assert [escalation.hold for escalation in made] == [good]
    assert not Escalation.objects.filter(hold=bad).exists()
    assert Notification.objects.filter(event="escalated", hold=good, user=alice).exists()
    assert failures() == {"escalation": 1}
    with time_machine.travel(timezone.now() + timedelta(minutes=32), tick=False):
        monkeypatch.undo()
        assert [escalation.hold for escalation in escalation.sweep()] == [bad]  # its next sweep, once it can


def test_the_expiry_sweep_and_the_reminders_go_on_past_a_hold_that_fails(
    platform_client, platform_state, monkeypatch, alice, audrey
):
    soon = (timezone.now() + timedelta(minutes=10)).isoformat()
    holds = [add_refund(platform_client, platform_state, f"h_{n}", "20.00", expires_at=soon) for n in range(3)]
    bad = holds[1]
    failing_for(monkeypatch, notify, "expiring_soon", bad)
    failing_for(monkeypatch, notify, "expired", bad)

    reminded = expiry.remind()
    with time_machine.travel(timezone.now() + timedelta(minutes=11), tick=False):
        expired = expiry.sweep()

    assert reminded == [holds[0], holds[2]] and expired == [holds[0], holds[2]]
    assert not Notification.objects.filter(event="expiring_soon", hold=bad).exists()
    assert Notification.objects.filter(event="expiring_soon", hold=holds[0], user=alice).exists()
    assert [hold.status for hold in Hold.objects.order_by("hold_id")] == ["expired", "open", "expired"]
    assert Notification.objects.filter(event="expired", hold=holds[2], user=audrey).exists()
    assert failures() == {"reminders": 1, "expiry": 1}


def test_the_requeue_of_deliveries_and_the_alert_of_undelivered_ones_go_on_past_a_decision_that_fails(
    platform_client, platform_state, monkeypatch, alice, settings
):
    settings.DELIVERY_ALERT_MINUTES = 10
    holds = [add_refund(platform_client, platform_state, f"h_{n}", "20.00") for n in range(2)]
    made = [
        decisions.submit(
            hold,
            alice,
            [decisions.ItemChoice(f"A-{hold.hold_id}", "approve")],
            duplicates_checked=every_duplicate(hold),
        )
        for hold in holds
    ]
    Decision.objects.update(next_attempt_at=timezone.now() - timedelta(minutes=5))
    queued = []
    monkeypatch.setattr(tasks.deliver_decision, "delay", queued.append)
    failing_for(monkeypatch, tasks.deliver_decision, "delay", made[0].pk)
    failing_for(monkeypatch, notify, "undelivered", made[0])

    requeued = tasks.requeue_due_decisions()
    with time_machine.travel(timezone.now() + timedelta(minutes=11), tick=False):
        alerted = delivery.alert_undelivered()

    assert requeued == queued == [made[1].pk]
    assert alerted == [made[1]]
    assert not Notification.objects.filter(event="undelivered", decision=made[0]).exists()
    assert failures() == {"delivery_requeue": 1, "undelivered_alerts": 1}


def test_the_requeue_of_notifications_goes_on_past_one_that_fails(monkeypatch, alice, bob):
    lost = timezone.now() - timedelta(hours=1)
    pending = [
        Notification.objects.create(
            event="expiring_soon", subject_key="hold:1", channel="email", recipient_key=f"user:{user.pk}", user=user,
            title="Expires in 5 min", body="", created_at=lost, next_attempt_at=lost,
        ).pk
        for user in (alice, bob)
    ]  # fmt: skip
    queued = []
    monkeypatch.setattr(notification_tasks.send_notification, "delay", queued.append)
    failing_for(monkeypatch, notification_tasks.send_notification, "delay", pending[0])

    requeued = notification_tasks.requeue_due_notifications()

    assert requeued == queued == pending[1:]
    assert failures() == {"notification_requeue": 1}


@pytest.fixture
def refusing_the_policys_decision_of():
    """A database trigger refusing the policy's record of one hold's decision, whichever process writes it."""
    made = []

    def refuse(hold: Hold) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "CREATE FUNCTION refuse_for_the_test() RETURNS trigger AS $$ "
                "BEGIN RAISE EXCEPTION 'refused for the test'; END $$ LANGUAGE plpgsql"
            )
            cursor.execute(
                "CREATE TRIGGER refuse_for_the_test BEFORE INSERT ON approvals_policydecision FOR EACH ROW "
                f"WHEN (NEW.hold_id = {int(hold.pk)}) EXECUTE FUNCTION refuse_for_the_test()"
            )
        made.append(hold)

    yield refuse
    if made:
        with connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER refuse_for_the_test ON approvals_policydecision")
            cursor.execute("DROP FUNCTION refuse_for_the_test()")


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_counts_the_failure_and_the_web_shows_it_in_metrics(
    celery_processes, platform_client, platform_state, refusing_the_policys_decision_of, client, settings, tmp_path
):
    refunds_alone()
    holds = [add_refund(platform_client, platform_state, f"h_{n}", "20.00") for n in range(3)]
    refusing_the_policys_decision_of(holds[1])
    celery_processes("worker")

    tasks.approve_due_holds.delay()

    def approved() -> set[str]:
        return set(Decision.objects.values_list("hold__hold_id", flat=True))

    # The failure is counted as the sweep meets it, before it goes on to the holds after the bad one.
    wait_until(lambda: scraped_failures(client, settings) == {"policy_approvals": 1.0} and len(approved()) == 2)
    assert approved() == {"h_0", "h_2"}
    logged = (tmp_path / "worker.log").read_text()
    assert f"sweep policy_approvals failed on hold_id={holds[1].pk}" in logged and "refused for the test" in logged


def refund_over_a_thousand(platform_state, hold_id: str, amount: str = "1500.00") -> None:
    platform_state.add_hold(
        "default",
        {
            "hold_id": hold_id,
            "capability": "refund",
            "items": [{"id": "r1", "title": "refund", "data": {"order_id": f"A-{hold_id}", "amount": amount}}],
        },
    )


def failing_in_the_database_for(monkeypatch, hold_id: str) -> None:
    """Make working out the approval requirement of the hold ``hold_id`` fail in the database: only a savepoint lets
    the transaction around it go on."""
    real = policies.requirement

    def failing(hold, *args, **kwargs):
        if hold.hold_id == hold_id:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1 / 0")
        return real(hold, *args, **kwargs)

    monkeypatch.setattr(policies, "requirement", failing)  # as stamping a new hold reads it
    monkeypatch.setattr(rounds, "requirement", failing)  # as refreshing a changed hold's standing does


def test_a_new_hold_whose_chain_cannot_be_worked_out_is_mirrored_without_its_stages_and_the_others_get_theirs(
    platform_client, platform_state, monkeypatch, caplog
):
    """Sync stamps a new hold's first stages in its own transaction: one hold failing there fails alone."""
    desk()  # refunds over 1,000: Support leads, then Finance alongside Legal
    failing_in_the_database_for(monkeypatch, "h_bad")
    for hold_id in ("h_good", "h_bad", "h_other"):
        refund_over_a_thousand(platform_state, hold_id)

    sync.sync_env(platform_client, "default")

    bad = Hold.objects.get(hold_id="h_bad")
    stamped = dict(AwaitedStage.objects.values_list("hold__hold_id", "group__name"))
    assert set(Hold.objects.values_list("hold_id", flat=True)) == {"h_good", "h_bad", "h_other"}
    assert stamped == {"h_good": "Support leads", "h_other": "Support leads"}
    assert failures() == {"awaited_stages": 1}
    logged = [record for record in caplog.records if record.name == "reviewqueue.sweeping"]
    failed = [record for record in logged if record.exc_info]  # not the note that the batch is tried hold by hold
    assert [record.hold_id for record in failed] == [bad.pk] and "division by zero" in failed[0].exc_text


def test_a_changed_hold_whose_chain_cannot_be_worked_out_keeps_its_stages_and_the_others_are_refreshed(
    platform_client, platform_state, monkeypatch
):
    desk()
    for hold_id in ("h_good", "h_bad"):
        refund_over_a_thousand(platform_state, hold_id)
    sync.sync_env(platform_client, "default")
    AwaitedStage.objects.update(group=None)  # what a refresh would set right again
    failing_in_the_database_for(monkeypatch, "h_bad")
    for hold_id in ("h_good", "h_bad"):
        platform_state.get_hold("default", hold_id)["question"] = "Refund, asked again?"

    sync.sync_env(platform_client, "default")

    stamped = dict(AwaitedStage.objects.values_list("hold__hold_id", "group__name"))
    assert stamped == {"h_good": "Support leads", "h_bad": None}
    assert failures() == {"awaited_stages": 1}
