"""A policy's condition on a subject's total: "refunds on one order above 100 in 30 days need two approvers".

A policy with ``subject_total_over`` matches a hold (its people apply) when, for any subject of the hold (an order,
a customer…: ``holds.related.subjects``), the amounts this hold asks on that subject's items plus the amounts
approved on it on other holds of the same capability within ``subject_total_days`` come to more than
``subject_total_over``; or when any of those amounts is not read for certain (it counts as over: fail closed). A
hold without subjects never matches it: no subject, no total.

This layer cannot read what was approved on a subject (that rule is ``holds.related.duplicates.approved_on_subject``,
above it): the holds app hands it over, as explicit state. ``SubjectTotal`` is one subject's amounts, each with when
it was approved; ``policies.requirement`` takes them as ``subject_totals`` (by subject value), and without them
(None: a caller that does not know) a policy with this condition matches possibly, so it asks for its people and
never lets a hold through with fewer. ``read`` asks the reader the holds app registers at start-up
(``holds/apps.py``: ``holds.related.totals``), for the callers in this layer that decide how many people a hold needs
(``rounds.standing``, escalation); ``read_many`` for the queue's badges, in a bounded number of queries.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from decimal import Decimal

from reviewqueue.agent_numbers import grouped_number


@dataclasses.dataclass(frozen=True)
class Counted:
    """One amount on a subject: ``amount`` None when it was not read for certain; ``at`` when it was approved (None
    for this hold's own ask, which always counts); ``where`` names it for the words ("h_12 item 0")."""

    amount: Decimal | None
    at: datetime | None
    where: str


@dataclasses.dataclass(frozen=True)
class SubjectTotal:
    """One subject of a hold, as ``shown`` ("A-1001"): the amounts this hold asks on it (``own``), and those approved
    on it on other holds of the same capability (``approved``), read at ``read_at``."""

    shown: str
    own: tuple[Counted, ...]
    approved: tuple[Counted, ...]
    read_at: datetime

    def within(self, days: int) -> tuple[Decimal, Counted | None]:
        """The total of this hold's amounts and those approved within ``days`` of ``read_at``, and the first amount
        not read for certain among them (None when every one was)."""
        since = self.read_at - timedelta(days=days)
        counted = [*self.own, *(one for one in self.approved if one.at is None or one.at >= since)]
        doubtful = next((one for one in counted if one.amount is None), None)
        return sum((one.amount for one in counted if one.amount is not None), Decimal(0)), doubtful


Totals = Mapping[str, SubjectTotal]


@dataclasses.dataclass(frozen=True)
class TotalVerdict:
    """What a policy's subject-total condition concludes of a hold: ``certain`` when a total read for certain is over
    the threshold (else the condition holds only possibly, failing closed), and the words why."""

    certain: bool
    words: str


def verdict(policy, capability: str, totals: Totals | None) -> TotalVerdict | None:
    """Whether ``policy``'s subject-total condition holds of a hold of ``capability`` with these ``totals`` (None: not
    given, so possibly); None when it does not hold (or the hold has no subject)."""
    over = policy.subject_total_over
    if totals is None:
        return TotalVerdict(False, f"the subject totals were not read: treated as over {threshold_words(over)}")
    doubtful = None
    for total in totals.values():
        amount, doubt = total.within(policy.subject_total_days)
        if amount > over:
            return TotalVerdict(True, total_words(capability, total.shown, amount, policy))
        if doubt is not None and doubtful is None:
            doubtful = TotalVerdict(
                False,
                f"{capability} on {total.shown}: an amount ({doubt.where}) could not be read: treated as over "
                f"{threshold_words(over)} in {_days(policy.subject_total_days)}",
            )
    return doubtful


def total_words(capability: str, shown: str, amount: Decimal, policy) -> str:
    """ "refunds on A-1001 total 149.80 in 30 days, over 100"."""
    days, over = _days(policy.subject_total_days), threshold_words(policy.subject_total_over)
    return f"{capability} on {shown} total {amount_words(amount)} in {days}, over {over}"


def amount_words(amount: Decimal) -> str:
    """A total as amounts are written: 109.9000 as 109.90, 0.1250 as 0.125."""
    cents = amount.quantize(Decimal("0.01"))
    return grouped_number(cents if cents == amount else amount.normalize())


def condition_words(policy) -> str:
    """The condition as the admin lists it: "subject total > 100 in 30 days"."""
    return f"subject total > {threshold_words(policy.subject_total_over)} in {_days(policy.subject_total_days)}"


def _days(days: int) -> str:
    return "1 day" if days == 1 else f"{days} days"


def threshold_words(value: Decimal) -> str:
    """A threshold without the zeros its column pads it with: 500.0000 as 500, 99.5000 as 99.5."""
    plain = value.quantize(Decimal(1)) if value == value.to_integral() else value.normalize()
    return grouped_number(plain)


def days_asked(policies: Iterable) -> int | None:
    """The longest window any of ``policies`` counts a subject total over; None when none has the condition."""
    asking = [policy for policy in policies if policy.subject_total_over is not None]
    return max((policy.subject_total_days for policy in asking), default=None)


Reader = Callable[..., Totals]
ManyReader = Callable[..., Mapping[int, Totals]]
_readers: list[tuple[Reader, ManyReader]] = []


def register(reader: Reader, many: ManyReader) -> None:
    """Make ``reader(hold, days)`` and ``many(holds, days, policies)`` (by hold pk) the readers of subject totals
    (the holds app's, at start-up)."""
    _readers[:] = [(reader, many)]


def read(hold, policies: Iterable) -> Totals | None:
    """``hold``'s subject totals over the longest window ``policies`` ask ({} when none has the condition), or None
    when no reader is registered (then the condition fails closed)."""
    days = days_asked(policies)
    if days is None:
        return {}
    return _readers[0][0](hold, days) if _readers else None


def read_many(holds: list, policies: Iterable) -> Mapping[int, Totals] | None:
    """The subject totals of each of ``holds`` (by pk), as ``read`` does, in a bounded number of queries."""
    policies = list(policies)
    days = days_asked(policies)
    if days is None:
        return {hold.pk: {} for hold in holds}
    return _readers[0][1](holds, days, policies) if _readers else None
