"""An admin's change of subject keys reaches the holds already stored: a worker reads their items again, so that two
holds that became possible duplicates under the new keys are flagged, and two that no longer are, are not."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from holds import tasks
from holds.mirror import sync
from holds.models import Hold, HoldItem, HoldSubject, SubjectKeys, SubjectRereading
from holds.related import duplicates, stored
from operations.models import SweepStats
from tests.helpers.users import make_user
from tests.helpers.waiting import wait_until


def lamp(platform_state, hold_id: str, agent: str = "support-agno", sku: str = "LAMP-1") -> None:
    platform_state.add_hold(
        "default",
        {"hold_id": hold_id, "agent": agent, "items": [{"id": "call_1", "title": "replace", "data": {"sku": sku}}]},
    )


def duplicate_ids(hold_id: str) -> set[str]:
    hold = Hold.objects.get(hold_id=hold_id)
    return {duplicate.hold.hold_id for duplicate in duplicates.possible_duplicates(hold)}


@pytest.fixture
def admin_client(client):
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    return client


@pytest.mark.django_db(transaction=True)
def test_a_key_an_admin_adds_is_read_for_the_holds_already_stored_by_a_real_worker(
    celery_processes, admin_client, platform_client, platform_state
):
    for hold_id in ("h_a", "h_b"):
        lamp(platform_state, hold_id)
    sync.sync_env(platform_client, "default")
    before = duplicate_ids("h_a")
    celery_processes("worker")

    added = admin_client.post(
        "/admin/holds/subjectkeys/add/",
        {"agent": "support-agno", "capability": "", "keys_added": "sku", "keys_removed": ""},
    )

    assert added.status_code == 302
    assert before == set()
    assert wait_until(lambda: not SubjectRereading.objects.exists(), timeout=30)
    assert duplicate_ids("h_a") == {"h_b"} and duplicate_ids("h_b") == {"h_a"}
    assert set(HoldSubject.objects.values_list("key", "value")) == {("sku", "lamp-1")}


@pytest.mark.django_db
def test_keys_taken_away_and_an_agent_renamed_are_read_again_for_both_agents(
    admin_client, platform_client, platform_state, django_capture_on_commit_callbacks
):
    keys = SubjectKeys.objects.create(agent="support-agno", keys_added="sku")
    for hold_id, agent in (("h_a", "support-agno"), ("h_b", "support-agno"), ("h_c", "upsonic-support")):
        lamp(platform_state, hold_id, agent)
    sync.sync_env(platform_client, "default")
    flagged_at_first = duplicate_ids("h_a")

    with django_capture_on_commit_callbacks() as queued:
        renamed = admin_client.post(
            f"/admin/holds/subjectkeys/{keys.pk}/change/",
            {"agent": "upsonic-support", "capability": "", "keys_added": "sku", "keys_removed": ""},
        )
    asked = set(SubjectRereading.objects.values_list("agent", flat=True))
    read = tasks.reread_subjects()

    assert flagged_at_first == {"h_b"} and renamed.status_code == 302
    assert len(queued) == 1 and asked == {"support-agno", "upsonic-support"}
    assert read == 3 and not SubjectRereading.objects.exists()
    assert duplicate_ids("h_a") == set() and duplicate_ids("h_c") == set()
    assert set(HoldSubject.objects.values_list("hold__hold_id", flat=True)) == {"h_c"}

    removed = admin_client.post(f"/admin/holds/subjectkeys/{keys.pk}/delete/", {"post": "yes"})
    tasks.reread_subjects()

    assert removed.status_code == 302 and not SubjectKeys.objects.exists()
    assert not HoldSubject.objects.exists()


@pytest.mark.django_db
def test_rereading_keeps_what_the_platform_reported_approved_and_skips_unreadable_items(
    platform_client, platform_state
):
    SubjectKeys.objects.create(agent="support-agno", keys_added="sku")
    lamp(platform_state, "h_a")
    lamp(platform_state, "h_bad", sku=["not", "a", "string"])
    lamp(platform_state, "h_long", sku="L" * 10_000)
    sync.sync_env(platform_client, "default")
    Hold.objects.filter(hold_id="h_a").update(
        status=Hold.Status.DECIDED, closed_at=timezone.now(), platform_decision={"decided_by": "bob@example.com"}
    )
    lamp(platform_state, "h_b")
    sync.sync_env(platform_client, "default")
    stored.ask_to_reread([("support-agno", "")])

    read = stored.reread_asked()

    assert read == 4
    assert HoldSubject.objects.get(hold__hold_id="h_a").approved is True
    assert not HoldSubject.objects.filter(hold__hold_id__in=["h_bad", "h_long"]).exists()
    assert duplicate_ids("h_b") == {"h_a"}


@pytest.mark.django_db
def test_a_change_made_while_the_holds_are_read_leaves_its_request_for_the_next_run(monkeypatch):
    stored.ask_to_reread([("support-agno", "")])
    reading = stored.reread

    def changed_meanwhile(agent, capability):
        stored.ask_to_reread([(agent, capability)])
        return reading(agent, capability)

    monkeypatch.setattr(stored, "reread", changed_meanwhile)
    stored.reread_asked()
    left = SubjectRereading.objects.count()
    monkeypatch.setattr(stored, "reread", reading)
    stored.reread_asked()

    assert left == 1 and not SubjectRereading.objects.exists()
    assert settings.CELERY_BEAT_SCHEDULE["reread-subjects"]["task"] == stored.REREAD_TASK


@pytest.mark.django_db
def test_a_run_leaves_the_holds_another_run_is_reading_until_that_run_lets_go(platform_client, platform_state):
    lamp(platform_state, "h_a")
    lamp(platform_state, "h_b")
    sync.sync_env(platform_client, "default")
    SubjectKeys.objects.create(agent="support-agno", keys_added="sku")
    stored.ask_to_reread([("support-agno", "")])
    SubjectRereading.objects.update(read_until=timezone.now() + timedelta(minutes=1))  # beat's run has it

    left = stored.reread_asked()
    flagged_meanwhile = duplicate_ids("h_b")
    SubjectRereading.objects.update(read_until=timezone.now() - timedelta(seconds=1))  # that run died
    read = stored.reread_asked()

    assert (left, flagged_meanwhile) == (0, set())
    assert read == 2 and duplicate_ids("h_b") == {"h_a"}
    assert not SubjectRereading.objects.exists()


@pytest.mark.django_db
def test_a_hold_whose_subjects_cannot_be_made_again_keeps_its_old_ones_and_the_others_are_read(
    platform_client, platform_state, monkeypatch
):
    for hold_id, sku in [("h_a", "LAMP-1"), ("h_bad", "LAMP-1"), ("h_b", "LAMP-1")]:
        lamp(platform_state, hold_id, sku=sku)
    sync.sync_env(platform_client, "default")
    SubjectKeys.objects.create(agent="support-agno", keys_added="sku")
    bad = Hold.objects.get(hold_id="h_bad")
    before = list(HoldSubject.objects.filter(hold=bad).values_list("key", "value"))
    real = stored.approved_positions

    def failing_for_the_bad_hold(status, items, decision):
        if any(item.data.get("forced") for item in items):
            raise RuntimeError("a failure forced on one hold")
        return real(status, items, decision)

    HoldItem.objects.filter(hold=bad).update(data={"sku": "LAMP-1", "forced": True})
    monkeypatch.setattr(stored, "approved_positions", failing_for_the_bad_hold)
    stored.ask_to_reread([("support-agno", "")])

    read = stored.reread_asked()

    assert read == 2 and duplicate_ids("h_b") == {"h_a"}
    assert list(HoldSubject.objects.filter(hold=bad).values_list("key", "value")) == before
    assert dict(SweepStats.objects.values_list("sweep", "failures")) == {stored.REREAD_SWEEP: 1}
