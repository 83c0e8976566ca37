"""The statistics page's hand-offs: open holds assigned per person or group, the oldest open assignment's age and
notes per open hold, the same figures ``/metrics`` gives (both read ``audit.handoffstats``)."""

from datetime import timedelta

import pytest
import time_machine
from django.contrib.auth.models import Group
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from holds.handover import assignments, notes
from holds.models import Hold
from operations import metrics
from reviewqueue import roles
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def auditor():
    client = Client()
    client.force_login(make_user("ada", roles.AUDITORS, first_name="Ada", last_name="Auditor"))
    return client


@pytest.fixture
def open_holds(samples):
    return list(Hold.objects.filter(status=Hold.Status.OPEN).order_by("pk"))


def handoffs_section(page: str) -> str:
    return page.split('id="handoff-stats"', 1)[1].split("</section>", 1)[0]


def test_the_page_shows_holds_assigned_per_assignee_the_oldest_assignment_and_notes_per_open_hold(
    auditor, alice, bob, open_holds
):
    first, second, third, fourth = open_holds[:4]
    finance = Group.objects.create(name="Finance leads")
    with time_machine.travel(timezone.now() - timedelta(hours=2)):
        assignments.assign(first, bob, "the address looks wrong", by=alice)
    assignments.assign(second, bob, "", by=alice)
    assignments.assign(third, finance, "", by=alice)
    assignments.assign(fourth, alice, "", by=alice)
    assignments.unassign(fourth, by=alice)  # ended: counts no more
    notes.add_note(first, alice, "the address looks wrong")
    notes.add_note(first, bob, "checked: it is right")
    notes.add_note(second, alice, "fine")

    response = auditor.get(reverse("audit:stats"))

    figures = response.context["handoffs"]
    assert [(row.label, row.holds) for row in figures.assigned] == [("bob", 2), ("Finance leads", 1)]
    assert {band.words: band.holds for band in figures.note_bands()} == {
        "0": len(open_holds) - 2,
        "1": 1,
        "2": 1,
        "3–5": 0,
        "6–10": 0,
        "more than 10": 0,
    }
    section = handoffs_section(response.content.decode())
    assert '<span class="person" title="bob@example.com">Bob Brown</span>' in section
    assert "Finance leads (group)" in section and "Alice Adams" not in section
    assert '<span class="oldest-assignment">2 h 00 min</span>' in section
    assert f"3 notes on {len(open_holds)} open holds" in section
    assert section.count("<caption") == 2 and section.count('<th scope="col">') == 4


def test_the_page_and_the_metrics_count_the_same_hand_offs(auditor, alice, bob, open_holds):
    assignments.assign(open_holds[0], bob, "", by=alice)
    notes.add_note(open_holds[0], alice, "one")
    now = timezone.now()

    figures = auditor.get(reverse("audit:stats")).context["handoffs"]
    assigned, oldest, per_hold = metrics.handoffs(now)

    assert [(sample.labels["assignee"], sample.value) for sample in assigned.samples] == [
        (row.label, row.holds) for row in figures.assigned
    ]
    assert oldest.samples[0].value == pytest.approx(figures.oldest_age_seconds(now))
    buckets = {sample.labels["le"]: sample.value for sample in per_hold.samples if sample.name.endswith("_bucket")}
    assert buckets["0"] == figures.holds_with_at_most(0) == len(open_holds) - 1
    assert buckets["+Inf"] == figures.open_holds == len(open_holds)


def test_the_pages_queries_do_not_grow_with_assignees_or_notes(auditor, alice, bob, open_holds):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert auditor.get(reverse("audit:stats")).status_code == 200
        return len(captured)

    assignments.assign(open_holds[0], bob, "", by=alice)
    assignments.assign(open_holds[1], Group.objects.create(name="Finance leads"), "", by=alice)
    notes.add_note(open_holds[0], alice, "one")
    queries()  # the first request reads what the process keeps afterwards
    before = queries()
    assignments.assign(open_holds[2], alice, "", by=alice)
    assignments.assign(open_holds[3], Group.objects.create(name="Risk"), "", by=alice)
    assignments.assign(open_holds[4], make_user("carol", roles.REVIEWERS), "", by=alice)
    for hold in open_holds[1:5]:
        notes.add_note(hold, bob, "another")

    assert queries() == before


def test_with_nothing_assigned_the_page_says_so(auditor, open_holds):
    section = handoffs_section(auditor.get(reverse("audit:stats")).content.decode())

    assert "No open hold is assigned." in section and f"0 notes on {len(open_holds)} open holds" in section
