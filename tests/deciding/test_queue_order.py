"""A reviewer sorts the queue by expiry, age or amount and narrows it to an amount range, all in the URL, page by
page."""

import importlib
from datetime import timedelta
from decimal import Decimal

import pytest
from django.urls import reverse
from django.utils import timezone

from holds.mirror import sync
from holds.mirror.amounts import UNREADABLE
from holds.models import Hold
from holds.queue import listing as queue
from reviewqueue import readers
from tests.helpers.migrating import back_to, bare_hold, from_nothing, latest, migrate

pytestmark = pytest.mark.django_db

# Amounts as agents write them: text, numbers, none at all, and ties on purpose.
AMOUNTS = [
    "10.00",
    "10.00",
    250.5,
    None,
    "3",
    "10.00",
    None,
    7,
    "250.50",
    "0.99",
    None,
    "10.00",
    42,
    "3",
    "99.99",
    None,
]


def item(number: int, amount) -> dict:
    data = {"order_id": f"A-{number}"} if amount is None else {"order_id": f"A-{number}", "amount": amount}
    return {"id": f"A-{number}", "title": f"A-{number}", "data": data}


@pytest.fixture
def crowded_queue(platform_client, platform_state, monkeypatch):
    """Sixteen holds whose amounts, creation times and expiries tie in threes; pages of four."""
    monkeypatch.setattr(queue, "PAGE_SIZE", 4)
    start = platform_state.now() - timedelta(hours=2)
    for number, amount in enumerate(AMOUNTS):
        platform_state.add_hold(
            "default",
            {
                "created_at": start + timedelta(minutes=number // 3),
                "expires_at": None if number % 5 == 4 else start + timedelta(hours=3, minutes=number // 3 % 2),
                "items": [item(number, amount)],
            },
        )
    sync.sync_env(platform_client, "default")
    return list(Hold.objects.all())


def walk(client, query: str = "") -> list[int]:
    """Every hold the queue lists for ``query``, following the next-page links to the end."""
    seen, url = [], reverse("queue") + "?" + query
    while url:
        response = client.get(url)
        assert response.status_code == 200
        seen += [row.hold.pk for row in response.context["rows"]]
        next_cursor = response.context["next_cursor"]
        url = reverse("queue") + f"?{query}&after={next_cursor}" if next_cursor else None
    return seen


def by_amount(hold):
    return (hold.amount is None, -(hold.amount or 0), hold.created_at, hold.pk)


def by_age(hold):
    return (hold.created_at, hold.pk)


def by_expiry(hold):
    return (hold.expires_at is None, hold.expires_at or hold.created_at, hold.created_at, hold.pk)


@pytest.mark.parametrize(
    "query, key", [("sort=amount", by_amount), ("sort=age", by_age), ("", by_expiry), ("sort=expiry", by_expiry)]
)
def test_each_order_lists_every_hold_once_across_pages_ties_and_missing_amounts(
    alice_client, crowded_queue, query, key
):
    listed = walk(alice_client, query)

    assert listed == [hold.pk for hold in sorted(crowded_queue, key=key)]
    assert len(set(listed)) == len(AMOUNTS)


def test_largest_amount_comes_first_and_holds_without_one_last(alice_client, crowded_queue):
    amounts = [Hold.objects.get(pk=pk).amount for pk in walk(alice_client, "sort=amount")]

    assert amounts[:2] == [Decimal("250.5"), Decimal("250.5")]
    assert amounts[-4:] == [None] * 4
    assert amounts[-5] == Decimal("0.99")


def test_a_new_hold_arriving_between_pages_neither_shifts_nor_repeats_rows(
    alice_client, crowded_queue, platform_client, platform_state
):
    first = alice_client.get(reverse("queue") + "?sort=amount")
    platform_state.add_hold("default", {"items": [item(999, "5000")]})  # would sort first
    sync.sync_env(platform_client, "default")

    second = alice_client.get(reverse("queue") + f"?sort=amount&after={first.context['next_cursor']}")

    expected = [hold.pk for hold in sorted(crowded_queue, key=by_amount)]
    assert [row.hold.pk for row in first.context["rows"] + second.context["rows"]] == expected[:8]


def test_an_amount_range_keeps_holds_within_it_ends_included(alice_client, crowded_queue):
    listed = walk(alice_client, "min_amount=3&max_amount=10&sort=amount")

    in_range = [hold for hold in crowded_queue if hold.amount is not None and 3 <= hold.amount <= 10]
    assert listed == [hold.pk for hold in sorted(in_range, key=by_amount)]
    assert {Hold.objects.get(pk=pk).amount for pk in listed} == {Decimal("10"), Decimal("7"), Decimal("3")}


def test_an_open_ended_range_and_an_empty_one(alice_client, crowded_queue):
    assert len(walk(alice_client, "min_amount=42")) == 4  # 250.5 twice, 99.99, 42
    assert len(walk(alice_client, "max_amount=.99")) == 1
    response = alice_client.get(reverse("queue"), {"min_amount": "100", "max_amount": "50"})
    assert response.context["rows"] == [] and "No open hold matches these filters." in response.content.decode()


def test_the_form_keeps_the_sort_and_range_and_the_refresh_and_next_page_carry_them(alice_client, crowded_queue):
    page = alice_client.get(
        reverse("queue"), {"sort": "amount", "min_amount": "3", "max_amount": "250.50"}
    ).content.decode()

    assert '<option value="amount" selected>Amount (largest first)</option>' in page
    assert '<label>Min amount <input type="text" inputmode="decimal" name="min_amount" value="3"' in page
    assert 'name="max_amount" value="250.50"' in page
    assert 'hx-get="/?sort=amount&amp;min_amount=3&amp;max_amount=250.50&amp;loaded_at=' in page
    assert "sort=amount&amp;min_amount=3&amp;max_amount=250.50&amp;after=" in page
    assert "Open holds, largest amount first" in page


def test_an_order_alone_is_not_a_filter(alice_client, crowded_queue):
    assert not queue.Filters(sort="amount").active
    assert queue.Filters(min_amount=Decimal(0)).active
    assert "Clear</a>" not in alice_client.get(reverse("queue"), {"sort": "age"}).content.decode()


@pytest.mark.parametrize(
    "query, named",
    [
        ({"sort": "biggest"}, "sort"),
        ({"min_amount": "ten"}, "min_amount"),
        ({"max_amount": "1e309"}, "max_amount"),
        ({"min_amount": "9" * 17}, "min_amount"),
        ({"max_amount": "1.23456"}, "max_amount"),
        ({"min_amount": "١٢"}, "min_amount"),
        ({"sort": "amount", "after": readers.write_cursor("amount", "twelve", timezone.now(), 1)}, "after"),
        ({"sort": "age", "after": readers.write_cursor("age", timezone.now(), timezone.now(), 1)}, "after"),
        ({"sort": "amount", "after": readers.write_cursor("amount", "1" * 30, timezone.now(), 1)}, "after"),
    ],
)
def test_a_bad_sort_amount_or_cursor_is_a_plain_400(alice_client, crowded_queue, query, named):
    response = alice_client.get(reverse("queue"), query)

    assert response.status_code == 400 and named in response.content.decode()


def test_a_page_link_made_for_another_order_is_a_400_not_a_wrong_page(alice_client, crowded_queue):
    expiry_cursor = alice_client.get(reverse("queue")).context["next_cursor"]

    response = alice_client.get(reverse("queue"), {"sort": "age", "after": expiry_cursor})

    assert response.status_code == 400 and "another order" in response.content.decode()


# Sync stores the amount


def test_sync_stores_the_largest_amount_of_the_items_or_none_or_the_largest_there_is_when_unreadable(
    platform_client, platform_state
):
    holds = {
        "several": [item(1, "49.90"), {"id": "x", "data": {"refund_amount": 129, "total": "1e3"}}],
        "none": [item(2, None), {"id": "y", "data": {"amount": "about 20", "total": None}}],
        "rounded": [item(3, 12.345678)],
        "negative": [item(4, "-5.00")],
        "too large": [item(5, 10**30)],
        "true is no amount": [item(6, True)],
    }
    for hold_id, items in holds.items():
        platform_state.add_hold("default", {"hold_id": hold_id, "items": items})

    result = sync.sync_env(platform_client, "default")

    assert (result.error, result.created, result.quarantined) == ("", len(holds), 0)
    stored = dict(Hold.objects.values_list("hold_id", "amount"))
    assert stored == {
        "several": Decimal("1000"),
        "none": UNREADABLE,
        "rounded": Decimal("12.3457"),
        "negative": UNREADABLE,  # below zero is no amount anyone pays: in doubt, so first (issue 32)
        "too large": UNREADABLE,
        "true is no amount": UNREADABLE,
    }


def test_sync_follows_an_amount_the_agent_changes(platform_client, platform_state):
    hold_id = platform_state.add_hold("default", {"items": [item(1, "20.00")]})["hold_id"]
    sync.sync_env(platform_client, "default")
    platform_state.get_hold("default", hold_id)["items"] = [item(1, "35.00")]  # the simulator's own record

    sync.sync_env(platform_client, "default")

    assert Hold.objects.get(hold_id=hold_id).amount == Decimal("35")


# The migration fills the holds mirrored before it


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(300)  # migrating a database from nothing and on, slow in a busy run
def test_the_migration_fills_the_amount_of_holds_mirrored_before_it_in_batches(monkeypatch):
    monkeypatch.setattr(importlib.import_module("holds.migrations.0009_queue_amount"), "BATCH", 2)
    with from_nothing(back_to(("holds", "0008_undo_window"))) as old:
        OldHold, OldItem = old.get_model("holds", "Hold"), old.get_model("holds", "HoldItem")
        amounts = {"h_1": ["49.90", 129], "h_2": [None], "h_3": ["7.5"], "h_4": [], "h_5": [10**30, "3"]}
        for hold_id, item_amounts in amounts.items():
            hold = bare_hold(OldHold, hold_id, agent="a", capability="c")
            for position, amount in enumerate(item_amounts):
                OldItem.objects.create(
                    hold=hold, position=position, item_id=f"i{position}", data=item(position, amount)["data"]
                )

        migrate(latest())

        assert dict(Hold.objects.values_list("hold_id", "amount")) == {
            "h_1": Decimal("129"),
            "h_2": None,
            "h_3": Decimal("7.5"),
            "h_4": None,
            "h_5": UNREADABLE,
        }
