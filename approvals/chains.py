"""Approval chains: a policy's requirement as stages, and where a round of approvals stands in them.

A stage says who approves (a group, or any reviewer), how many of them (N distinct people, or everyone in the
group) and when: after the stage before it, or alongside it (``with_previous``). Stages run side by side form one
**step**; a step opens once every stage of the steps before it is complete. The rules, which ``approvals.approving``
applies with the hold's row locked:

- An approval counts in one stage of its round: the first stage, in the chain's order, that is open (its step is
  the round's open one), not yet complete, and whose group the approver is in (``place``). A person approves a hold
  once (``approvals.rounds``), so nobody counts in two stages, and a delegate approves as themselves.
- An approval that changes the decision (an edit, say) starts a new round, in the first stage, up to the step open
  before it, that admits its giver: the stages before it open again for the new data, and are told so, their
  approvals of the old data being history.
- The round is complete, and only then is the decision sent, when every stage has its people.
- "Everyone in the group" is the group's active members when counted (``everyone_members``): every one of them must
  be among the stage's approvers.

A policy without stage rows reads as the stages its people and later group mean (``stages_of``): N people are one
stage of N, any reviewer; N with a later group is 1 of any reviewer, then N-1 of the group. 0 people is no stage: the
policy decides by itself. A remembered approval has none either.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable, Mapping

from django.contrib.auth.models import Group

ANY_REVIEWER = "any reviewer"


@dataclasses.dataclass(frozen=True)
class Stage:
    """One stage of a chain: ``group`` None for any reviewer, ``approvals`` None for everyone in the group."""

    position: int
    group: Group | None
    approvals: int | None
    with_previous: bool
    step: int

    @property
    def who(self) -> str:
        """ "Finance", or "any reviewer"."""
        return self.group.name if self.group is not None else ANY_REVIEWER

    @property
    def quorum_words(self) -> str:
        """ "2 of Finance", "everyone in Legal", "1 reviewer"."""
        if self.approvals is None:
            return f"everyone in {self.who}"
        if self.group is None:
            return f"{self.approvals} reviewer{'s' * (self.approvals != 1)}"
        return f"{self.approvals} of {self.who}"

    def admits(self, group_names: Collection[str]) -> bool:
        """Whether a person in ``group_names`` may approve in this stage."""
        return self.group is None or self.group.name in group_names


def stages_of(policy) -> list[Stage]:
    """The chain ``policy`` asks for (see the module's docstring); [] for one deciding by itself, or none."""
    if policy is None:
        return []
    return _read(policy, policy.approvals_required)


def stages_for(requirement) -> list[Stage]:
    """The chain a hold's requirement (``policies.Requirement``, or None) asks for: its policy's, but read from the
    count the requirement settled on where that differs from the policy's own (a row that could not be read asks for
    at least one person): then one stage of that many reviewers."""
    if requirement is None:
        return []
    return _read(requirement.policy, requirement.approvals_required)


def _read(policy, people) -> list[Stage]:
    if not isinstance(people, int) or people <= 0:
        return []
    if is_chain(policy):
        # The whole chain, never less: more people than it needs (a doubtful amount raising it to another policy's
        # count) are a last stage of any reviewers.
        rows = [(row.group, row.approvals, row.with_previous) for row in policy.stages.all()]
        more = people - policy.approvals_required
        return _with_steps(rows + ([(None, more, False)] if more > 0 else []))
    later = getattr(policy, "later_approver_group", None)
    if later is None or people == 1:
        return _with_steps([(None, people, False)])
    return _with_steps([(None, 1, False), (later, people - 1, False)])


def is_chain(policy) -> bool:
    """Whether ``policy`` has stages of its own (rather than its people and later group read as stages)."""
    # An unsaved policy (a replay of the admin's form values, or a test's) has no stage rows of its own.
    return getattr(policy, "pk", None) is not None and hasattr(policy, "stages") and bool(policy.stages.all())


def _with_steps(shapes: list[tuple]) -> list[Stage]:
    stages, step = [], 0
    for position, (group, approvals, with_previous) in enumerate(shapes, start=1):
        step += 0 if with_previous and stages else 1
        stages.append(Stage(position, group, approvals, bool(with_previous and stages), step))
    return stages


def everyone_groups(stages: Iterable[Stage]) -> set[int]:
    """The pks of the groups whose every member a stage asks for: their members are to be read."""
    return {stage.group.pk for stage in stages if stage.approvals is None and stage.group is not None}


def everyone_members(group_pks: Collection[int]) -> dict[int, frozenset[int]]:
    """The active members of each group now, by group pk: whom "everyone in the group" asks for."""
    if not group_pks:
        return {}
    from django.contrib.auth import get_user_model

    found: dict[int, set[int]] = {pk: set() for pk in group_pks}
    users = get_user_model().objects.filter(is_active=True, groups__in=group_pks)
    for user_pk, group_pk in users.values_list("pk", "groups"):
        if group_pk in found:
            found[group_pk].add(user_pk)
    return {pk: frozenset(members) for pk, members in found.items()}


@dataclasses.dataclass(frozen=True)
class StageState:
    """A stage in one round: how many people it ``needs``, the ``approvals`` counting in it, its ``state``: "done",
    "waiting" (its step is open) or "later"; and, for a stage asking for everyone in its group, the ``members`` who
    must all be among its approvers."""

    stage: Stage
    needs: int
    approvals: tuple
    state: str = "later"
    members: frozenset | None = None

    @property
    def complete(self) -> bool:
        if self.members is not None:
            return bool(self.members) and self.members <= {approval.approver_id for approval in self.approvals}
        return len(self.approvals) >= self.needs

    @property
    def given(self) -> int:
        """How many of the people it needs approved: for everyone in a group, those still in it."""
        if self.members is not None:
            return len(self.members & {approval.approver_id for approval in self.approvals})
        return len(self.approvals)

    @property
    def words(self) -> str:
        """ "Finance · 1 of 2"."""
        return f"{self.stage.who} · {self.given} of {self.needs}"


def progress(stages: list[Stage], approvals: Iterable, members: Mapping[int, frozenset]) -> list[StageState]:
    """Each stage's state in a round whose ``approvals`` are given: each counts in the stage of its ``stage``
    position, and only while that stage still asks for the group it was given in (``stage_group_id``: a policy changed
    since never moves an approval to another group). ``members`` are the ``everyone_members`` of the stages asking
    for everyone (a group with nobody asks for one person, who cannot come: the stage blocks)."""
    given: dict[int, list] = {}
    for approval in approvals:
        given.setdefault(approval.stage, []).append(approval)
    states = []
    for stage in stages:
        group_pk = stage.group.pk if stage.group is not None else None
        counted = tuple(one for one in given.get(stage.position, []) if _given_in(one) == group_pk)
        if stage.approvals is None:
            everyone = members.get(group_pk, frozenset())
            states.append(StageState(stage, max(len(everyone), 1), counted, members=everyone))
        else:
            states.append(StageState(stage, stage.approvals, counted))
    open_step = min((state.stage.step for state in states if not state.complete), default=None)
    return [
        dataclasses.replace(
            state, state="done" if state.complete else ("waiting" if state.stage.step == open_step else "later")
        )
        for state in states
    ]


def _given_in(approval) -> int | None:
    return getattr(approval, "stage_group_id", None)


def complete(states: list[StageState]) -> bool:
    """Whether every stage has its people: only then is the decision sent."""
    return all(state.complete for state in states)


def waiting(states: list[StageState]) -> list[StageState]:
    """The stages the round waits for now: the open step's incomplete ones."""
    return [state for state in states if state.state == "waiting"]


def open_step(states: list[StageState]) -> int:
    """The round's open step (the last one once the chain is complete)."""
    return min((state.stage.step for state in waiting(states)), default=states[-1].stage.step if states else 1)


def place(states: list[StageState], group_names: Collection[str], up_to_step: int) -> StageState | None:
    """The stage a person in ``group_names`` counts in: the first, in order, of a step up to ``up_to_step``, not
    complete, that admits them; None when there is none."""
    for state in states:
        if state.stage.step <= up_to_step and not state.complete and state.stage.admits(group_names):
            return state
    return None


def one_decides(stages: list[Stage]) -> bool:
    """Whether one reviewer's decision is the whole chain: no stage at all (a hold no policy asks more of) or one
    stage of one reviewer, anyone. A single stage of a group is a chain: its member's approval counts, and nobody
    else decides."""
    return not stages or (len(stages) == 1 and stages[0].group is None and stages[0].approvals == 1)


def round_start(arrived, approvals: list):
    """When a round of approvals (``approvals``, all of one round) started: the hold's arrival (``arrived``) for its
    first round, else its first approval's moment (a changed decision restarting the count)."""
    return arrived if approvals[0].round == 1 else min(approval.created_at for approval in approvals)


def opened_at(states: list[StageState], state: StageState, round_start):
    """When ``state``'s stage opened in its round: when the last stage of the steps before it got its last approval,
    or ``round_start`` for a stage of the first step."""
    earlier = [one.created_at for other in states if other.stage.step < state.stage.step for one in other.approvals]
    return max(earlier, default=round_start)


def needed_total(states: list[StageState]) -> int:
    """How many people the whole chain needs."""
    return sum(state.needs for state in states)


def badge_words(states: list[StageState]) -> str:
    """ "Stage 2 of 3 · Finance · 1 of 2" for each stage the round waits for, joined by "; "."""
    count = len(states)
    return "; ".join(f"Stage {state.stage.position} of {count} · {state.words}" for state in waiting(states))


def count_words(required: int, given: int) -> str:
    """ "Needs 2 approvals", "1 of 2 approvals", or "" for a hold one person decides and nobody approved yet.

    A round that has as many approvals as a policy lowered since asks for, says how many it has.
    """
    if given:
        return f"{given} of {required} approvals" if required > given else f"{given} approval{'s' * (given > 1)} given"
    return f"Needs {required} approvals" if required > 1 else ""


def chain_words(stages: list[Stage]) -> str:
    """ "1 reviewer, then 2 of Finance alongside 1 of Legal": a chain for people."""
    words = ""
    for stage in stages:
        joint = "" if not words else (" alongside " if stage.with_previous else ", then ")
        words += joint + stage.quorum_words
    return words
