"""The audit's statistics per reviewer and agent, their charts, and the audit tables read as cards on a phone."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from holds.deciding import decisions
from holds.deciding.decisions import ItemChoice
from holds.models import Hold
from tests.helpers.duplicates import every_duplicate

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_delivery")]


# Statistics


def test_statistics_per_reviewer_and_agent(ada_client, alice, bob, samples, platform_client):
    now = timezone.now()
    Hold.objects.filter(pk=samples["h_12"].pk).update(first_seen_at=now - timedelta(minutes=10))
    Hold.objects.filter(pk=samples["h_13"].pk).update(first_seen_at=now - timedelta(minutes=30))
    decisions.submit(
        samples["h_12"],
        alice,
        [ItemChoice("A-1001", "approve")],
        now=now,
        duplicates_checked=every_duplicate(samples["h_12"]),
    )
    decisions.submit(
        samples["h_13"],
        alice,
        [
            ItemChoice("toolu_01A9xQ2mZ", "reject"),
            ItemChoice("toolu_01B7kR4pW", "edit", {"order_id": "A-1002", "amount": "100.00", "reason": "changed mind"}),
        ],
        now=now,
    )
    decisions.submit(samples["h_17"], bob, [ItemChoice("A-1004", "reject")], now=now)
    Hold.objects.filter(pk=samples["h_15"].pk).update(status=Hold.Status.EXPIRED, expires_at=now - timedelta(minutes=1))

    response = ada_client.get(reverse("audit:stats"))

    reviewers = {row.person.username: row for row in response.context["stats"].reviewers}
    agents = {row.label: row for row in response.context["stats"].agents}
    assert (reviewers["alice"].decisions, reviewers["alice"].items) == (2, 3)
    assert (reviewers["alice"].approve, reviewers["alice"].edit, reviewers["alice"].reject) == (1, 1, 1)
    assert str(reviewers["alice"].asked) == "228.80" and str(reviewers["alice"].approved) == "149.90"
    assert reviewers["alice"].median_seconds == pytest.approx(20 * 60)
    assert reviewers["alice"].p95_seconds == pytest.approx(30 * 60)
    assert (reviewers["bob"].decisions, reviewers["bob"].reject_share) == (1, 1.0)
    assert agents["support-openai-agents"].expired == 1 and agents["support-openai-agents"].decisions == 0
    assert agents["upsonic-support"].decisions == 1
    body = response.content.decode()
    main = body.split("<main", 1)[1]
    assert main.count('<figure class="chart">') == 7 and "<script" not in main  # 3 + 3 + time to a decision


def test_statistics_only_count_decisions_in_the_chosen_period(ada_client, alice, samples):
    decisions.submit(
        samples["h_12"], alice, [ItemChoice("A-1001", "approve")], duplicates_checked=every_duplicate(samples["h_12"])
    )
    last_week = timezone.localdate() - timedelta(days=7)

    response = ada_client.get(reverse("audit:stats"), {"since": last_week - timedelta(days=3), "until": last_week})

    assert response.context["stats"].reviewers == []
    assert b"No decision in this period" in response.content


def test_every_cell_of_the_audit_tables_says_its_column_for_the_phone_cards(ada_client, decided):
    for url in (
        reverse("audit:list") + "?view=all",
        reverse("audit:decision", args=[decided.pk]),
        reverse("audit:stats"),
    ):
        page = ada_client.get(url).content.decode()
        cells = page.split("<td")[1:]
        assert cells, url
        assert all('data-label="' in cell.split(">", 1)[0] and 'class="' in cell.split(">", 1)[0] for cell in cells), (
            url
        )


def test_statistics_show_a_dash_not_0_percent_where_there_is_nothing_to_divide(ada_client, alice, samples):
    now = timezone.now()
    Hold.objects.filter(pk=samples["h_15"].pk).update(status=Hold.Status.EXPIRED, expires_at=now - timedelta(minutes=1))

    response = ada_client.get(reverse("audit:stats"))

    expired_only = next(row for row in response.context["stats"].agents if row.label == "support-openai-agents")
    assert expired_only.approve_share is None
    row_html = response.content.decode().split("support-openai-agents", 1)[1].split("</tr>", 1)[0]
    assert row_html.count(">—</td>") >= 5 and "0 %" not in row_html


def test_chart_series_carry_words_and_patterns_not_only_colour(ada_client, decided):
    page = ada_client.get(reverse("audit:stats")).content.decode()

    assert '<pattern id="pattern-edit"' in page and '<pattern id="pattern-reject"' in page
    assert '<span class="chart-value">approve 50 % · approve with edits 50 %</span>' in page
    assert "<text" not in page  # no SVG text that would shrink with the drawing
