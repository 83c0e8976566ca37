"""Who approved a decision, in order, with what each approved or changed: for the audit's decision page.

A decision made under a policy that asks for several approvals links the round it ended
(``Approval.decision``). Its *round chain* is that round and the rounds just before it that
no decision links and that approved the hold as it was then (the same ``payload_digest``):
each of them was restarted by a later approver who changed the decision. A round an earlier
decision ended (one the platform refused, say), or one the platform's change of the hold
ended, is not part of it. The decision was *approved* when its reviewer gave the linked
round's last approval and the round reached its count; otherwise it is a rejection, by a
later approver or by one of the chain's own approvers taking theirs back.
"""

from __future__ import annotations

import dataclasses
from itertools import groupby

from approvals.models import Approval
from audit.describe import approved
from holds.models import Decision


@dataclasses.dataclass(frozen=True)
class Approver:
    """One approval of a decision's round chain, as the page shows it: what it did, and whether it counted."""

    approval: Approval
    did: str  # "amount 1,200.00 → 1,000.00", "Approve A-1001"
    superseded: bool  # in a round a later approver restarted: it did not count towards the decision
    restarted: bool  # it changed the earlier round's decision, starting a new round


@dataclasses.dataclass(frozen=True)
class Approvers:
    """The approvals that led to a decision, in order, and whether the decision rejected instead of approving."""

    rows: list[Approver]
    rejected_by_reviewer: bool  # the decision is a rejection (by a later approver, or an earlier one), not an approval

    @property
    def approval_pks(self) -> list[int]:
        return [row.approval.pk for row in self.rows]


def round_chain(rounds: list[list], index: int) -> list[list]:
    """The round ``rounds[index]`` and the rounds just before it that no decision links and that approved the same
    hold content, oldest first (see the module's docstring).

    ``rounds`` are one hold's approvals grouped by round, in order; each approval has ``round``,
    ``decision_id`` and ``payload_digest``.
    """
    chain = [rounds[index]]
    for earlier in reversed(rounds[:index]):
        first, later = earlier[0], chain[0][0]
        if (
            first.decision_id is not None
            or first.payload_digest != later.payload_digest
            or first.round != later.round - 1
        ):
            break
        chain.insert(0, earlier)
    return chain


def approved_by_reviewer(linked: list, reviewer_pk: int) -> bool:
    """Whether the decision was the approval completing ``linked``, its round: its reviewer gave the last place,
    and the round reached the count asked for then."""
    last = linked[-1]
    return last.approver_id == reviewer_pk and len(linked) >= last.approvals_required


def of_decision(decision: Decision) -> Approvers:
    """Every approval of ``decision``'s round chain, restarted rounds first, in order; one query."""
    given = (
        Approval.objects.filter(hold=decision.hold_id, created_at__lte=decision.created_at)
        .select_related("approver")
        .order_by("round", "position")
    )
    rounds = [list(approvals) for _, approvals in groupby(given, key=lambda approval: approval.round)]
    index = next((i for i, approvals in enumerate(rounds) if approvals[0].decision_id == decision.pk), None)
    if index is None:
        return Approvers([], False)
    chain = round_chain(rounds, index)
    rows = [
        Approver(
            approval,
            approved(approval.items),
            superseded=approvals is not chain[-1],
            restarted=approval.position == 1 and approvals is not chain[0],
        )
        for approvals in chain
        for approval in approvals
    ]
    return Approvers(rows, not approved_by_reviewer(chain[-1], decision.reviewer_id))
