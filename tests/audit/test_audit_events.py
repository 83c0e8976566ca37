"""Every kind of audit event is written by the code path that causes it, not by the test.

The holds code paths (sync, claims, decisions, delivery, expiry, notifications) call
``audit.events`` themselves; sign-ins are recorded from their signals (``audit.sign_ins``), admin
changes by the admins (``audit.admin_changes``). Each test drives the real path and reads the trail.
"""

import ipaddress
import socket
from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth.models import Group
from django.urls import reverse
from django.utils import timezone

from audit import chain, describe
from audit.models import RETIRED_KINDS, AuditEvent, EventKind
from holds import lifecycle
from holds.deciding import decisions, delivery
from holds.deciding.decisions import ItemChoice
from holds.handover import assignments, notes
from holds.mirror import sync
from holds.models import Hold
from holds.sweeps import expiry
from notifications import sending
from notifications.models import Notification, WebhookChannel
from reviewqueue import roles
from tests.helpers.admin_forms import WEBHOOK_FORM, admin_form_data
from tests.helpers.users import make_user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_delivery")]

# The holds code paths call audit.events themselves; until each is wired, its test is expected to fail.


def trail(kind: str, **filters) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(kind=kind, **filters).order_by("sequence"))


def only(kind: str, **filters) -> AuditEvent:
    found = trail(kind, **filters)
    assert len(found) == 1, f"expected one {kind} event, found {len(found)}"
    return found[0]


@pytest.fixture(autouse=True)
def the_chain_holds_after_each_test():
    yield
    assert chain.verify().broken is None


@pytest.fixture
def root(db):
    return make_user("root", is_superuser=True, is_staff=True)


@pytest.fixture
def root_client(client, root):
    client.force_login(root)
    return client


# Sign-ins


def test_a_sign_in_is_recorded_with_the_user_and_address(client, alice):
    client.post(reverse("login"), {"username": "alice", "password": "pw"}, REMOTE_ADDR="203.0.113.7")

    event = only(EventKind.SIGNED_IN)
    assert event.actor == alice and event.payload["ip"] == "203.0.113.7"


def test_behind_a_trusted_proxy_a_sign_in_is_recorded_with_the_clients_address(client, alice, settings):
    settings.TRUSTED_PROXIES = [ipaddress.ip_network("10.0.0.2")]
    client.post(
        reverse("login"),
        {"username": "alice", "password": "pw"},
        REMOTE_ADDR="10.0.0.2",
        HTTP_X_FORWARDED_FOR="192.0.2.66, 203.0.113.7",  # the first hop is the client's word
    )

    assert only(EventKind.SIGNED_IN).payload["ip"] == "203.0.113.7"


def test_a_sign_in_not_through_a_trusted_proxy_is_recorded_with_its_own_address(client, alice, settings):
    settings.TRUSTED_PROXIES = [ipaddress.ip_network("10.0.0.2")]
    client.post(
        reverse("login"),
        {"username": "alice", "password": "pw"},
        REMOTE_ADDR="198.51.100.9",
        HTTP_X_FORWARDED_FOR="203.0.113.8",  # made up by the client: there is no proxy between it and the app
    )

    assert only(EventKind.SIGNED_IN).payload["ip"] == "198.51.100.9"


def test_failed_sign_ins_stay_out_of_the_trail_until_one_locks_the_account_out(client, alice, settings):
    def guess(password):
        client.post(reverse("login"), {"username": "alice", "password": password}, REMOTE_ADDR="198.51.100.9")

    for _ in range(settings.SIGN_IN_FAILURE_LIMIT - 1):
        guess("guess-123")
    assert not AuditEvent.objects.exists()

    guess("guess-123")
    for _ in range(3):
        guess("pw")  # refused during the lockout, and not recorded again

    event = only(EventKind.LOCKED_OUT)
    assert event.actor is None and event.actor_label == "anonymous"
    assert event.payload["username"] == "alice" and event.payload["ip"] == "198.51.100.9"
    assert event.payload["failures"] == settings.SIGN_IN_FAILURE_LIMIT
    assert "guess-123" not in str(event.payload)
    assert list(AuditEvent.objects.values_list("kind", flat=True)) == [EventKind.LOCKED_OUT]


# Role and setting changes in the admin


def test_giving_a_user_a_role_in_the_admin_names_the_admin_and_the_change(root_client, root, alice):
    url = reverse("admin:auth_user_change", args=[alice.pk])
    data = admin_form_data(root_client.get(url))
    data["groups"] = [str(Group.objects.get(name=roles.AUDITORS).pk)]
    data["is_staff"] = "on"

    response = root_client.post(url, data)

    assert response.status_code == 302
    event = only(EventKind.ROLE_CHANGED)
    assert event.actor == root
    assert event.payload["object"] == "alice" and event.payload["action"] == "changed"
    assert event.payload["changes"]["groups"] == {"added": ["Auditors"], "removed": ["Reviewers"]}
    assert event.payload["changes"]["fields"] == {"is_staff": [False, True]}
    assert event.payload["now"]["groups"] == ["Auditors"]


def test_making_a_superuser_in_the_admin_is_recorded(root_client, root, bob):
    url = reverse("admin:auth_user_change", args=[bob.pk])
    data = admin_form_data(root_client.get(url))
    data["is_superuser"] = "on"

    root_client.post(url, data)

    event = only(EventKind.ROLE_CHANGED)
    assert event.payload["changes"]["fields"] == {"is_superuser": [False, True]}


def test_changing_a_groups_permissions_in_the_admin_is_a_role_change(root_client, root):
    group = Group.objects.get(name=roles.REVIEWERS)
    url = reverse("admin:auth_group_change", args=[group.pk])
    data = admin_form_data(root_client.get(url))
    permission = root_client.get(url).context["adminform"].form.fields["permissions"].queryset.get(codename="view_user")
    data["permissions"] = [str(permission.pk)]

    root_client.post(url, data)

    event = only(EventKind.ROLE_CHANGED)
    assert event.payload["model"] == "auth.group" and event.payload["changes"]["permissions"]["added"] == [
        "auth.view_user"
    ]


def test_a_setting_changed_in_the_admin_is_recorded_without_its_secret(root_client, root):
    root_client.post(
        reverse("admin:notifications_webhookchannel_add"),
        WEBHOOK_FORM,
    )
    assert WebhookChannel.objects.get(name="ops").events == ["expired"]

    event = only(EventKind.SETTING_CHANGED)
    assert (
        event.actor == root
        and event.payload["model"] == "notifications.webhookchannel"
        and event.payload["action"] == "added"
    )
    assert "s3cr3t-value" not in str(event.payload)


# The holds code paths: sync, claims, decisions, delivery, expiry, notifications


def test_sync_records_each_new_hold_once_with_its_items(samples):
    hold = samples["h_13"]
    events = trail(EventKind.HOLD_SEEN)

    assert len(events) == len(samples)
    event = only(EventKind.HOLD_SEEN, hold_id="h_13")
    assert (event.env, event.run_id, event.agent, event.actor) == ("default", hold.run_id, hold.agent, None)
    assert event.item_ids == ["toolu_01A9xQ2mZ", "toolu_01B7kR4pW"]


def test_a_second_sync_records_no_hold_again(samples, platform_client):
    sync.sync_env(platform_client, "default")

    assert len(trail(EventKind.HOLD_SEEN)) == len(samples)


def test_claiming_taking_over_and_releasing_are_recorded(samples, alice, bob):
    hold = samples["h_12"]

    lifecycle.claim(hold, alice)
    lifecycle.take_over(hold, bob)
    lifecycle.release_claim(hold, bob)

    assert [
        (e.kind, e.actor_name)
        for e in AuditEvent.objects.filter(hold_id="h_12").exclude(kind="hold_seen").order_by("sequence")
    ] == [
        ("claimed", "alice"),
        ("taken_over", "bob"),
        ("released", "bob"),
    ]


def test_assigning_reassigning_unassigning_and_each_note_are_recorded_with_their_text(samples, alice, bob):
    hold = samples["h_12"]
    assignments.assign(hold, bob, "Check the order", by=alice)
    assignments.assign(hold, alice, "", by=bob)
    assignments.unassign(hold, alice, "Done")
    notes.add_note(hold, alice, "@bob the refund is fine")

    assert only(EventKind.ASSIGNED).payload == {"assignee": "bob", "assignee_kind": "person", "note": "Check the order"}
    assert only(EventKind.REASSIGNED).payload == {
        "assignee": "alice",
        "assignee_kind": "person",
        "note": "",
        "from": "bob",
    }
    assert (only(EventKind.UNASSIGNED).actor, only(EventKind.UNASSIGNED).payload) == (
        alice,
        {"from": "alice", "note": "Done"},
    )
    assert only(EventKind.NOTE_ADDED).payload["text"] == "@bob the refund is fine"
    assert only(EventKind.NOTE_ADDED).payload["told"] == ["bob"]


def test_a_submitted_decision_records_each_items_action_original_and_submitted_data_and_comment(samples, alice):
    hold = samples["h_13"]
    edited = {"order_id": "A-1002", "amount": "100.00", "reason": "changed mind"}

    decision = decisions.submit(
        hold,
        alice,
        [
            ItemChoice("toolu_01A9xQ2mZ", "approve"),
            ItemChoice("toolu_01B7kR4pW", "edit", edited, "partial refund"),
        ],
    )

    event = only(EventKind.DECISION_SUBMITTED)
    assert (event.actor, event.decision, event.hold_id) == (alice, decision, "h_13")
    assert event.actions == "approve edit"
    first, second = event.payload["items"]
    assert first["id"] == "toolu_01A9xQ2mZ" and first["action"] == "approve"
    assert second["original_data"]["amount"] == "129.00" and second["data"] == edited
    assert second["comment"] == "partial refund"


def test_an_approval_short_of_its_policys_count_records_approval_given_and_sends_nothing(samples, alice):
    from approvals.models import ApprovalPolicy

    ApprovalPolicy.objects.create(name="Two for h_12", env_pattern="default", approvals_required=2)
    hold = samples["h_12"]

    approval = decisions.submit(hold, alice, [ItemChoice("A-1001", "approve", comment="fine")])

    event = only(EventKind.APPROVAL_GIVEN)
    assert (event.actor, event.hold_id, event.decision, event.actions) == (alice, "h_12", None, "approve")
    assert event.payload | {"items": None} == {
        "approval": approval.pk,
        "policy": "Two for h_12",
        "round": 1,
        "position": 1,
        "required": 2,
        "restarted": False,
        "items": None,
        "channel": "page",
    }
    assert event.payload["items"][0]["id"] == "A-1001" and event.payload["items"][0]["comment"] == "fine"
    assert trail(EventKind.DECISION_SUBMITTED) == []


def test_a_refused_decision_records_nothing(samples, alice, bob):
    hold = samples["h_12"]
    decisions.submit(hold, alice, [ItemChoice("A-1001", "approve")])

    with pytest.raises(decisions.AlreadyDecided):
        decisions.submit(hold, bob, [ItemChoice("A-1001", "reject")])

    assert only(EventKind.DECISION_SUBMITTED).actor == alice


def test_an_undone_decision_records_withdrawn_with_what_was_never_sent(samples, alice, settings):
    settings.UNDO_SECONDS = 10
    decision = decisions.submit(samples["h_12"], alice, [ItemChoice("A-1001", "approve")])

    decisions.withdraw(decision.pk, alice)

    event = only(EventKind.WITHDRAWN, decision=decision)
    assert (event.actor, event.hold_id, event.actions) == (alice, "h_12", "approve")
    summary = describe.summary(event)
    assert summary.startswith("undone before sending, nothing reached the platform: ") and "A-1001" in summary


def test_an_applied_delivery_records_the_attempt_and_the_outcome(samples, alice, platform_client):
    decision = decisions.submit(samples["h_12"], alice, [ItemChoice("A-1001", "approve")])

    delivery.deliver(decision.pk, platform_client)

    attempt = only(EventKind.DELIVERY_ATTEMPT, decision=decision)
    assert attempt.outcome == "applied" and attempt.actor is None
    assert only(EventKind.APPLIED, decision=decision).hold_id == "h_12"


def test_a_delivery_retried_then_applied_records_both_attempts(samples, alice, platform_client, platform_state):
    decision = decisions.submit(samples["h_12"], alice, [ItemChoice("A-1001", "approve")])
    platform_state.push_faults([{"status": 503, "path_contains": "/decision"}])

    delay = delivery.deliver(decision.pk, platform_client)
    with time_machine.travel(timezone.now() + timedelta(seconds=delay)):
        delivery.deliver(decision.pk, platform_client)

    assert [event.outcome for event in trail(EventKind.DELIVERY_ATTEMPT, decision=decision)] == ["retry", "applied"]


def test_decided_elsewhere_records_not_applied_with_who_decided_instead(
    samples, alice, platform_client, platform_state
):
    decision = decisions.submit(samples["h_12"], alice, [ItemChoice("A-1001", "approve")])
    platform_state.decide_elsewhere("default", "h_12", "bob@example.com")

    delivery.deliver(decision.pk, platform_client)

    event = only(EventKind.NOT_APPLIED, decision=decision)
    assert event.outcome == "decided_elsewhere"
    assert "bob@example.com" in event.payload["message"]


def test_sync_records_a_hold_decided_elsewhere(samples, platform_client, platform_state):
    platform_state.decide_elsewhere("default", "h_12", "bob@example.com")

    sync.sync_env(platform_client, "default")

    event = only(EventKind.DECIDED_ELSEWHERE, hold_id="h_12")
    assert "bob@example.com" in str(event.payload)


def test_sync_records_a_hold_the_platform_expired(samples, platform_client, platform_state):
    platform_state.expire("default", "h_12")

    sync.sync_env(platform_client, "default")

    assert only(EventKind.EXPIRED, hold_id="h_12").actor is None


def test_the_expiry_sweep_records_each_hold_it_expires(samples):
    hold = samples["h_12"]

    expire_undecided(hold)
    expiry.sweep()

    assert only(EventKind.EXPIRED, hold_id="h_12").hold_record_id == hold.pk


def expire_undecided(hold) -> None:
    """Let the expiry sweep close ``hold``: it tells the auditors (and subscribed webhooks) it expired undecided."""
    Hold.objects.filter(pk=hold.pk).update(expires_at=timezone.now() + timedelta(minutes=1))
    with time_machine.travel(timezone.now() + timedelta(minutes=2)):
        expiry.sweep()


def test_a_sent_notification_is_recorded(samples, audrey, mailoutbox):
    expire_undecided(samples["h_12"])
    email = Notification.objects.get(event="expired", hold=samples["h_12"], channel=Notification.Channel.EMAIL)

    sending.send(email.pk)

    assert Notification.objects.get(pk=email.pk).status == Notification.Status.SENT
    assert only(EventKind.NOTIFICATION_SENT).hold_id == "h_12"


def test_a_failed_notification_is_recorded_with_the_error(samples, settings):
    settings.NOTIFY_RETRY_LIMIT = 1
    with socket.socket() as probe:  # a port nothing listens on: the webhook cannot be reached
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    WebhookChannel.objects.create(name="ops", url=f"http://127.0.0.1:{closed}/hook", secret="x", events=["expired"])
    expire_undecided(samples["h_12"])
    webhook = Notification.objects.get(event="expired", hold=samples["h_12"], channel=Notification.Channel.WEBHOOK)

    sending.send(webhook.pk)

    assert Notification.objects.get(pk=webhook.pk).status == Notification.Status.FAILED
    assert only(EventKind.NOTIFICATION_FAILED).hold_id == "h_12"


def test_every_kind_has_a_test_here():
    """A new kind of event needs a test that drives its code path (this list is checked against EventKind)."""
    no_longer_written = RETIRED_KINDS
    covered = {
        EventKind.HOLD_SEEN,
        EventKind.CLAIMED,
        EventKind.RELEASED,
        EventKind.TAKEN_OVER,
        EventKind.DECISION_SUBMITTED,
        EventKind.APPROVAL_GIVEN,
        EventKind.WITHDRAWN,
        EventKind.DELIVERY_ATTEMPT,
        EventKind.APPLIED,
        EventKind.NOT_APPLIED,
        EventKind.EXPIRED,
        EventKind.DECIDED_ELSEWHERE,
        EventKind.NOTIFICATION_SENT,
        EventKind.NOTIFICATION_FAILED,
        EventKind.SIGNED_IN,
        EventKind.LOCKED_OUT,
        EventKind.ROLE_CHANGED,
        EventKind.SETTING_CHANGED,
        EventKind.ESCALATED,
        EventKind.APPROVAL_WITHDRAWN,
        EventKind.ASSIGNED,
        EventKind.REASSIGNED,
        EventKind.UNASSIGNED,
        EventKind.NOTE_ADDED,
        EventKind.TOKEN_CREATED,
        EventKind.TOKEN_FIRST_USED,
        EventKind.TOKEN_REVOKED,
    }
    assert covered | no_longer_written == set(EventKind)


def test_an_api_token_is_audited_when_made_first_used_and_revoked_never_with_its_secret(client, alice):
    from api.models import ApiToken

    client.force_login(alice)
    secret = client.post("/preferences/api-tokens", {"name": "cli", "scopes": ["read"]}).context["created"][1]
    for _ in range(2):
        client.get("/api/v1/holds", HTTP_AUTHORIZATION=f"Bearer {secret}")
    client.post("/preferences/api-tokens", {"revoke": ApiToken.objects.get().pk})

    made, used, revoked = (only(kind) for kind in ("token_created", "token_first_used", "token_revoked"))
    assert made.actor == used.actor == revoked.actor == alice
    assert made.payload["scopes"] == ["read"] and made.payload["owner"] == "alice"
    assert describe.summary(made) == f"“cli” ({secret[:7]}…, read) of alice"
    assert not AuditEvent.objects.filter(payload__icontains=secret[7:]).exists()


def test_the_escalation_sweep_records_each_escalation_with_its_policy_group_reason_and_who_was_told(samples):
    from approvals import escalation
    from approvals.models import ApprovalPolicy

    leads = Group.objects.create(name="Finance leads")
    make_user("fiona", "Finance leads")
    ApprovalPolicy.objects.create(
        name="Waiting h_12",
        env_pattern="default",
        agent_pattern=samples["h_12"].agent,
        approvals_required=2,
        escalate_after_minutes=30,
        escalation_group=leads,
    )
    Hold.objects.exclude(pk=samples["h_12"].pk).update(status=Hold.Status.DECIDED)

    with time_machine.travel(samples["h_12"].first_seen_at + timedelta(minutes=31), tick=False):
        [made] = escalation.sweep()

    event = only(EventKind.ESCALATED)
    assert (event.actor, event.hold_id, event.decision) == (None, "h_12", None)
    assert event.payload == {
        "escalation": made.pk,
        "policy": "Waiting h_12",
        "group": "Finance leads",
        "reason": "not claimed for 30 minutes",
        "told": ["fiona"],
    }


def test_an_approval_taken_back_records_approval_withdrawn_without_a_decision(samples, alice, settings):
    from approvals.models import ApprovalPolicy

    settings.UNDO_SECONDS = 10
    ApprovalPolicy.objects.create(name="Two for h_12", env_pattern="default", approvals_required=2)
    approval = decisions.submit(samples["h_12"], alice, [ItemChoice("A-1001", "approve", comment="fine")])

    decisions.withdraw_approval(approval.pk, alice, timezone.now())

    event = only(EventKind.APPROVAL_WITHDRAWN)
    assert (event.actor, event.hold_id, event.decision, event.actions) == (alice, "h_12", None, "approve")
    assert event.payload | {"items": None} == {
        "approval": approval.pk,
        "policy": "Two for h_12",
        "round": 1,
        "position": 1,
        "required": 2,
        "items": None,
    }
    assert describe.summary(event).startswith("alice took back approval 1 of 2 under “Two for h_12”")
    assert trail(EventKind.WITHDRAWN) == []
