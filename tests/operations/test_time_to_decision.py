"""Time to a decision, by channel: the statistics page's percentiles, counts and late decisions per channel and
agent, and /metrics' histogram reviewqueue_time_to_decision_seconds{channel}, observed once per decision."""

from datetime import timedelta

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from approvals.models import ApprovalPolicy
from audit import decisiontime, stats
from holds.deciding import decisions
from holds.deciding.decisions import ItemChoice
from holds.models import DecisionChannel
from tests.helpers.approvals_setup import signed_in
from tests.helpers.duplicates import every_duplicate

pytestmark = pytest.mark.django_db

TOKEN = "scrape-token-0123456789abcdef"


def approve_all(hold):
    return [ItemChoice(item_id=item.item_id, action="approve") for item in hold.items.all()]


def decide_after(hold, reviewer, minutes, channel=DecisionChannel.PAGE):
    with time_machine.travel(hold.created_at + timedelta(minutes=minutes), tick=False):
        return decisions.submit(
            hold, reviewer, approve_all(hold), channel=channel, duplicates_checked=every_duplicate(hold)
        )


def scrape(client, settings) -> dict:
    settings.METRICS_TOKEN = TOKEN
    response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200
    found: dict = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            found.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return found


@pytest.fixture
def decided(samples, alice):
    """Three decisions on the hold page after 1, 2 and 3 minutes, one by email link after 40 minutes."""
    page = [decide_after(samples[hold_id], alice, minutes) for hold_id, minutes in (("h_12", 1), ("h_13", 2))]
    page.append(decide_after(samples["h_14"], alice, 3))
    link = decide_after(samples["h_17"], alice, 40, channel=DecisionChannel.EMAIL_LINK)
    return page, link


def test_the_statistics_give_percentiles_and_counts_by_channel_and_by_agent(decided, audrey, samples):
    period = stats.Period.from_query({}, decided[1].created_at.date())

    times = decisiontime.compute(period)

    by_channel = {row.label: row for row in times.channels}
    assert [row.label for row in times.channels] == ["page", "email link"]  # in the channels' order
    page = by_channel["page"]
    assert page.count == 3
    assert (page.p50, page.p90, page.p99) == pytest.approx((120, 180, 180))
    assert by_channel["email link"].count == 1 and by_channel["email link"].p50 == pytest.approx(2400)
    assert page.median_mirrored is not None
    agents = {row.label: row.count for row in times.agents}
    assert agents == {"llamaindex-support": 2, "upsonic-support": 1, "support-agno": 1}


def test_the_statistics_page_shows_time_to_a_decision_with_a_chart_and_captioned_tables(decided, audrey):
    # The period up to the email link's decision, 40 minutes after its ask: past midnight when asked late in the day.
    until = decided[1].created_at.date().isoformat()
    page = signed_in(audrey).get(reverse("audit:stats"), {"until": until}).content.decode()
    section = page[page.index('id="decision-time"') :]
    section = section[: section.index("</section>")]

    assert "<h2>Time to a decision</h2>" in section
    assert "<caption>Time to a decision per channel</caption>" in section
    assert "<caption>Time to a decision per agent</caption>" in section
    assert "Time to a decision per channel</figcaption>" in section and "<svg" in section
    assert "email link" in section and "40 min 00 s" in section
    assert "<script" not in section and "cdn" not in page.lower()  # drawn on the server, nothing fetched


def test_a_decision_after_its_policys_target_counts_late(samples, alice, audrey):
    ApprovalPolicy.objects.create(
        name="agno within 10", agent_pattern="support-agno", approvals_required=1, decide_within_minutes=10
    )
    decide_after(samples["h_14"], alice, 11)
    decide_after(samples["h_12"], alice, 11)  # no target for this agent

    times = decisiontime.compute(stats.Period.from_query({}, timezone.localdate()))  # both decisions in it

    assert times.late == 1 and {row.label: row.late for row in times.agents}["support-agno"] == 1


def test_a_hold_past_its_target_is_marked_in_the_queue(samples, alice):
    ApprovalPolicy.objects.create(
        name="agno within 10", agent_pattern="support-agno", approvals_required=1, decide_within_minutes=10
    )
    hold = samples["h_14"]

    with time_machine.travel(hold.created_at + timedelta(minutes=11), tick=False):
        late = signed_in(alice).get(reverse("queue")).content.decode()
    with time_machine.travel(hold.created_at + timedelta(minutes=9), tick=False):
        early = signed_in(alice).get(reverse("queue")).content.decode()

    assert late.count("Past its 10 min target") == 1
    assert "Past its 10 min target" not in early


def test_the_escalation_sweep_escalates_a_hold_past_its_target(samples, alice):
    from django.contrib.auth.models import Group

    from approvals import escalation

    leads = Group.objects.create(name="Support leads")
    ApprovalPolicy.objects.create(
        name="agno within 10",
        agent_pattern="support-agno",
        approvals_required=1,
        decide_within_minutes=10,
        escalation_group=leads,
    )
    hold = samples["h_14"]

    early = escalation.sweep(hold.created_at + timedelta(minutes=9))
    late = escalation.sweep(hold.created_at + timedelta(minutes=11))

    assert early == [] and [made.hold for made in late] == [hold]
    assert "past its target" in late[0].reason


def test_metrics_has_a_histogram_by_channel_observed_once_per_decision(decided, client, settings, samples, alice):
    decide_after(samples["h_18"], alice, 5, channel=DecisionChannel.BULK)

    first = scrape(client, settings)
    again = scrape(client, settings)

    counts = first["reviewqueue_time_to_decision_seconds_count"]
    assert counts == {(("channel", "page"),): 3, (("channel", "email_link"),): 1, (("channel", "bulk"),): 1}
    assert again["reviewqueue_time_to_decision_seconds_count"] == counts  # each decision observed once
    buckets = first["reviewqueue_time_to_decision_seconds_bucket"]
    assert buckets[(("channel", "page"), ("le", "60.0"))] == 1
    assert buckets[(("channel", "page"), ("le", "300.0"))] == 3
    assert buckets[(("channel", "email_link"), ("le", "1800.0"))] == 0
    assert buckets[(("channel", "email_link"), ("le", "3600.0"))] == 1
    assert buckets[(("channel", "page"), ("le", "5.0"))] == 0
    assert buckets[(("channel", "page"), ("le", "86400.0"))] == 3
    assert first["reviewqueue_time_to_decision_seconds_sum"][(("channel", "page"),)] == pytest.approx(360, abs=1)
