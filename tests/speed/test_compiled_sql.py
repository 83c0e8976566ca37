"""Queries compiled once a process (reviewqueue/sql/compiled.py) are the ORM's own SQL for every value given later."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone
from hypothesis import given, settings
from hypothesis import strategies as st

from holds.models import Hold
from holds.queue import listing as queue
from notifications import in_app
from reviewqueue import processcache
from reviewqueue.sql import compiled
from teams.scopes import Scope
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db

moments = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)).map(
    lambda moment: moment.replace(tzinfo=UTC)
)
SCOPES = [None, (Scope(agent=("refund-*",)),), (Scope(env=("prod",), capability=("refund", "credit")), Scope())]


def orm_sql(build, shape, **values):
    return build(*shape, **values).query.sql_with_params()


def kept_for_every_shape() -> bool:
    """Whether every shape compiled so far is kept, not compiled again on every call."""
    return bool(compiled._kept) and compiled._NOT_KEPT not in compiled._kept.values()


@settings(max_examples=60, deadline=None)
@given(
    sort=st.sampled_from(sorted(queue.ORDERS)),
    seen=st.sampled_from(SCOPES),
    now=moments,
    cursor=st.none()
    | st.tuples(st.booleans(), moments, st.integers(1, 2**31 - 1), moments, st.decimals(-999, 999, places=2)),
)
def test_the_queue_page_compiled_once_is_the_orms_sql_for_any_time_cursor_and_scope(sort, seen, now, cursor):
    key = created_at = pk = None
    if cursor:
        null_key, created_at, pk, expiry, amount = cursor
        key = None if null_key or sort == "age" else {"expiry": expiry, "amount": amount}[sort]
    values = {"now": now, "key": key, "created_at": created_at, "pk": pk}

    assert compiled.sql(queue._unfiltered_page, (sort, seen), **values) == orm_sql(
        queue._unfiltered_page, (sort, seen), **values
    )
    assert kept_for_every_shape()


@settings(max_examples=30, deadline=None)
@given(seen=st.sampled_from(SCOPES), now=moments, since=st.timedeltas(timedelta(0), timedelta(days=3)))
def test_the_new_holds_count_compiled_once_is_the_orms_sql(seen, now, since):
    values = {"now": now, "loaded_at": now - since}

    assert compiled.sql(queue._new_in_unfiltered, (seen,), **values) == orm_sql(
        queue._new_in_unfiltered, (seen,), **values
    )
    assert kept_for_every_shape()


@settings(max_examples=30, deadline=None)
@given(seen=st.sampled_from(SCOPES), user=st.integers(1, 2**31 - 1))
def test_the_bells_count_compiled_once_is_the_orms_sql(seen, user):
    assert compiled.sql(in_app._unread_count, (seen,), user=user) == orm_sql(in_app._unread_count, (seen,), user=user)
    assert kept_for_every_shape()


def searched(text: str, *, now: datetime):
    """A query whose value the ORM changes on the way (``%text%``): it cannot be kept."""
    return Hold.objects.filter(search_text__contains=text, created_at__lt=now)


def test_a_query_that_changes_its_value_is_compiled_on_every_call_with_the_callers_value():
    now = timezone.now()

    first = compiled.sql(searched, (), text="refund", now=now)
    second = compiled.sql(searched, (), text="a-55010", now=now)

    assert first == orm_sql(searched, (), text="refund", now=now)
    assert second == orm_sql(searched, (), text="a-55010", now=now)
    assert "%a-55010%" in second[1]
    assert list(compiled._kept.values()) == [compiled._NOT_KEPT]


def amount_above(amount: Decimal, *, since: datetime):
    return Hold.objects.filter(amount__gt=amount, created_at__gt=since)


def test_a_value_in_the_shape_changes_the_sql_and_a_none_is_a_shape_of_its_own():
    since = timezone.now()

    above_ten = compiled.sql(amount_above, (Decimal("10.00"),), since=since)
    above_twenty = compiled.sql(amount_above, (Decimal("20.00"),), since=since)
    with_null = compiled.sql(queue._unfiltered_page, ("amount", None), now=since, key=None, created_at=since, pk=7)
    with_key = compiled.sql(
        queue._unfiltered_page, ("amount", None), now=since, key=Decimal("3.50"), created_at=since, pk=7
    )

    assert above_ten[1] == (Decimal("10.00"), since) and above_twenty[1] == (Decimal("20.00"), since)
    assert '"holds_hold"."amount" IS NULL' in with_null[0] and Decimal("3.50") not in with_null[1]
    assert Decimal("3.50") in with_key[1] and with_null[0] != with_key[0]


def test_forgetting_the_process_caches_compiles_again():
    now = timezone.now()
    compiled.sql(queue._new_in_unfiltered, (None,), now=now, loaded_at=now)
    assert compiled._kept

    processcache.forget_all()

    assert not compiled._kept


def test_the_queue_of_a_scoped_reviewer_lists_their_teams_holds_only_page_after_page(
    client, platform_client, platform_state
):
    # A story through the page: scopes are in the compiled query's shape, never carried over from another viewer.
    from django.contrib.auth.models import Group

    from holds.mirror import sync
    from reviewqueue import roles
    from teams.models import TeamScope

    for n in range(60):
        platform_state.add_hold("default", {"agent": "refund-bot" if n % 3 else "payroll-bot"})
    sync.sync_env(platform_client, "default")
    everyone = make_user("everyone", roles.REVIEWERS)
    refunds = make_user("refunds", roles.REVIEWERS)
    team = Group.objects.create(name="Refunds team")
    TeamScope.objects.create(group=team, agent_patterns="refund-*")
    refunds.groups.add(team)

    def agents_listed(user) -> list[str]:
        client.force_login(user)
        agents, path = [], reverse("queue")
        while path:
            page = client.get(path)
            agents += [row.hold.agent for row in page.context["rows"]]
            after = page.context["next_cursor"]
            path = f"{reverse('queue')}?after={after}" if after else ""
        return agents

    assert sorted(set(agents_listed(everyone))) == ["payroll-bot", "refund-bot"]
    assert len(agents_listed(everyone)) == 60
    assert agents_listed(refunds) == ["refund-bot"] * 40
    assert sorted(set(agents_listed(everyone))) == ["payroll-bot", "refund-bot"]
