"""Where a hold's approvals stand: its open round, who may give the next approval, and who is waiting for whom.

Approvals count in rounds (see ``approvals.approving``). A hold's open round is its latest
round while no decision links its approvals and the hold is still what they approved: once
the round reached its count, or a later approver rejected, the decision links them and the
round is over; once the platform changed the hold (its ``payload_digest`` is no longer the
one the round's approvals recorded), the round is over too, and its approvals are history.
A round of a decision the platform refused, or whose reviewer undid it, is over too (Undo
unlinks its round again, see ``approving.uncount``).

A person approves a hold once: whoever gave an approval in any of its rounds may not give
another, not even to a new round someone else started; they may still reject it.

How many approvals a hold needs is read from the current policies, as the decision will be.
The queue reads its badges apart, without a query per row (``approvals.badges``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Exists, OuterRef, Q, QuerySet, Subquery

from approvals.badges import badge_words
from approvals.models import Approval, ApprovalPolicy
from approvals.policies import Requirement, all_policies, requirement
from approvals.wording import approval_words
from holds.models import Hold
from reviewqueue.viewer import Viewer


NO_ROUND = 0  # the round a page shows when it shows no open round (approval ids start at 1)


def shown(current: list[Approval]) -> int:
    """How a page names the open round it shows, for ``approving.count`` to check: its latest approval's id."""
    return current[-1].pk if current else NO_ROUND


@dataclasses.dataclass(frozen=True)
class Standing:
    """A hold's requirement under the current policies, its open round's approvals in order, and ``approvers``:
    the pks of everyone who approved the hold in any round."""

    requirement: Requirement | None
    approvals: list[Approval]
    approvers: frozenset[int]

    @property
    def required(self) -> int:
        return self.requirement.approvals_required if self.requirement else 1

    @property
    def round_needs(self) -> int:
        """How many approvals the open round needs before its decision is sent: the policy's count, and always one
        more than it has, as a round a policy lowered since has reached is sent by its next approval (``approving.count``)."""
        return max(self.required, len(self.approvals) + 1) if self.approvals else self.required

    @property
    def later_group(self):
        return self.requirement.policy.later_approver_group if self.requirement else None

    @property
    def needs_several(self) -> bool:
        return self.required > 1 or bool(self.approvals)

    @property
    def badge(self) -> str:
        """"Needs 2 approvals", "1 of 2 approvals", "1 approval given" (a policy lowered since), or "" for a hold one
        person decides (``badges.badge_words``)."""
        return badge_words(self.required, len(self.approvals))

    @property
    def summary(self) -> str:
        """"1 of 2 approvals: alice approved 1,200.00 → 1,000.00", or "" without approvals."""
        if not self.approvals:
            return ""
        return f"{self.badge}: " + "; ".join(approval_words(approval) for approval in self.approvals)

    def has_approved(self, user) -> bool:
        """Whether ``user`` approved the hold, in its open round or an earlier one."""
        return user.pk in self.approvers

    def refusal_for(self, viewer: Viewer) -> str:
        """Why ``viewer`` may not give the hold's next approval ("" when they may): they approved it already, in any
        round, or the open round's next place needs a group they are not in."""
        mine = next((approval for approval in self.approvals if approval.approver_id == viewer.pk), None)
        if mine:
            return (f"You gave approval {mine.position} of {self.round_needs} of this decision; "
                    "another person must give the next one.")
        if self.has_approved(viewer.user):
            return ("You approved this hold before, and a person approves a hold once: "
                    "another person must give the next one. You may still reject it.")
        if group := self.group_awaited(viewer):
            return f"The next approval must come from a member of {group.name}."
        return ""

    def group_awaited(self, viewer: Viewer):
        """The group the open round's next place needs, when ``viewer`` is not in it (else None)."""
        group = self.later_group
        if self.approvals and group is not None and group.name not in viewer.group_names:
            return group
        return None


def undoable(approval: Approval, now: datetime) -> bool:
    """Whether the approval is still in its undo window (``UNDO_SECONDS`` after it was given)."""
    return approval.created_at + timedelta(seconds=settings.UNDO_SECONDS) > now


def open_round(approvals: Iterable[Approval], payload_digest: str) -> list[Approval]:
    """The open round's approvals among all of one hold's, in order ([] when its latest round is over).

    ``payload_digest`` is the hold's current one: a round approved when the hold was otherwise is over.
    """
    current = _latest_round(approvals)
    if any(approval.decision_id for approval in current):
        return []
    if any(approval.payload_digest != payload_digest for approval in current):
        return []
    return current


def superseded_round(approvals: Iterable[Approval], payload_digest: str) -> list[Approval]:
    """The approvals of the latest round when the platform changed the hold since they were given, before any
    decision ended that round: history, which no longer counts ([] otherwise)."""
    current = _latest_round(approvals)
    if any(approval.decision_id for approval in current):
        return []
    return current if any(approval.payload_digest != payload_digest for approval in current) else []


def _latest_round(approvals: Iterable[Approval]) -> list[Approval]:
    approvals = list(approvals)
    if not approvals:
        return []
    latest = max(approval.round for approval in approvals)
    return sorted((a for a in approvals if a.round == latest), key=lambda a: a.position)


def standing(hold: Hold, policies: list[ApprovalPolicy] | None = None, approvals: Iterable[Approval] | None = None) -> Standing:
    """One hold's standing; its items are read from ``hold.items`` (prefetch them), its approvals queried unless given."""
    policies = all_policies() if policies is None else policies
    if approvals is None:
        approvals = Approval.objects.filter(hold=hold).select_related("approver")
    approvals = list(approvals)
    return Standing(
        requirement(hold, policies), open_round(approvals, hold.payload_digest),
        frozenset(approval.approver_id for approval in approvals),
    )


def joinable_by(user, holds: QuerySet[Hold]) -> QuerySet[Hold]:
    """The ``holds`` whose open round ``user`` may join: someone approved what the hold still is, ``user`` never
    approved the hold (in any round), and ``user`` is in the group the policy (as it is now) asks of later approvers."""
    latest = Approval.objects.filter(hold=OuterRef("hold")).order_by("-round").values("round")[:1]
    in_latest_round = Approval.objects.filter(hold=OuterRef("pk"), round=Subquery(latest))
    allowed = Q(policy__isnull=True) | Q(policy__later_approver_group__isnull=True) | Q(
        policy__later_approver_group__in=user.groups.all()
    )
    over = Q(decision__isnull=False) | ~Q(payload_digest=OuterRef("payload_digest"))
    return not_approved_by(user, holds).filter(Exists(in_latest_round.filter(allowed))).exclude(
        Exists(in_latest_round.filter(over))
    )


def not_approved_by(user, holds: QuerySet[Hold]) -> QuerySet[Hold]:
    """The ``holds`` but those ``user`` approved, in any round: they may not give them another approval."""
    return holds.exclude(Exists(Approval.objects.filter(hold=OuterRef("pk"), approver=user)))
