"""The stages each hold's open round waits for, kept beside it (``models.AwaitedStage``) so that the queue's "Waiting
for my stage" is a few index reads rather than a hold's chain worked out per row.

Rewritten with the hold's row locked by everything that changes a round (``approving.count``, ``approving.withdraw``,
``approving.uncount``), and for every hold with an open round when a policy, a stage or a group changes
(``refresh_open_rounds``, after the change commits). A round the platform's change to the hold ended, or a decision
ended, leaves rows behind that count for nothing: the queue reads them only beside the open round itself
(``rounds.joinable_by``).
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Exists, OuterRef

from approvals import chains, rounds
from approvals.models import Approval, AwaitedStage
from holds.models import Hold
from reviewqueue import roles
from teams import scopes


def refresh(hold: Hold, states: list) -> None:
    """Make the stages ``hold``'s open round waits for those of ``states`` (``chains.StageState``); none once the
    round is complete or empty."""
    AwaitedStage.objects.filter(hold=hold).delete()
    AwaitedStage.objects.bulk_create(
        AwaitedStage(hold=hold, position=state.stage.position, group=state.stage.group)
        for state in chains.waiting(states)
    )


def refresh_standing(hold: Hold) -> None:
    """Read where ``hold``'s approvals stand now and ``refresh`` from it (its row locked by the caller)."""
    found = rounds.standing(hold)
    refresh(hold, found.states if found.approvals else [])


def next_approvers(hold: Hold):
    """Who may give ``hold``'s next approval, when its chain says (``rounds.standing``): the reviewers of the groups of
    the stages it waits for now, but those who approved it; None when any reviewer may (no chain, or a waiting stage of
    any reviewer). Reminders go to them rather than to every reviewer."""
    found = rounds.standing(hold)
    waiting = chains.waiting(found.states)
    if not waiting or any(state.stage.group is None for state in waiting):
        return None
    groups = [state.stage.group for state in waiting]
    return roles.reviewers().filter(groups__in=groups).exclude(pk__in=found.approvers).distinct()


def blocked(hold: Hold, found: rounds.Standing) -> set[int]:
    """The positions of the stages ``hold`` waits for that nobody can complete: too few reviewers of the stage's group
    who may see the hold and have not approved it are left. Such a stage blocks the hold; it is never skipped."""
    stuck = set()
    for state in chains.waiting(found.states):
        if state.stage.group is None:
            continue
        members = roles.reviewers().filter(groups=state.stage.group).exclude(pk__in=found.approvers)
        if len(scopes.users_who_may_see([hold], scopes.viewers_of(members))) < state.needs - len(state.approvals):
            stuck.add(state.stage.position)
    return stuck


def refresh_open_rounds(**_) -> None:
    """After a policy, a stage or a group changed: refresh every open hold with an approval no decision took, each
    under its own lock (``approvals.apps`` calls it once the change commits)."""
    undecided = Approval.objects.filter(hold=OuterRef("pk"), decision__isnull=True)
    pks = list(Hold.objects.filter(Exists(undecided), status=Hold.Status.OPEN).values_list("pk", flat=True))
    for pk in pks:
        with transaction.atomic():
            hold = Hold.objects.select_for_update().filter(pk=pk).first()
            if hold is not None:
                refresh_standing(hold)
