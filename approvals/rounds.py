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
The queue reads its badges apart, without a query per row (``approvals.badges``), the rounds' sizes with its own
query (``open_round_size``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from datetime import datetime, timedelta
from operator import attrgetter

from django.conf import settings
from django.db.models import (
    BooleanField,
    Exists,
    ExpressionWrapper,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
)

from approvals import subject_totals
from approvals.badges import badge_words
from approvals.models import Approval, ApprovalPolicy
from approvals.policies import Requirement, all_policies, requirement
from approvals.wording import approval_words
from holds.models import Hold
from reviewqueue import processcache
from reviewqueue.sql import expressions
from reviewqueue.sql.expressions import RowSQL
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
        more than it has, as a round a policy lowered since has reached is sent by its next approval
        (``approving.count``)."""
        return max(self.required, len(self.approvals) + 1) if self.approvals else self.required

    @property
    def later_group(self):
        return self.requirement.policy.later_approver_group if self.requirement else None

    @property
    def needs_several(self) -> bool:
        return self.required > 1 or bool(self.approvals)

    @property
    def badge(self) -> str:
        """ "Needs 2 approvals", "1 of 2 approvals", "1 approval given" (a policy lowered since), or "" for a hold one
        person decides (``badges.badge_words``)."""
        return badge_words(self.required, len(self.approvals))

    @property
    def summary(self) -> str:
        """ "1 of 2 approvals: alice approved 1,200.00 → 1,000.00", or "" without approvals."""
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
            return (
                f"You gave approval {mine.position} of {self.round_needs} of this decision; "
                "another person must give the next one."
            )
        if self.has_approved(viewer.user):
            return (
                "You approved this hold before, and a person approves a hold once: "
                "another person must give the next one. You may still reject it."
            )
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


def in_open_round() -> Q:
    """A filter on approvals keeping those in their hold's open round: the rule, in one place, that every reader of
    rounds goes through (``with_rounds`` for approvals in Python, ``open_round_size`` and ``joinable_by`` in the
    queue's queries, each compiled once a process).

    An approval is in its hold's open round when its round is the hold's latest and no approval of that round is
    linked to a decision or approved the hold as it was before the platform changed it (its ``payload_digest``).
    """
    return _in_latest_round() & ~Exists(_same_round().filter(Q(decision__isnull=False) | _approved_another_payload()))


def in_superseded_round() -> Q:
    """A filter on approvals keeping those of a latest round that the platform's change to the hold ended before any
    decision ended it: history, which no longer counts."""
    same_round = _same_round()
    return (
        _in_latest_round()
        & ~Exists(same_round.filter(decision__isnull=False))
        & Exists(same_round.filter(_approved_another_payload()))
    )


def _in_latest_round() -> Q:
    return Q(round=Subquery(Approval.objects.filter(hold=OuterRef("hold")).order_by("-round").values("round")[:1]))


def _same_round() -> QuerySet[Approval]:
    return Approval.objects.filter(hold=OuterRef("hold"), round=OuterRef("round"))


def _approved_another_payload() -> Q:
    return ~Q(payload_digest=F("hold__payload_digest"))


def with_rounds(approvals: QuerySet[Approval]) -> QuerySet[Approval]:
    """``approvals``, each read with whether it is in its hold's open round (``in_open_round``) or a superseded one
    (``in_superseded_round``), for ``open_round`` and ``superseded_round``: no query more."""
    in_open, in_superseded = _round_flags()
    return approvals.annotate(in_open_round=in_open, in_superseded_round=in_superseded)


@processcache.cached
def _round_flags() -> tuple[RowSQL, RowSQL]:
    """``in_open_round`` and ``in_superseded_round`` as expressions about an approval, compiled once a process
    (``expressions.compiled_once``): every page and step that weighs a hold's approvals reads them. The rules of rounds
    are written once, as ORM expressions; compiling their nested subqueries took longer than running them (longer than
    the rest of the queue's query), so they are compiled once a process, not per query."""
    return (
        expressions.compiled_once(Approval, ExpressionWrapper(in_open_round(), output_field=BooleanField())),
        expressions.compiled_once(Approval, ExpressionWrapper(in_superseded_round(), output_field=BooleanField())),
    )


def open_round(approvals: Iterable[Approval]) -> list[Approval]:
    """The open round's approvals among one hold's, read ``with_rounds``, in order ([] when its latest round is
    over)."""
    return sorted((approval for approval in approvals if approval.in_open_round), key=attrgetter("position"))


def superseded_round(approvals: Iterable[Approval]) -> list[Approval]:
    """The approvals of the hold's superseded round among one hold's, read ``with_rounds``, in order ([] if none)."""
    return sorted((approval for approval in approvals if approval.in_superseded_round), key=attrgetter("position"))


@processcache.cached
def open_round_size() -> RowSQL:
    """An expression for the hold queryset: how many approvals the hold's open round has (0 without one), compiled
    once a process (see ``_round_flags``)."""
    in_round = Approval.objects.filter(in_open_round(), hold=OuterRef("pk"))
    size = Subquery(expressions.count_of(in_round), output_field=IntegerField())
    return expressions.compiled_once(Hold, size)


def standing(
    hold: Hold, policies: list[ApprovalPolicy] | None = None, approvals: Iterable[Approval] | None = None
) -> Standing:
    """One hold's standing; its items are read from ``hold.items`` (prefetch them), its approvals (all of the hold's,
    read ``with_rounds``) queried unless given."""
    policies = all_policies() if policies is None else policies
    if approvals is None:
        approvals = with_rounds(Approval.objects.filter(hold=hold).select_related("approver"))
    approvals = list(approvals)
    return Standing(
        requirement(hold, policies, subject_totals=subject_totals.read(hold, policies)),
        open_round(approvals),
        frozenset(approval.approver_id for approval in approvals),
    )


def joinable_by(user, holds: QuerySet[Hold]) -> QuerySet[Hold]:
    """The ``holds`` whose open round ``user`` may join: someone approved what the hold still is, ``user`` never
    approved the hold (in any round), and ``user`` is in the group the policy (as it is now) asks of later approvers."""
    allowed = (
        Q(policy__isnull=True)
        | Q(policy__later_approver_group__isnull=True)
        | Q(policy__later_approver_group__in=user.groups.all())
    )
    in_open, _ = _round_flags()
    joinable = Approval.objects.filter(in_open, allowed, hold=OuterRef("pk"))
    return not_approved_by(user, holds).filter(Exists(joinable))


def not_approved_by(user, holds: QuerySet[Hold]) -> QuerySet[Hold]:
    """The ``holds`` but those ``user`` approved, in any round: they may not give them another approval."""
    return holds.exclude(Exists(Approval.objects.filter(hold=OuterRef("pk"), approver=user)))
