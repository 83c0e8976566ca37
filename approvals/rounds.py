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

How many approvals a hold needs, and in which stages of its chain (``approvals.chains``), is read from the current
policies, as the decision will be. The queue reads its badges apart, without a query per row (``approvals.badges``),
the rounds' sizes with its own query (``open_round_size``).
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

from approvals import chains, subject_totals
from approvals.models import Approval, ApprovalPolicy, AwaitedStage
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
    """A hold's requirement under the current policies, its open round's approvals in order, ``approvers``: the pks
    of everyone who approved the hold in any round, and ``states``: the open round in each stage of the chain
    (``approvals.chains``; [] for a hold one person decides or a policy decides alone)."""

    requirement: Requirement | None
    approvals: list[Approval]
    approvers: frozenset[int]
    states: list[chains.StageState] = dataclasses.field(default_factory=list)

    @property
    def required(self) -> int:
        if self.states:
            return chains.needed_total(self.states)
        return self.requirement.approvals_required if self.requirement else 1

    @property
    def round_needs(self) -> int:
        """How many approvals the open round needs before its decision is sent: the policy's count, and always one
        more than it has, as a round a policy lowered since has reached is sent by its next approval
        (``approving.count``)."""
        return max(self.required, len(self.approvals) + 1) if self.approvals else self.required

    @property
    def is_chain(self) -> bool:
        """Whether the policy has stages of its own: pages then show its steps, and the queue "Stage 2 of 3"."""
        return self.requirement is not None and chains.is_chain(self.requirement.policy)

    @property
    def awaited(self) -> str:
        """Who the open round waits for: "Finance or Legal", "any reviewer"; "" once the chain is complete."""
        return " or ".join(state.stage.who for state in chains.waiting(self.states))

    @property
    def one_decides(self) -> bool:
        """Whether one reviewer's decision goes as it is (``chains.one_decides``): no policy asks more of the hold."""
        return chains.one_decides([state.stage for state in self.states])

    @property
    def needs_several(self) -> bool:
        return self.required > 1 or bool(self.approvals) or not self.one_decides

    @property
    def badge(self) -> str:
        """ "Stage 2 of 3 · Finance · 1 of 2" for a chain; "Needs 2 approvals", "1 of 2 approvals", "1 approval given"
        (a policy lowered since), or "" for a hold one person decides (``chains.count_words``)."""
        if self.is_chain and chains.waiting(self.states):
            return chains.badge_words(self.states)
        return chains.count_words(self.required, len(self.approvals))

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
        round, or no stage open now admits them."""
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
        if awaited := self.group_awaited(viewer):
            return f"The next approval must come from a member of {awaited}."
        return ""

    def group_awaited(self, viewer: Viewer) -> str:
        """Who the open round's next approval must come from (``awaited``), when no stage open now admits
        ``viewer``; "" when one does, or the chain is complete (a policy lowered since: anyone's approval sends it)."""
        waiting = chains.waiting(self.states)
        if not waiting or any(state.stage.admits(viewer.group_names) for state in waiting):
            return ""
        return self.awaited

    def stage_for(self, viewer: Viewer, restarting: bool) -> int | None:
        """The stage ``viewer``'s approval counts in (``chains.place``): in the open round, or, ``restarting`` it with
        another decision, in a new round, in the first stage up to the step open now that admits them. None when none
        admits them; 1 for a hold without stages. A round complete already (a policy lowered since) takes one more
        approval, sending it, only in a stage that admits its giver."""
        if not self.states:
            return 1
        if restarting:  # a new round, up to the step open now (the last, once the chain is complete)
            fresh = chains.progress([state.stage for state in self.states], [], self.members)
            found = chains.place(fresh, viewer.group_names, chains.open_step(self.states))
        elif chains.waiting(self.states):
            found = chains.place(self.states, viewer.group_names, chains.open_step(self.states))
        else:  # complete under a policy lowered since: the last stage admitting them takes the approval sending it
            found = next((state for state in reversed(self.states) if state.stage.admits(viewer.group_names)), None)
        return found.stage.position if found else None

    @property
    def members(self) -> dict[int, frozenset]:
        """The members of the groups whose stages ask for everyone, as ``states`` read them."""
        return {state.stage.group.pk: state.members for state in self.states if state.members is not None}


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


def open_rounds_of(hold_pks: list[int]) -> dict[int, list[Approval]]:
    """The open round's approvals of each of the holds, by pk, in one query (for the queue's chains)."""
    found: dict[int, list[Approval]] = {}
    if hold_pks:
        only = ("hold", "stage", "stage_group", "approver", "position", "round", "created_at")
        for approval in with_rounds(Approval.objects.filter(hold__in=hold_pks).only(*only)):
            if approval.in_open_round:
                found.setdefault(approval.hold_id, []).append(approval)
    return found


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
    found = requirement(hold, policies, subject_totals=subject_totals.read(hold, policies))
    current = open_round(approvals)
    return Standing(
        found, current, frozenset(approval.approver_id for approval in approvals), states_of(found, current)
    )


def states_of(found: Requirement | None, current: list[Approval], members: dict | None = None) -> list:
    """The open round ``current`` in each stage of ``found``'s chain (``chains.progress``); ``members`` are the
    groups' members for stages asking for everyone, read when not given."""
    stages = chains.stages_for(found)
    if members is None:
        members = chains.everyone_members(chains.everyone_groups(stages))
    return chains.progress(stages, current, members)


def joinable_by(user, holds: QuerySet[Hold]) -> QuerySet[Hold]:
    """The ``holds`` waiting for ``user``'s stage: ``user`` never approved the hold (in any round), and it waits for a
    stage ``user`` may approve in (``approvals.awaiting``: its open round's, or a chain's first)."""
    mine = AwaitedStage.objects.filter(Q(group__isnull=True) | Q(group__in=user.groups.all()), hold=OuterRef("pk"))
    return not_approved_by(user, holds).filter(Exists(mine))


def not_approved_by(user, holds: QuerySet[Hold]) -> QuerySet[Hold]:
    """The ``holds`` but those ``user`` approved, in any round: they may not give them another approval."""
    return holds.exclude(Exists(Approval.objects.filter(hold=OuterRef("pk"), approver=user)))
