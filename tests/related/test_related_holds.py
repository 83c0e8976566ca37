"""A hold's related holds and possible duplicates, on the simulator's sample holds mirrored by a real sync: the four
refunds of order A-1001 (h_12 LlamaIndex, h_13 Upsonic, h_14 Agno, h_15 OpenAI Agents SDK) find one another."""

from datetime import timedelta

import pytest
from django.utils import timezone

from holds.deciding import decisions
from holds.mirror import sync
from holds.models import Hold, HoldSubject, SubjectKeys
from holds.related import duplicates, related
from teams.scopes import viewer_of
from tests.helpers.duplicates import every_duplicate
from tests.helpers.handoff import approve_all
from tests.helpers.users import make_user, scoped_group

pytestmark = pytest.mark.django_db

A_1001 = {"h_12", "h_13", "h_14", "h_15"}


def duplicate_ids(hold) -> set[str]:
    return {duplicate.hold.hold_id for duplicate in duplicates.possible_duplicates(hold)}


def test_the_four_refunds_of_a_1001_are_possible_duplicates_of_one_another(samples):
    for hold_id in A_1001:
        assert duplicate_ids(samples[hold_id]) == A_1001 - {hold_id}, hold_id


def test_the_subjects_are_stored_as_sync_mirrors_them(samples):
    rows = HoldSubject.objects.filter(hold__hold_id="h_13").order_by("position")

    assert [(row.position, row.key, row.value, row.capability, row.action_kind) for row in rows] == [
        (0, "order_id", "a-1001", "support", "refund"),
        (1, "order_id", "a-1002", "support", "refund"),
    ]
    assert HoldSubject.objects.get(hold__hold_id="h_12").action_kind == ""
    assert not HoldSubject.objects.filter(hold__hold_id="h_19", value="call_1").exists()


def test_a_hold_on_another_order_or_of_another_kind_is_related_at_most(samples):
    assert duplicate_ids(samples["h_17"]) == set()
    assert duplicate_ids(samples["h_20"]) == set()
    shared = related.every_related(samples["h_13"])
    assert {found.hold.hold_id for found in shared} == A_1001 - {"h_13"}
    first = next(found for found in shared if found.hold.hold_id == "h_12")
    assert [(one.key, one.shown, one.other_key) for one in first.shared] == [("order_id", "A-1001", "order_id")]
    assert (
        first.is_open and first.reported == "Open" and [item.item_id for item in first.hold.items.all()] == ["A-1001"]
    )


def test_a_hold_decided_within_the_window_is_related_and_its_approval_counts(samples, platform_state, platform_client):
    platform_state.decide_elsewhere("default", "h_14", "bob@example.com")
    sync.sync_env(platform_client, "default")

    found = {one.hold.hold_id: one for one in related.every_related(samples["h_15"])}
    approved = duplicates.approved_on_subject(samples["h_15"])

    assert found["h_14"].hold.status == Hold.Status.DECIDED and not found["h_14"].is_open
    assert found["h_14"].decided_by == "bob@example.com" and found["h_14"].reported == "Decided by bob@example.com"
    assert duplicate_ids(samples["h_15"]) == A_1001 - {"h_15"}
    assert [(one.hold.hold_id, one.shown, str(one.amount), one.by) for one in approved] == [
        ("h_14", "A-1001", "49.9000", "bob@example.com")
    ]


def test_a_hold_closed_before_the_window_is_neither_related_nor_a_duplicate(samples, platform_state, platform_client):
    platform_state.decide_elsewhere("default", "h_14", "bob@example.com")
    sync.sync_env(platform_client, "default")
    Hold.objects.filter(hold_id="h_14").update(closed_at=timezone.now() - timedelta(days=31))

    assert "h_14" not in {one.hold.hold_id for one in related.every_related(samples["h_15"])}
    assert duplicate_ids(samples["h_15"]) == {"h_12", "h_13"}


def test_a_hold_rejected_elsewhere_is_related_but_no_duplicate(samples, platform_state, platform_client):
    platform_state.decide_elsewhere("default", "h_14", "bob@example.com")
    sync.sync_env(platform_client, "default")
    Hold.objects.filter(hold_id="h_14").update(
        platform_decision={"items": [{"id": "call_1", "action": "reject"}], "decided_by": "bob@example.com"}
    )

    assert "h_14" in {one.hold.hold_id for one in related.every_related(samples["h_15"])}
    assert duplicate_ids(samples["h_15"]) == {"h_12", "h_13"}


def test_a_decision_platform_reports_unreadably_counts_as_approving_everything(
    samples, platform_state, platform_client
):
    platform_state.decide_elsewhere("default", "h_14", "bob@example.com")
    sync.sync_env(platform_client, "default")
    Hold.objects.filter(hold_id="h_14").update(platform_decision={"items": "all of them"})

    approved = duplicates.approved_on_subject(samples["h_15"])

    assert "h_14" in duplicate_ids(samples["h_15"])
    assert [(one.hold.hold_id, one.certain) for one in approved] == [("h_14", False)]


def test_a_decision_made_here_names_its_reviewer(samples, alice):
    decisions.submit(
        samples["h_12"], alice, approve_all(samples["h_12"]), duplicates_checked=every_duplicate(samples["h_12"])
    )

    approved = duplicates.approved_on_subject(samples["h_14"])
    found = next(one for one in related.every_related(samples["h_14"]) if one.hold.hold_id == "h_12")

    assert [(one.hold.hold_id, str(one.amount), one.by) for one in approved] == [("h_12", "49.9000", "Alice Adams")]
    assert found.decided_by == "Alice Adams" and found.reported == "Sending the decision"


def test_a_viewer_sees_only_related_holds_in_their_scopes_and_the_safeguards_count_all(samples):
    agno_only = make_user("carol")
    agno_only.groups.add(scoped_group("agno", agent="support-agno"))
    viewer = viewer_of(agno_only)

    seen = {one.hold.hold_id for one in related.visible_related(samples["h_15"], viewer)}
    seen_duplicates = {one.hold.hold_id for one in duplicates.visible_duplicates(samples["h_15"], viewer)}

    assert seen == seen_duplicates == {"h_14"}
    assert duplicate_ids(samples["h_15"]) == A_1001 - {"h_15"}


def test_keys_an_admin_adds_are_read_for_holds_mirrored_from_then_on(platform_client, platform_state, db):
    SubjectKeys.objects.create(agent="support-agno", keys_added="sku")
    for hold_id in ("h_a", "h_b"):
        platform_state.add_hold(
            "default",
            {
                "hold_id": hold_id,
                "agent": "support-agno",
                "items": [{"id": "call_1", "title": "replace", "data": {"sku": "LAMP-1"}}],
            },
        )
    sync.sync_env(platform_client, "default")

    assert duplicate_ids(Hold.objects.get(hold_id="h_a")) == {"h_b"}


def test_finding_duplicates_reads_a_few_queries(samples, django_assert_max_num_queries):
    with django_assert_max_num_queries(4):
        duplicates.possible_duplicates(samples["h_13"])


def test_the_queue_s_flags_name_the_others_in_one_query(samples, django_assert_num_queries):
    pks = [hold.pk for hold in samples.values()]

    with django_assert_num_queries(1):
        flags = duplicates.flagged(pks, None)

    by_id = {Hold.objects.get(pk=pk).hold_id: flag for pk, flag in flags.items()}
    assert set(by_id) == A_1001
    assert by_id["h_12"] == duplicates.Flag(("h_13",), 2)
    assert set(Hold.objects.filter(duplicates.flagged_q(None)).values_list("hold_id", flat=True)) == A_1001


def test_the_queue_s_flags_follow_the_platform_s_report(samples, platform_state, platform_client):
    platform_state.decide_elsewhere("default", "h_14", "bob@example.com")
    platform_state.decide_elsewhere("default", "h_15", "bob@example.com")
    sync.sync_env(platform_client, "default")
    Hold.objects.filter(hold_id="h_15").update(closed_at=timezone.now() - timedelta(days=31))
    platform_state.add_hold(
        "default",
        {
            "hold_id": "h_late",
            "agent": "support-agno",
            "items": [{"id": "call_1", "title": "refund", "data": {"order_id": "A-1001"}}],
        },
    )
    sync.sync_env(platform_client, "default")

    flagged = set(Hold.objects.filter(duplicates.flagged_q(None), status="open").values_list("hold_id", flat=True))
    late = Hold.objects.get(hold_id="h_late")

    assert flagged == {"h_12", "h_13", "h_late"}
    assert duplicates.flagged([late.pk], None)[late.pk] == duplicates.Flag(("h_12",), 2)
    assert duplicate_ids(late) == {"h_12", "h_13", "h_14"}


def test_an_admin_sets_subject_keys_and_the_audit_records_it(client):
    from audit.models import AuditEvent

    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    form = {"agent": "support-agno", "capability": "", "keys_added": "sku", "keys_removed": "item id"}

    response = client.post("/admin/holds/subjectkeys/add/", form)

    assert response.status_code == 302
    assert SubjectKeys.objects.get().keys_added == "sku"
    assert AuditEvent.objects.filter(kind="setting_changed").count() == 1
