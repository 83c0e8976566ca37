"""Approval chains stage by stage: who hears of a stage waiting (on every channel, push included, and the admins when
nobody can approve in it), reminders and escalation per stage, and each stage timed in the replay and the statistics."""

import json

import pytest
from django.urls import reverse

from notifications.models import Notification
from tests.helpers.approvals_setup import approve_as_it_is, confirm, lowered_to, signed_in
from tests.helpers.chains import queue_of

pytestmark = pytest.mark.django_db


def test_the_replay_of_a_chain_says_how_many_holds_would_have_waited_for_each_stage(db, capsys):
    from django.core.management import call_command

    from tests.helpers.chains import chain_policy
    from tests.helpers.replaying import decided_hold

    chain_policy([("Support leads", 1, False), ("Finance", 2, False), ("Legal", 1, True)], over="1000")
    for number, amount in enumerate([1500, 2500, 400]):
        decided_hold(number, "refund-bot", amount, "approve", decided_days_ago=2)

    call_command("replaypolicy", "large refunds", "--days", "7")

    printed = capsys.readouterr().out
    assert "would have needed people 2" in printed
    for who in ("Support leads", "Finance", "Legal"):
        assert f"    2 holds would have waited for {who}\n" in printed


def test_the_statistics_time_each_stage_from_when_it_opened(chain, refund):
    from datetime import timedelta

    import time_machine
    from django.utils import timezone

    from reviewqueue import roles
    from tests.helpers.users import make_user

    start = refund.first_seen_at
    with time_machine.travel(start + timedelta(minutes=10), tick=False):
        confirm(signed_in(chain.sam), refund)  # stage 1 waited 10 minutes since the hold arrived
    with time_machine.travel(start + timedelta(minutes=25), tick=False):
        approve_as_it_is(signed_in(chain.lee), refund)  # Legal: 15 minutes since stage 1 was done

    # The period named, not "the last 30 days" up to today: the approvals may fall after midnight.
    days = [timezone.localdate(start), timezone.localdate(start + timedelta(minutes=25))]
    period = {"since": days[0].isoformat(), "until": days[1].isoformat()}
    page = signed_in(make_user("ada", roles.AUDITORS)).get(reverse("audit:stats"), period).content.decode()

    assert "Time per stage of an approval chain" in page
    assert "1 · Support leads" in page and "2 · Finance" not in page and "3 · Legal" in page
    assert ">10 min 00 s<" in page and ">15 min 00 s<" in page


def test_a_reminder_before_expiry_goes_to_the_people_of_the_waiting_stages(chain, refund):
    from datetime import timedelta

    from django.utils import timezone

    from notifications import notify

    confirm(signed_in(chain.sam), refund)
    refund.expires_at = timezone.now() + timedelta(minutes=10)

    notify.expiring_soon([refund], timezone.now())

    told = Notification.objects.filter(event=Notification.Event.EXPIRING_SOON, channel="in_app")
    assert sorted(told.values_list("user__username", flat=True)) == ["fay", "fin", "lee"]


def test_a_chain_escalates_once_per_stage_each_stage_timed_from_its_opening(chain, refund):
    from datetime import timedelta

    import time_machine
    from django.contrib.auth.models import Group

    from approvals.models import Escalation
    from tests.helpers.chains import member
    from tests.helpers.escalation import sweep_at

    chain.policy.decide_within_minutes = 10
    chain.policy.escalation_group = Group.objects.create(name="Desk leads")
    chain.policy.save()
    dan = member("dan", "Desk leads")
    asked = refund.created_at

    first = sweep_at(asked + timedelta(minutes=11))  # stage 1 past its 10 minutes
    again = sweep_at(asked + timedelta(minutes=12))
    with time_machine.travel(asked + timedelta(minutes=15), tick=False):
        confirm(signed_in(chain.sam), refund)  # stages 2 and 3 open now
    too_soon = sweep_at(asked + timedelta(minutes=20))  # 5 minutes into stage 2
    with time_machine.travel(asked + timedelta(minutes=20), tick=False):
        on_time = queue_of(chain.fay)
    second = sweep_at(asked + timedelta(minutes=26))
    with time_machine.travel(asked + timedelta(minutes=26), tick=False):
        late = queue_of(chain.fay)

    assert [(one.stage, one.reason) for one in first] == [
        (1, "past its target of a decision within 10 minutes of the ask")
    ]
    assert again == [] and too_soon == []
    assert [(one.stage, one.reason) for one in second] == [
        (2, "past its target of a decision within 10 minutes of the stage's opening")
    ]
    assert Escalation.objects.filter(hold=refund).count() == 2
    told = Notification.objects.filter(event=Notification.Event.ESCALATED, channel="in_app", user=dan)
    assert told.count() == 2  # each stage's escalation reaches the group
    assert "Past its 10 min target" not in on_time and "Past its 10 min target for this stage" in late
    page = signed_in(chain.fay).get(reverse("hold", args=[refund.pk])).content.decode()
    assert "Escalated to <strong>Desk leads</strong>" in page and "of the stage&#x27;s opening" in page


def test_a_stage_nobody_in_scope_can_approve_blocks_and_tells_the_admins(chain, refund):
    from django.contrib.auth.models import Group

    from teams.models import TeamScope
    from tests.helpers.users import make_user

    TeamScope.objects.create(group=Group.objects.get(name="Finance"), agent_patterns="billing-*")
    root = make_user("root", is_superuser=True)

    confirm(signed_in(chain.sam), refund)
    fays_page = signed_in(chain.fay).get(reverse("hold", args=[refund.pk]))

    told = Notification.objects.filter(event=Notification.Event.STAGE_WAITING, channel="in_app")
    assert sorted(told.values_list("user__username", flat=True)) == ["lee", "root"]
    assert told.get(user=root).title.startswith("Blocked: nobody in Finance can approve stage 2 of 3")
    assert fays_page.status_code == 404  # fay cannot see the hold at all
    lees_page = signed_in(chain.lee).get(reverse("hold", args=[refund.pk])).content.decode()
    assert "Stage 2 of 3 · Finance · 0 of 2" in lees_page
    assert "blocked: nobody left in Finance who may see this hold can approve it" in lees_page


def test_a_stage_waiting_reaches_its_peoples_devices_as_a_push(chain, refund, push_service):
    from tests.helpers.pushing import device_of, pushes, send_all

    phone = device_of(chain.fay, push_service)

    confirm(signed_in(chain.sam), refund)
    send_all()

    [received] = push_service.to(phone.endpoint)
    assert received.content["title"] == f"An approval stage waiting for you: hold {refund.pk}"
    assert "1200.00" in received.content["body"] and "Refund" not in json.dumps(received.content)
    assert pushes("stage_waiting").get().status == "sent"


def test_a_stage_opened_again_after_an_edit_is_told_again_and_a_decision_resolves_the_news(
    chain, refund, immediate_delivery
):
    confirm(signed_in(chain.sam), refund)  # Finance and Legal told, round 1
    confirm(signed_in(chain.fay), refund, **lowered_to(refund, "1100.00"))  # round 2, Support leads again
    approve_as_it_is(signed_in(chain.sue), refund)  # Finance and Legal told of round 2
    told = Notification.objects.filter(event=Notification.Event.STAGE_WAITING, channel="in_app")
    before = sorted(told.values_list("user__username", flat=True))
    confirm(signed_in(chain.lee), refund, **{"item-0-action": "reject", "item-0-comment": "no"})

    assert before == ["fay", "fin", "fin", "lee", "lee", "sue"]  # fay approved round 2; sam approved round 1
    assert not told.filter(resolved_at__isnull=True).exists()


def test_holds_arriving_at_a_first_stage_nobody_can_approve_tell_the_admins_once_a_day(
    db, platform_state, platform_client
):
    from tests.helpers.approvals_setup import add_refund
    from tests.helpers.chains import chain_policy
    from tests.helpers.users import make_user

    chain_policy([("Treasury", 1, False), ("Finance", 1, False)])
    make_user("root", is_superuser=True)

    first = add_refund(platform_client, platform_state, "h_t1", "1500.00")
    add_refund(platform_client, platform_state, "h_t2", "1600.00")

    told = Notification.objects.filter(event=Notification.Event.STAGE_WAITING, channel="in_app")
    assert list(told.values_list("user__username", "hold")) == [("root", first.pk)]
    assert told.get().title.startswith("Blocked: nobody in Treasury can approve stage 1 of 2")
    assert "Its approval chain starts with stage 1 of 2, which needs 1 of Treasury." in told.get().body
