"""The hold page reads what it shows once: at most 11 queries in its usual states, with nothing wasted.

Counted as a reviewer sees it, through the whole middleware: the session, the user and their groups,
and the bell's count come with every page; the rest is the hold (with its claimant and latest decision),
its items, the decision's items, one statement that notes the reviewer's presence (and first opening) and lists
the others, and its related holds (holds/related/related.py): its subjects with the rows sharing them, and, as
the sample holds here have related holds, those holds with their live decisions and their items (8 queries
before related holds were shown; a hold without any reads one more).
"""

from collections import Counter

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from holds.deciding import decisions
from holds.deciding.decisions import ItemChoice
from holds.models import HoldFirstOpened, HoldViewer
from tests.helpers.duplicates import every_duplicate

pytestmark = pytest.mark.django_db

MOST_QUERIES = 11


@pytest.fixture
def undo_window(settings):
    settings.UNDO_SECONDS = 10


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def open_page(client, hold):
    """The hold page and the SQL it ran; the page was opened once before, as from the queue, so the
    session's once-a-minute note of use (any page's, not this one's) is not counted."""
    url = reverse("hold", args=[hold.pk])
    client.get(url)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return response.content.decode(), [query["sql"] for query in queries.captured_queries]


def assert_nothing_wasted(statements):
    assert len(statements) <= MOST_QUERIES, "\n".join(statements)
    repeated = [sql for sql, times in Counter(statements).items() if times > 1]
    assert not repeated, repeated
    assert not [sql for sql in statements if sql.startswith(("SAVEPOINT", "BEGIN", "COMMIT", "RELEASE"))]


def approve_all(hold):
    return [ItemChoice(item_id=item.item_id, action="approve", comment="fine by me") for item in hold.items.all()]


def test_an_open_hold_shows_its_form_and_who_else_is_looking_in_at_most_11_queries(samples, alice, bob):
    hold = samples["h_12"]
    open_page(signed_in(bob), hold)

    page, statements = open_page(signed_in(alice), hold)

    assert_nothing_wasted(statements)
    assert (
        'id="decide-form"' in page
        and '<strong><span class="person" title="bob@example.com">Bob Brown</span></strong> is looking at this.' in page
    )
    assert HoldViewer.objects.filter(hold=hold, user=alice).exists()  # noted in the same statement
    assert HoldFirstOpened.objects.filter(hold=hold, user=alice).exists()  # and so is the first opening


def test_a_hold_with_a_live_decision_shows_it_in_at_most_11_queries(samples, alice, bob, undo_window):
    hold = samples["h_12"]
    decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))

    alices_page, alices_statements = open_page(signed_in(alice), hold)
    bobs_page, bobs_statements = open_page(signed_in(bob), hold)

    for statements in (alices_statements, bobs_statements):
        assert_nothing_wasted(statements)
    assert (
        'Decided by <strong><span class="person" title="alice@example.com">Alice Adams</span></strong>' in alices_page
        and 'id="undo-form"' in alices_page
    )
    assert (
        'Decided by <strong><span class="person" title="alice@example.com">Alice Adams</span></strong>' in bobs_page
        and 'id="undo-form"' not in bobs_page
    )
    assert 'id="decide-form"' not in bobs_page
    assert not HoldViewer.objects.filter(hold=hold).exists()  # a decided hold notes nobody's presence


def test_after_an_undo_the_form_comes_back_as_it_was_sent_in_at_most_11_queries(samples, alice, undo_window):
    hold = samples["h_12"]
    decision = decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))
    decisions.withdraw(decision.pk, alice)

    page, statements = open_page(signed_in(alice), hold)

    assert_nothing_wasted(statements)
    assert "Undone at" in page and 'id="decide-form"' in page
    assert 'value="approve" checked' in page and ">fine by me</textarea>" in page
    assert "data-deciding" in page  # the undo gave alice her claim back


@pytest.mark.django_db(transaction=True)
def test_opening_a_hold_in_autocommit_opens_no_transaction(samples, alice):
    hold = samples["h_12"]

    _, statements = open_page(signed_in(alice), hold)

    assert_nothing_wasted(statements)
    assert sum(sql.startswith("WITH noted AS (INSERT") for sql in statements) == 1


def test_a_hold_waiting_for_its_second_approval_shows_the_round_in_at_most_11_queries(samples, alice, bob):
    from django.contrib.auth.models import Group

    from approvals.models import ApprovalPolicy
    from reviewqueue import roles

    hold = samples["h_12"]
    ApprovalPolicy.objects.create(  # the page checks that bob is in the group the second approval needs
        name="Two for h_12",
        env_pattern="default",
        agent_pattern=hold.agent,
        approvals_required=2,
        later_approver_group=Group.objects.get(name=roles.REVIEWERS),
    )
    decisions.submit(hold, alice, approve_all(hold), duplicates_checked=every_duplicate(hold))

    page, statements = open_page(signed_in(bob), hold)

    assert_nothing_wasted(statements)
    assert "1 of 2 approvals: alice approved" in page and 'id="approve-as-is-form"' in page
