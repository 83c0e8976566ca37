"""The replay of a policy over the holds decided lately: its figures against a plain count, its command."""

import json
from decimal import Decimal

import pytest
from django.core.management import CommandError, call_command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase

from approvals import replay
from approvals.models import ApprovalPolicy
from tests.helpers.replaying import NOW, decided_hold, small_refunds

AGENTS = ["refund-bot", "billing-bot"]


def large_refunds():
    return ApprovalPolicy.objects.create(
        name="large refunds",
        condition_key="amount",
        condition_operator="gt",
        condition_threshold=Decimal(500),
        approvals_required=2,
    )


past_hold = st.fixed_dictionaries(
    {
        "agent": st.sampled_from(AGENTS),
        "amount": st.sampled_from([5, 50, 99, 100, 101, 250, 500, 501, 1200]),
        "did": st.sampled_from(["approve", "edit", "reject"]),
        "decided_days_ago": st.sampled_from([1, 5, 20, 45, 100]),
        "minutes_to_decide": st.sampled_from([1, 9, 10, 11, 60, 600]),
        "expires_after": st.sampled_from([None, 8, 15, 70, 1000]),
    }
)


class ReplayAgainstAPlainCount(TestCase):
    @settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        history=st.lists(past_hold, max_size=12),
        threshold=st.sampled_from([50, 100, 500, 1000]),
        days=st.sampled_from(replay.WINDOWS),
    )
    def test_the_figures_equal_a_count_by_hand_of_the_same_history(self, history, threshold, days):
        saved = small_refunds("100")
        large_refunds()
        holds = [decided_hold(n, **past) for n, past in enumerate(history)]
        edited = ApprovalPolicy.objects.get(pk=saved.pk)
        edited.condition_threshold = Decimal(threshold)  # the form being edited: never saved

        figures = replay.replay(edited, days, now=NOW)

        expected = {key: 0 for key in ("matched", "would_approve", "would_need_more", "would_default")}
        expected |= {"people_rejected": [], "people_edited": []}
        two_before = two_after = 0
        for hold, past in sorted(
            zip(holds, history, strict=True), key=lambda pair: (pair[0].first_seen_at, pair[0].pk)
        ):
            if past["decided_days_ago"] > days:
                continue
            refund_bot = past["agent"] == "refund-bot"
            two_before += past["amount"] > 500 and not (refund_bot and past["amount"] <= 100)
            two_after += past["amount"] > 500 and not (refund_bot and past["amount"] <= threshold)
            if not (refund_bot and past["amount"] <= threshold):
                continue
            expected["matched"] += 1
            if past["minutes_to_decide"] >= 10:
                expected["would_approve"] += 1
                if past["did"] == "reject":
                    expected["people_rejected"].append(hold.hold_id)
                if past["did"] == "edit":
                    expected["people_edited"].append(hold.hold_id)
            elif past["expires_after"] and past["expires_after"] - 5 <= past["minutes_to_decide"]:
                expected["would_default"] += 1
            else:
                expected["would_need_more"] += 1
        assert figures.figures() == expected
        assert figures.second_approver_change == two_after - two_before
        assert ApprovalPolicy.objects.get(pk=saved.pk).condition_threshold == Decimal(100)


def test_a_daily_cap_stops_the_policy_approving_on_that_day(db):
    policy = small_refunds("100", wait=0)
    policy.daily_cap_count = 2
    policy.save()
    for number in range(3):
        decided_hold(number, "refund-bot", 20, "approve", decided_days_ago=2)

    figures = replay.replay(policy, 7, now=NOW)

    assert (figures.matched, figures.would_approve, figures.would_need_more) == (3, 2, 1)


def test_replaypolicy_json_prints_exactly_the_figures(db, capsys):
    small_refunds("100", wait=0)
    decided_hold(1, "refund-bot", 20, "reject", decided_days_ago=2)
    decided_hold(2, "refund-bot", 30, "edit", decided_days_ago=2)
    decided_hold(3, "billing-bot", 30, "approve", decided_days_ago=2)

    call_command("replaypolicy", "small refunds", "--days", "7", "--json")

    printed = json.loads(capsys.readouterr().out)
    assert printed == {
        "matched": 2,
        "would_approve": 2,
        "would_need_more": 0,
        "would_default": 0,
        "people_rejected": ["h_1"],
        "people_edited": ["h_2"],
    }


def test_replaypolicy_names_what_it_cannot_replay(db):
    small_refunds()
    with pytest.raises(CommandError, match="no approval policy is named 'nope'"):
        call_command("replaypolicy", "nope")
    with pytest.raises(CommandError, match="--days"):
        call_command("replaypolicy", "small refunds", "--days", "31")
