"""No path lets a hold through with fewer people than a brute-force reading of its amounts requires (issue 32).

Hypothesis writes holds whose items carry amounts on both sides of the thresholds, under every key the
reader knows (any case, nested, in hundredths), spelt every way it reads or doubts, split over items and
keys. Each amount is generated with what it could mean: one number, two (a mark that may group thousands
or split decimals), or anything (unreadable, below zero). The brute force reads every meaning of every
amount and of their total:

- the strict policy (amount ≥ 1,000: 2 people) applies when any meaning of any amount, or of the total,
  reaches 1,000, or one amount could mean anything;
- the lenient one (refunds of at most 20: fewer people) applies only when every meaning of every amount
  and of the total is at most 20.

Each path that needs fewer people is then tried for real: the 0-people sweep, the default approve, one
approval where four eyes may ask two, and an edit judged by the rules.
"""

import itertools
from datetime import timedelta
from decimal import Decimal
from types import SimpleNamespace

import pytest
import time_machine
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from approvals import policies
from approvals.models import Approval, ApprovalPolicy, ApprovalStage
from holds.deciding import by_policy, decisions, delivery, rules
from holds.mirror import sync
from holds.models import Decision, Hold
from tests.helpers.approvals_setup import decision_posts
from tests.helpers.duplicates import every_duplicate

STRICT, LENIENT = Decimal(1000), Decimal(20)
ANYTHING = None  # what an amount that could mean anything means
DB_EXAMPLES = settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


def _plain(number: Decimal) -> st.SearchStrategy:
    """Spellings read for certain, each meaning ``number``."""
    whole = int(number)
    certain = [
        st.just(f"{number:.2f}"),
        st.just(f"{number:,.2f}"),
        st.just(f"${number:.2f}"),
        st.just(f"{number:.2f} USD"),
        st.just(f"{number:.2f}".replace(".", ",")) if whole >= 1000 else st.just(f"{number:.2f}"),
    ]
    if number == whole:
        certain.append(st.just(whole))
    return st.one_of(certain).map(lambda written: (written, frozenset({number})))


def _either(number: int) -> tuple[str, frozenset]:
    """ "1,500": 1.5 or 1,500."""
    return f"{number:,}", frozenset({Decimal(number), Decimal(number) / 1000})


def _odd_mark(whole: int, fraction: int, mark: str) -> tuple[str, frozenset]:
    """ "1,5000": 1.5 or 15,000 (a mistyped group, or a decimal)."""
    return f"{whole}{mark}{fraction:04d}", frozenset(
        {Decimal(f"{whole}.{fraction:04d}"), Decimal(f"{whole}{fraction:04d}")}
    )


NUMBERS = st.one_of(
    st.integers(0, 20).map(Decimal),
    st.integers(0, 2000).map(lambda cents: Decimal(cents) / 100),
    st.integers(21, 999).map(Decimal),
    st.integers(1000, 20000).map(Decimal),
)
WRITTEN = st.one_of(
    NUMBERS.flatmap(_plain),
    st.integers(1000, 99999).map(_either),
    st.builds(_odd_mark, st.integers(1, 99), st.integers(1, 9999), st.sampled_from(",.")),
    st.builds(lambda n: (f",{n:04d}", frozenset({Decimal(f"0.{n:04d}"), Decimal(n)})), st.integers(1, 9999)),
    st.tuples(st.sampled_from(["-", "\u2212", "\ufe63", "\uff0d", "\u207b"]), NUMBERS.filter(lambda n: n > 0)).map(
        lambda pair: (f"{pair[0]}{pair[1]:.2f}", ANYTHING)
    ),
    st.sampled_from(["1,5OO", "NaN", "lots", "", None, True, [1, 2], "1.5k"]).map(lambda odd: (odd, ANYTHING)),
)
KEYS = ["amount", "Amount", "AMOUNT", "amount_usd", "amount ", "price", "refund_amount", "total", "refundAmount"]


@st.composite
def amount_entries(draw) -> tuple[str, object, frozenset | None]:
    """(key, value, meanings) of one amount, somewhere in an item's data."""
    if draw(st.booleans()) and draw(st.booleans()):
        cents = draw(st.integers(0, 900_000))
        return "amount_cents", cents, frozenset({Decimal(cents) / 100})
    written, meanings = draw(WRITTEN)
    return draw(st.sampled_from(KEYS)), written, meanings


@st.composite
def held_items(draw) -> tuple[list[dict], list]:
    """Up to three items' data, each with one to three amounts (some nested), and every amount's meanings."""
    items, meanings = [], []
    for _ in range(draw(st.integers(1, 3))):
        data = {"order_id": "A-1", "quantity": draw(st.integers(1, 5))}
        for _ in range(draw(st.integers(1, 3))):
            key, value, meant = draw(amount_entries())
            where = draw(st.sampled_from(["top", "top", "nested", "lines"]))
            if where == "top" and key not in data:
                data[key] = value
            elif where == "nested" and "refund" not in data:
                data["refund"] = {key: value}
            else:
                data.setdefault("lines", []).append({key: value})
            meanings.append(meant)
        items.append(data)
    return items, meanings


def read_for_certain(meanings: list) -> bool:
    """Whether every amount means one number: then the policies must ask exactly what the brute force does."""
    return all(meant is not ANYTHING and len(meant) == 1 for meant in meanings)


def brute_force_people(meanings: list, lenient_people: int) -> int:
    """How many people the hold needs by reading every meaning of every amount and of their total."""
    if any(meant is ANYTHING for meant in meanings):
        return 2
    totals = {sum(combination, Decimal(0)) for combination in itertools.product(*meanings)}
    every = [number for meant in meanings for number in meant] + list(totals)
    if any(number >= STRICT for number in every):
        return 2
    if every and all(number <= LENIENT for number in every):
        return lenient_people
    return 1


def strict_policy(**fields) -> ApprovalPolicy:
    values = {
        "name": "large amounts",
        "condition_key": "amount",
        "condition_operator": "gte",
        "condition_threshold": STRICT,
        "approvals_required": 2,
    }
    return ApprovalPolicy(**(values | fields))


def as_read(policy: ApprovalPolicy) -> ApprovalPolicy:
    """``policy`` as ``policies.all_policies`` reads it, its stages with it (none), so no database is asked."""
    policy._prefetched_objects_cache = {"stages": ApprovalStage.objects.none()}
    return policy


def lenient_policy(**fields) -> ApprovalPolicy:
    values = {
        "name": "small refunds",
        "capability_pattern": "refund",
        "condition_key": "amount",
        "condition_operator": "lte",
        "condition_threshold": LENIENT,
        "approvals_required": 0,
    }
    return ApprovalPolicy(**(values | fields))


@settings(max_examples=100, deadline=None)
@given(held=held_items(), lenient_people=st.sampled_from([0, 1]))
def test_no_requirement_asks_fewer_people_than_every_reading_of_every_amount_and_the_total(held, lenient_people):
    items, meanings = held
    hold = SimpleNamespace(env="default", agent="support", capability="refund", first_seen_at=timezone.now())
    rules_in_force = [as_read(strict_policy(pk=1)), as_read(lenient_policy(pk=2, approvals_required=lenient_people))]

    found = policies.requirement(hold, rules_in_force, items)
    needed = brute_force_people(meanings, lenient_people)
    people = found.approvals_required if found else policies.NO_POLICY_NEEDS

    assert people >= needed, f"{items} went through with {people}"
    if found is not None and found.approvals_required == 0:
        alone = policies.own_action(
            found.policy, hold, found.sure_total, hold.first_seen_at, policies.DayTally(), approvable=True
        )
        assert alone.approve_at is not None
        assert found.sure_total == sum(next(iter(meant)) for meant in meanings)
    if read_for_certain(meanings):
        assert people == needed  # nothing is in doubt: no more people either


def _mirror(platform_state, platform_client, n: int, items: list[dict], **fields):
    env = f"fuzz{n}"  # an env of its own: each sync reads only this example's hold
    platform_state.add_hold(
        env,
        {
            "hold_id": f"h_{n}",
            "capability": "refund",
            # An order of each example's own: a refund of an order another example asked for is a possible duplicate.
            "items": [
                {"id": f"h{n}-i{index}", "title": "refund", "data": {**data, "order_id": f"A-{n}"}}
                for index, data in enumerate(items)
            ],
            **fields,
        },
    )
    sync.sync_env(platform_client, env)
    return Hold.objects.get(env=env, hold_id=f"h_{n}")


@pytest.fixture
def counter():
    return itertools.count()


@pytest.mark.long
@DB_EXAMPLES
@given(held=held_items())
def test_the_0_people_sweep_approves_only_what_every_reading_lets_through(
    held, platform_state, platform_client, counter, db
):
    items, meanings = held
    if not ApprovalPolicy.objects.exists():
        strict_policy().save()
        lenient_policy().save()
    hold = _mirror(platform_state, platform_client, next(counter), items, expires_at=None)

    with time_machine.travel(hold.first_seen_at + timedelta(minutes=1), tick=False):
        made = by_policy.approve_due()

    if made:
        assert brute_force_people(meanings, 0) == 0, f"{items} approved itself"
    if read_for_certain(meanings):
        assert bool(made) == (brute_force_people(meanings, 0) == 0)
    assert Decision.objects.filter(hold=hold).exists() == bool(made)


@pytest.mark.long
@DB_EXAMPLES
@given(held=held_items())
def test_a_default_approve_is_sent_only_where_every_reading_lets_the_hold_through(
    held, platform_state, platform_client, counter, db
):
    items, meanings = held
    if not ApprovalPolicy.objects.exists():
        strict_policy().save()
        lenient_policy(approvals_required=1, expiry_outcome="approve", expiry_outcome_minutes=10).save()
    expires_at = timezone.now().replace(microsecond=0) + timedelta(hours=1)
    _mirror(platform_state, platform_client, next(counter), items, expires_at=expires_at.isoformat())

    with time_machine.travel(expires_at - timedelta(minutes=5), tick=False):
        made = by_policy.send_default_outcomes()

    if made:
        assert brute_force_people(meanings, 0) == 0, f"{items} approved by default"
        assert [item.action for item in made[0].items.all()] == ["approve"] * len(items)
    if read_for_certain(meanings):
        assert bool(made) == (brute_force_people(meanings, 0) == 0)


@pytest.mark.long
@DB_EXAMPLES
@given(held=held_items())
def test_one_approval_decides_only_where_every_reading_needs_one_person(
    held, platform_state, platform_client, counter, alice, immediate_delivery
):
    items, meanings = held
    if not ApprovalPolicy.objects.exists():
        strict_policy().save()
        lenient_policy(approvals_required=1).save()
    hold = _mirror(platform_state, platform_client, next(counter), items, expires_at=None)
    posted_before = len(decision_posts(platform_state))

    made = decisions.submit(
        hold,
        alice,
        [decisions.ItemChoice(item.item_id, "approve") for item in hold.items.all()],
        duplicates_checked=every_duplicate(hold),
    )
    if isinstance(made, Decision):
        delivery.deliver(made.pk, platform_client)

    needs_two = brute_force_people(meanings, 1) == 2
    if needs_two:
        assert isinstance(made, Approval), f"{items} went out on one approval"
        assert len(decision_posts(platform_state)) == posted_before
    if read_for_certain(meanings):
        assert isinstance(made, Approval) == needs_two


RAISES = st.sampled_from(["999999.00", "99999999", "1,500", "900 KWD", "£900", "-5"])


@settings(max_examples=100, deadline=None)
@given(held=held_items(), raised=RAISES, which=st.integers(0, 10))
def test_no_edit_raises_any_amount_or_changes_its_currency(held, raised, which):
    items, _ = held
    data = items[0]
    paths = [(key,) for key in data if key not in ("order_id", "quantity", "refund", "lines")]
    paths += [("refund", key) for key in data.get("refund", {})]
    paths += [("lines", index, key) for index, line in enumerate(data.get("lines", [])) for key in line]
    path = paths[which % len(paths)]
    edited = _with(data, path, raised)
    original_value = _at(data, path)

    refusals = rules.check_edit(data, edited)

    if original_value != raised:
        assert refusals, f"{path} {original_value!r} → {raised!r} went through"
        assert all(key == path[0] for key, _ in refusals)


def _at(data, path):
    for part in path:
        data = data[part]
    return data


def _with(data, path, value):
    if len(path) == 1:
        return {**data, path[0]: value}
    if isinstance(data, list):
        return [_with(item, path[1:], value) if index == path[0] else item for index, item in enumerate(data)]
    return {**data, path[0]: _with(data[path[0]], path[1:], value)}
