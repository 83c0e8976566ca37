"""The stages each open hold waits for, kept beside it (``models.AwaitedStage``) so that the queue's "Waiting for my
stage" is a few index reads rather than a hold's chain worked out per row.

What a hold waits for: the stages its open round waits for (any policy's, once someone approved), or, for a hold
under a policy with stages of its own that nobody approved yet, its chain's first stages. Kept by everything that
changes that, the hold's row locked: the counting of approvals (``approving.count``, ``approving.withdraw``,
``approving.uncount``); sync writing a hold (``follow_mirrored``: a new hold's first stages, a changed hold's round
over); and a change to a policy, a stage or a group (``refresh_open_rounds`` at once for the rounds under way,
``refresh_all`` in a task for the rest, after the change commits). A decided or closed hold leaves the queue, and its
rows count for nothing.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import operator

from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from approvals import chains, policies, rounds, signals, subject_totals
from approvals.escalation import may_apply
from approvals.models import Approval, AwaitedStage
from holds.models import Hold
from reviewqueue import queueing, roles, sweeping
from teams import scopes

CHUNK = 2000
REFRESH_TASK = "approvals.tasks.refresh_awaited_stages"
SWEEP = "awaited_stages"  # its failures' name in the log and /metrics


def refresh(hold: Hold, states: list) -> None:
    """Make the stages ``hold``'s open round waits for those of ``states`` (``chains.StageState``); none once the
    round is complete or empty."""
    AwaitedStage.objects.filter(hold=hold).delete()
    AwaitedStage.objects.bulk_create(
        AwaitedStage(hold=hold, position=state.stage.position, group=state.stage.group)
        for state in chains.waiting(states)
    )


def refresh_standing(hold: Hold) -> None:
    """Read where ``hold``'s approvals stand now and ``refresh`` from it (its row locked by the caller): an open round's
    stages, or a chain's first ones."""
    found = rounds.standing(hold)
    refresh(hold, found.states if found.approvals or found.is_chain else [])


def chain_policies() -> list:
    """The policies with stages of their own (``chains.is_chain``), as the rules read them now."""
    return [policy for policy in policies.all_policies() if chains.is_chain(policy)]


def follow_mirrored(env: str, new_hold_ids: list[str], changed: list[Hold]) -> None:
    """Sync wrote these holds (in its transaction, the changed ones' rows locked): stamp the new ones a chain applies
    to with its first stages, and read the changed ones afresh (the platform's change ended their open round). Costs
    nothing more while no policy has stages and no changed hold waited for one. A hold whose stages cannot be worked
    out keeps what it had (none, for a new one), logged and counted (``reviewqueue.sweeping``): it fails alone, never
    sync's batch. The changed holds are refreshed in one savepoint, each in its own only should that fail: a savepoint
    a hold, on sync's path, would cost round trips and PostgreSQL's subtransactions."""
    waited = set(AwaitedStage.objects.filter(hold__in=changed).values_list("hold", flat=True)) if changed else set()
    chained = chain_policies()
    refreshed = [hold for hold in changed if hold.pk in waited or chained]
    sweeping.batched(SWEEP, refreshed, lambda holds: [refresh_standing(hold) for hold in holds])
    if chained and new_hold_ids:
        stamp_first_stages(Hold.objects.filter(env=env, hold_id__in=new_hold_ids), chained)


@dataclasses.dataclass(frozen=True)
class Stamped:
    """A hold stamped with its chain's first stages: its policy, the states of those first stages
    (``chains.StageState``), and how many stages the chain has."""

    hold: Hold
    policy_pk: int
    first_stages: list
    stage_count: int


def stamp_first_stages(holds, chained: list) -> int:
    """Stamp each of ``holds`` (none approved yet) that a policy of ``chained`` wins with its chain's first stages;
    the holds are read in chunks, only those the chains' globs match (``escalation.may_apply``), each chunk in one
    savepoint and, should it fail, each hold alone (``sweeping.batched``). Returns how many."""
    every = policies.all_policies()
    globs = [may_apply(policy) for policy in chained]
    if all(globs):  # an empty Q (a policy of blank globs) matches every hold, and would vanish from an OR
        holds = holds.filter(functools.reduce(operator.or_, globs))
    stamp = functools.partial(_stamp, every=every)
    stamped, first_at_stage = 0, {}
    for chunk in itertools.batched(holds.prefetch_related("items").iterator(chunk_size=CHUNK), CHUNK):
        for found in sweeping.batched(SWEEP, list(chunk), stamp):
            stamped += 1
            for state in found.first_stages:  # the first hold at each stage of a group, kept: not every hold stamped
                if state.stage.group is not None:
                    first_at_stage.setdefault((found.policy_pk, state.stage.position), (found, state))
    _tell_unstaffed(list(first_at_stage.values()))
    return stamped


def _stamp(holds: list[Hold], *, every: list) -> list[Stamped]:
    """Stamp those of ``holds`` a chain of ``every`` wins with its first stages, their subject totals read at once
    (``subject_totals.read_many``: sync's hot path pays no query per hold)."""
    totals = subject_totals.read_many(holds, every)
    rows, stamped = [], []
    for hold in holds:
        need = policies.requirement(hold, every, subject_totals=None if totals is None else totals.get(hold.pk))
        if need is None or not chains.is_chain(need.policy):
            continue
        stages = chains.stages_for(need)
        first = chains.waiting(chains.progress(stages, [], {}))
        rows += [AwaitedStage(hold=hold, position=state.stage.position, group=state.stage.group) for state in first]
        stamped.append(Stamped(hold, need.policy.pk, first, len(stages)))
    AwaitedStage.objects.bulk_create(rows, ignore_conflicts=True)
    return stamped


def _tell_unstaffed(first_at_stage: list[tuple[Stamped, object]]) -> None:
    """Of the first stages holds just arrived at (the first ``Stamped`` hold at each, with the stage's state), tell
    the admins of those whose group has no active reviewer: once a day for each policy and stage, about the first such
    hold (every one's page says it is blocked)."""
    today = timezone.localdate()

    def tell(pairs: list[tuple[Stamped, object]]) -> list:
        for found, state in pairs:
            if not staffed(state.stage.group):
                key = f"blocked:policy:{found.policy_pk}:stage:{state.stage.position}:{today.isoformat()}"
                signals.stage_waiting.send(
                    sender=None, hold=found.hold, states=[state], stages=found.stage_count, round_number=0, key=key
                )
        return pairs

    sweeping.batched(SWEEP, first_at_stage, tell, lambda pair: sweeping.hold_of(pair[0].hold))


def next_approvers(hold: Hold):
    """Who may give ``hold``'s next approval, when its chain says (``rounds.standing``): the reviewers of the groups of
    the stages it waits for now, but those who approved it; None when any reviewer may (no chain, or a waiting stage of
    any reviewer). Reminders go to them rather than to every reviewer."""
    found = rounds.standing(hold)
    waiting = chains.waiting(found.states)
    if not waiting or any(state.stage.group is None for state in waiting):
        return None
    return _reviewers_of([state.stage.group for state in waiting], found.approvers)


def still_to_approve(hold: Hold, state, approvers) -> list:
    """Who can still complete ``state``'s stage (``chains.StageState``, of a group) of ``hold``: the reviewers of its
    group who may see the hold and are not among its ``approvers`` (the pks of everyone who approved it)."""
    return scopes.users_who_may_see([hold], scopes.viewers_of(_reviewers_of([state.stage.group], approvers)))


def staffed(group) -> bool:
    """Whether ``group`` (a group, or its pk) has an active reviewer: without one, a stage asking for it blocks every
    hold that reaches it."""
    return _reviewers_of([group], ()).exists()


def _reviewers_of(groups: list, approvers):
    return roles.reviewers().filter(groups__in=groups).exclude(pk__in=approvers).distinct()


def blocked(hold: Hold, found: rounds.Standing) -> set[int]:
    """The positions of the stages ``hold`` waits for that nobody can complete: too few reviewers of the stage's group
    who may see the hold and have not approved it are left. Such a stage blocks the hold; it is never skipped."""
    stuck = set()
    for state in chains.waiting(found.states):
        if state.stage.group is None:
            continue
        if len(still_to_approve(hold, state, found.approvers)) < state.needs - state.given:
            stuck.add(state.stage.position)
    return stuck


def refresh_open_rounds(**_) -> None:
    """After a policy, a stage or a group changed: refresh every open hold with an approval no decision took, each
    under its own lock, then queue ``refresh_all`` for the holds nobody approved (``approvals.apps`` calls it once the
    change commits)."""
    for pk in _under_way():
        with transaction.atomic():
            hold = Hold.objects.select_for_update(no_key=True).filter(pk=pk).first()
            if hold is not None:
                refresh_standing(hold)
    queueing.queue(REFRESH_TASK, description="the first stages of the holds nobody approved")


def refresh_all() -> int:
    """The first stages of every open hold nobody approved, afresh from the policies as they are: their rows dropped
    and stamped again (``stamp_first_stages``). A task's work: at 100,000 open holds it reads each one a chain's
    globs match. Returns how many were stamped."""
    # Read as each hold is stamped, not once before: a hold approved meanwhile keeps the rows its counting wrote.
    untouched = Hold.objects.filter(status=Hold.Status.OPEN).exclude(_undecided("pk"))
    AwaitedStage.objects.filter(hold__status=Hold.Status.OPEN).exclude(_undecided("hold")).delete()
    chained = chain_policies()
    return stamp_first_stages(untouched, chained) if chained else 0


def _under_way() -> list[int]:
    return list(Hold.objects.filter(_undecided("pk"), status=Hold.Status.OPEN).values_list("pk", flat=True))


def _undecided(hold_ref: str) -> Exists:
    """Whether the hold (``hold_ref``, of the outer query) has an approval no decision took: a round under way."""
    return Exists(Approval.objects.filter(hold=OuterRef(hold_ref), decision__isnull=True))
