"""What a policy's test of a hold's amounts concludes, failing closed (``Verdict``)."""

import dataclasses
from collections.abc import Callable
from decimal import Decimal

from reviewqueue.agent_numbers import TOTAL, Carried


@dataclasses.dataclass(frozen=True)
class Verdict:
    """What a test of a hold's amounts concluded, failing closed.

    ``every``: it holds for every amount and the total, each read for certain: only then may it let a hold
    through with fewer people. ``some``: it holds for at least one of them, or one is in doubt: enough for it
    to make a hold need more people. ``path`` names the amount that decided (``TOTAL`` for the total): the
    largest amount that passes, else the total if it passes, else the largest amount; either ``number``
    (read for certain) or ``doubt`` (why it is in doubt, ``Amount.doubt``) says what it was.
    """

    every: bool
    some: bool
    path: str
    doubt: str = ""
    number: Decimal | None = None


def _largest(named: list[tuple[str, Decimal]]) -> tuple[str, Decimal]:
    return max(named, key=lambda pair: pair[1])


def of(carried: Carried, passes: Callable[[Decimal], bool], currency: str = "") -> Verdict | None:
    """Whether ``passes`` holds of ``carried``'s amounts and their total, failing closed (see ``Verdict``); None without
    amounts: a test of amounts says nothing of a hold that carries none."""
    if not carried.amounts:
        return None
    if (doubtful := carried.doubtful(currency)) is not None:
        return Verdict(every=False, some=True, path=doubtful.path, doubt=doubtful.doubt(currency))
    named = [(amount.path, amount.reading.exact) for amount in carried.amounts]
    passing = [(path, number) for path, number in named if passes(number)]
    if carried.totalled and len(carried.amounts) > 1:  # said after the amounts: one that passes names itself first
        total = (TOTAL, carried.total)
        named.append(total)
        passing += [total] if passes(carried.total) else []
    path, number = _largest([pair for pair in passing if pair[0] != TOTAL] or passing or named)
    return Verdict(every=len(passing) == len(named), some=bool(passing), path=path, number=number)
