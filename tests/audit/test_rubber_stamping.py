"""Signs of rubber-stamping on the statistics page: how long each reviewer had a hold open before deciding it,
the decisions made in under 5 s of opening (which the audit list can show alone), and approval rates."""

from datetime import timedelta

import pytest
import time_machine
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from audit.models import AuditEvent, EventKind
from holds.deciding import decisions
from holds.deciding.decisions import ItemChoice
from holds.models import HoldFirstOpened
from reviewqueue import roles
from tests.helpers.duplicates import every_duplicate
from tests.helpers.users import make_user

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_delivery")]

EDITED = {"order_id": "A-1002", "amount": "100.00", "reason": "changed mind"}


@pytest.fixture
def auditor():
    client = Client()
    client.force_login(make_user("ada", roles.AUDITORS, first_name="Ada", last_name="Auditor"))
    return client


def open_hold(user, hold, at):
    """``user`` opens the hold's page at ``at``, as from the queue."""
    client = Client()
    client.force_login(user)
    with time_machine.travel(at, tick=False):
        assert client.get(reverse("hold", args=[hold.pk])).status_code == 200


def statistics(auditor):
    response = auditor.get(reverse("audit:stats"))
    assert response.status_code == 200
    return response.context["stats"], response.content.decode()


def test_the_statistics_show_a_decision_made_two_seconds_after_opening(auditor, alice, bob, samples):
    opened = timezone.now() - timedelta(minutes=5)
    open_hold(alice, samples["h_12"], opened)
    quick = decisions.submit(
        samples["h_12"],
        alice,
        [ItemChoice("A-1001", "approve")],
        now=opened + timedelta(seconds=2),
        duplicates_checked=every_duplicate(samples["h_12"]),
    )
    open_hold(bob, samples["h_17"], opened)
    decisions.submit(
        samples["h_17"],
        bob,
        [ItemChoice("A-1004", "approve")],
        now=opened + timedelta(seconds=10),
        duplicates_checked=every_duplicate(samples["h_17"]),
    )

    stats, page = statistics(auditor)

    people = {row.person.username: row for row in stats.people}
    assert (people["alice"].quick, people["alice"].median_look_seconds) == (1, pytest.approx(2))
    assert (people["bob"].quick, people["bob"].median_look_seconds) == (0, pytest.approx(10))
    section = page.split('id="rubber-stamping"', 1)[1].split("</section>", 1)[0]
    assert f'reviewer={alice.pk}&amp;quick=1">1 decided in under 5 s</a>' in section
    assert "0 decided in under 5 s" in section and ">2 s<" in section and ">10 s<" in section

    listed = auditor.get(reverse("audit:list"), {"quick": "1"})
    assert listed.status_code == 200
    assert [row.event.decision_id for row in listed.context["rows"]] == [quick.pk]
    assert [row.event.kind for row in listed.context["rows"]] == [EventKind.DECISION_SUBMITTED]
    assert AuditEvent.objects.filter(kind=EventKind.DECISION_SUBMITTED).count() == 2  # bob's is there, not quick


def test_only_the_first_opening_counts_and_a_decision_without_one_has_no_time_looked(auditor, alice, bob, samples):
    opened = timezone.now() - timedelta(minutes=5)
    open_hold(alice, samples["h_12"], opened)
    open_hold(alice, samples["h_12"], opened + timedelta(minutes=1))  # a second look, a minute later
    decisions.submit(
        samples["h_12"],
        alice,
        [ItemChoice("A-1001", "approve")],
        now=opened + timedelta(seconds=62),
        duplicates_checked=every_duplicate(samples["h_12"]),
    )
    decisions.submit(
        samples["h_17"], bob, [ItemChoice("A-1004", "approve")], duplicates_checked=every_duplicate(samples["h_17"])
    )  # never opened: from the queue, say

    stats, _ = statistics(auditor)

    people = {row.person.username: row for row in stats.people}
    assert HoldFirstOpened.objects.get(hold=samples["h_12"], user=alice).opened_at == opened
    assert (people["alice"].quick, people["alice"].median_look_seconds) == (0, pytest.approx(62))
    assert (people["bob"].quick, people["bob"].median_look_seconds, people["bob"].decisions) == (0, None, 1)
    assert auditor.get(reverse("audit:list"), {"quick": "1"}).context["rows"] == []


def test_each_reviewers_approval_rate_stands_beside_the_teams(auditor, alice, bob, samples):
    decisions.submit(
        samples["h_12"], alice, [ItemChoice("A-1001", "approve")], duplicates_checked=every_duplicate(samples["h_12"])
    )
    decisions.submit(
        samples["h_13"],
        alice,
        [
            ItemChoice("toolu_01A9xQ2mZ", "approve"),
            ItemChoice("toolu_01B7kR4pW", "edit", EDITED),
        ],
        duplicates_checked=every_duplicate(samples["h_13"]),
    )
    decisions.submit(samples["h_17"], bob, [ItemChoice("A-1004", "reject")])

    stats, page = statistics(auditor)

    people = {row.person.username: row for row in stats.people}
    assert people["alice"].approval_rate == pytest.approx(0.5)  # an edit is not approval as asked
    assert people["bob"].approval_rate == 0
    assert stats.team_approval_rate == pytest.approx(1 / 3)
    section = page.split('id="rubber-stamping"', 1)[1].split("</section>", 1)[0]
    assert "The team approved 33 % as asked." in section
    assert section.count('data-label="Team">33 %</td>') == 2 and 'data-label="Approved as asked">50 %</td>' in section


@pytest.mark.parametrize("value", ["yes", "0", "2", "on"])
def test_a_quick_filter_that_is_not_1_is_refused(auditor, value):
    assert auditor.get(reverse("audit:list"), {"quick": value}).status_code == 400
    assert auditor.get(reverse("audit:export"), {"quick": value}).status_code == 400
