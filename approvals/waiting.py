"""The approvals still waiting for the next one: each hold's open round, for many holds at once."""

from __future__ import annotations

from itertools import groupby
from operator import attrgetter

from approvals import rounds
from approvals.models import Approval


def open_rounds(holds) -> dict[int, list[Approval]]:
    """Each hold's open round (``rounds.open_round``) by the hold's pk, for the holds that have one; one query."""
    approvals = rounds.with_rounds(
        Approval.objects.filter(hold__in=[hold.pk for hold in holds]).select_related("approver").order_by("hold")
    )
    found = {pk: rounds.open_round(given) for pk, given in groupby(approvals, key=attrgetter("hold_id"))}
    return {pk: current for pk, current in found.items() if current}
