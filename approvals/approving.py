"""Four eyes: counting approvals until a hold's policy is satisfied, and only then deciding.

``holds.lifecycle.decide``, which every decision passes (a single decision, a bulk one, a
forged POST), calls ``count`` with the hold's row locked; nothing here runs outside that lock.
The rules:

- How many approvals a hold needs is computed when each decision is taken, from the
  policies as they are then (``approvals.policies``); each approval keeps the policy's name
  and count as they were.
- A decision that approves nothing (every item rejected) is sent at once, under any policy,
  from anyone, an earlier approver included: rejecting needs no four eyes. It links the open
  round's approvals, which ends the round.
- Otherwise, while one reviewer, anyone, is the whole chain (``chains.one_decides``) and no round is open, the
  decision is sent as always.
- Else the decision counts as an approval. A person approves a hold once: anyone who gave
  an approval of it, in any round, is refused another, whatever decision it carries (a
  unique constraint backs that up within a round). When it equals the open round's
  decision (the same action for every item and, for edits, the same data; comments may
  differ, and each item is sent with the latest comment given on it) it takes the round's
  next place. Anything else starts the next round with it in first place (``restarted``).
  Each approval counts in a stage of the policy's chain (``approvals.chains``): the first open one that admits its
  giver, or, restarting, the first up to the step open before that admits them, the stages before it opening again
  (and told so). None admitting
  them, it is refused. Each stage completed is audited, and the stages it opens are told (``signals.stage_waiting``).
- A round is open only while the hold is what its approvals approved (``rounds.open_round``):
  once sync records the platform's change to the hold, the next approval starts a new round.
- A page that showed the open round (or none) passes the latest approval it showed as
  ``round_shown`` (``rounds.NO_ROUND`` for none); when the round is no longer that one, the
  decision is refused (``RoundChanged``), so that nobody approves what they did not see.
- Each approval is recorded (``approval_given``) and ends its approver's claim, as a
  decision does, so that the next approver finds the hold free. Nothing is sent until
  every stage has its people; the decision is then made as any other (idempotency key,
  undo window), by the last approver, and links every approval of the round.
- Undo of that decision in its window takes the last approval back with it: the round is
  open again at n-1 of n (``uncount``). An approval that sent nothing may be taken back by
  its giver within ``UNDO_SECONDS`` too, while it is the open round's last (``withdraw``,
  audited as ``approval_withdrawn``).

The platform learns every approver: ``decided_by`` names them in order, each as
``platform_name`` names a single reviewer, joined by ", " (e.g. "alice@example.com,
bob@example.com"). The Holds API contract only says that ``decided_by`` names the reviewer
for the platform's own records, as a string; a list in one string is our assumption.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import datetime

from django.db import IntegrityError, transaction

from approvals import awaiting, chains, rounds, signals
from approvals.models import Approval, ApprovalPolicy
from audit import events as audit_events
from audit.events import deciding
from holds.models import DecisionChannel, DecisionItem, Hold
from reviewqueue.agent_json import same_json
from teams import scopes


class NotCounted(Exception):
    """The approval cannot be given by this person; ``message`` says why, for them."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class RoundChanged(NotCounted):
    """The open round is no longer the one the page showed: someone approved, changed or decided meanwhile."""

    def __init__(self):
        super().__init__("The decision changed since this page showed it; check it again below.")


@dataclasses.dataclass(frozen=True)
class Counted:
    """What a decision became: ``approvals`` to link to the decision when ``complete``, else the ``approval`` stored.

    ``choices`` are what to send once complete: the decision's, each item with its latest comment.
    """

    complete: bool
    choices: list
    approvals: list[Approval] = dataclasses.field(default_factory=list)
    approval: Approval | None = None
    target_minutes: int | None = None  # the hold's policy's target (``decide_within_minutes``), for the audit
    # The counting's audit events (the approval given, the stages it completed), for the caller to append once it
    # took every other lock: the audit chain's head comes last (docs/architecture.md, invariants).
    audit: tuple = ()


def count(
    hold: Hold,
    approver,
    choices: list,
    now: datetime,
    round_shown: int | None = None,
    channel: str = DecisionChannel.PAGE,
    duplicates_checked: dict | None = None,
) -> Counted:
    """Count ``approver``'s ``choices`` for ``hold`` (locked by the caller) under its policy; see the module's rules.

    ``round_shown`` is the open round's latest approval as the approver's page showed it
    (``rounds.NO_ROUND``: none), when it showed one. Raises ``NotCounted`` for an approval its
    giver may not give, ``RoundChanged`` when the round is no longer the one shown. ``channel`` is where the
    approval came from (``DecisionChannel``), and ``duplicates_checked`` the approver's check of the hold's possible
    duplicates, for the audit.
    """
    approvals = list(rounds.with_rounds(Approval.objects.filter(hold=hold).select_related("approver")))
    standing = rounds.standing(hold, approvals=approvals)
    current = standing.approvals
    if round_shown is not None and rounds.shown(current) != round_shown:
        raise RoundChanged
    found, required = standing.requirement, standing.required
    target = found.policy.decide_within_minutes if found else None
    if all(choice.action == DecisionItem.Action.REJECT for choice in choices):
        return Counted(True, choices, current, target_minutes=target)
    if standing.one_decides and not current:
        return Counted(True, choices, target_minutes=target)
    viewer = scopes.viewer_of(approver)
    if standing.has_approved(approver):
        raise NotCounted(standing.refusal_for(viewer))
    if current and same_decision(current[0].items, choices):
        if refusal := standing.refusal_for(viewer):
            raise NotCounted(refusal)
        round_number, position, restarted = current[0].round, len(current) + 1, False
        stage = standing.stage_for(viewer, restarting=False)
        if stage is None:
            raise NotCounted("Your approval counts in no stage of this hold's approval chain: another person's must.")
    else:
        if standing.one_decides:
            return Counted(True, choices, target_minutes=target)  # no policy asks for more now: goes as always
        stage = standing.stage_for(viewer, restarting=bool(current))
        if stage is None:
            raise NotCounted(f"The next approval must come from a member of {standing.awaited}.")
        round_number = max((approval.round for approval in approvals), default=0) + 1
        position, restarted, current = 1, bool(current), []
    approval = _store(hold, approver, choices, found, (round_number, position, stage, required), now)
    round_approvals = [*current, approval]
    states = rounds.states_of(found, round_approvals, standing.members)
    audit = [
        deciding.approval_given(
            actor=approver,
            hold=hold,
            approval=approval,
            required=required,
            restarted=restarted,
            channel=channel,
            why=found.why if found else "",
            duplicates_checked=duplicates_checked,
            stage=_stage_words(approval, states) if standing.is_chain else "",
        )
    ]
    awaiting.refresh(hold, states)
    if states:
        before = rounds.states_of(found, current, standing.members)
        audit += _record_stages(hold, approver, before, states, approval.policy_name, restarted)
        if not chains.complete(states):
            return Counted(False, choices, round_approvals, approval, audit=tuple(audit))
    if not states and position < required:
        return Counted(False, choices, round_approvals, approval, audit=tuple(audit))
    chosen = _with_latest_comments(choices, round_approvals)
    return Counted(True, chosen, round_approvals, approval, target, audit=tuple(audit))


def _record_stages(hold: Hold, approver, before: list, after: list, policy_name: str, restarted: bool) -> list:
    """Tell the stages the approval opened (``signals.stage_waiting``): every stage the new round waits for, when it
    ``restarted`` the count with another decision. Returns the audit's event of each stage it completed, with how
    long it waited since it opened (its round's start: the hold's arrival, or a changed decision's first approval).
    """
    was_waiting = set() if restarted else {state.stage.position for state in chains.waiting(before)}
    given = [one for state in after for one in state.approvals]
    round_start = chains.round_start(hold.first_seen_at, given)
    completed = [
        deciding.stage_completed(
            actor=approver,
            hold=hold,
            state=state,
            stages=len(after),
            policy=policy_name,
            waited=state.approvals[-1].created_at - chains.opened_at(after, state, round_start),
        )
        for earlier, state in zip(before, after, strict=True)
        if state.complete and not earlier.complete
    ]
    opened = [state for state in chains.waiting(after) if state.stage.position not in was_waiting]
    if opened:
        signals.stage_waiting.send(
            sender=None, hold=hold, states=opened, stages=len(after), round_number=given[0].round
        )
    return completed


def _stage_words(approval: Approval, states: list) -> str:
    """ "stage 2 of 3 (Finance), 1 of 2": where the approval counted, for the audit."""
    state = states[approval.stage - 1]
    return f"stage {approval.stage} of {len(states)} ({state.stage.who}), {state.given} of {state.needs}"


def link(approvals: list[Approval], decision) -> None:
    """Point the round's approvals at the decision they led to: the round is over."""
    Approval.objects.filter(pk__in=[approval.pk for approval in approvals]).update(decision=decision)


def uncount(decision) -> Approval | None:
    """Undo of ``decision`` in its window: its round is open again, without the approval that completed it.

    The approval its reviewer gave at the decision's moment (the last place) is removed, so
    the round is back at n-1 of n; a rejection was no approval, and leaves the round as it
    was. The audit trail keeps both the approval and its withdrawal. Returns the removed approval.
    """
    linked = list(Approval.objects.filter(decision=decision).order_by("position"))
    final = _completing(decision, linked)
    Approval.objects.filter(decision=decision).update(decision=None)
    if final:
        final.delete()
    awaiting.refresh_standing(decision.hold)
    return final


def withdraw(approval_id: int, approver, now: datetime, reclaim: Callable[[Hold], object]) -> Approval:
    """Take back ``approver``'s own approval in its undo window (``UNDO_SECONDS``), while it is the open round's last.

    Nothing was sent for it, so nothing is lost: the round is one approval short again and the
    approver gets the hold's claim back, as after the Undo of a decision: ``reclaim(hold)`` gives it and announces
    the change (``holds.lifecycle.withdraw_approval`` passes the claims'), under the hold's lock, before the audit
    records the withdrawal. Raises ``NotCounted``
    for anyone else's approval, one a later approval or a decision built on, or once the window ended.
    """
    hold_pk = Approval.objects.filter(pk=approval_id, approver=approver).values_list("hold", flat=True).first()
    if hold_pk is None:
        raise NotCounted("Only the person who gave an approval can take it back.")
    with transaction.atomic():
        hold = Hold.objects.select_for_update(no_key=True).get(pk=hold_pk)
        current = rounds.open_round(rounds.with_rounds(Approval.objects.filter(hold=hold)))
        if not current or current[-1].pk != approval_id or not rounds.undoable(current[-1], now):
            raise NotCounted(
                "Too late to take this approval back: its undo window is over, or it counted towards more."
            )
        approval = current[-1]
        approval.delete()
        awaiting.refresh_standing(hold)
        reclaim(hold)
        audit_events.append(
            deciding.approval_withdrawn(actor=approver, hold=hold, approval=approval, approval_id=approval_id)
        )
    return approval


def decided_by(decision, platform_name) -> str:
    """Who decided, for the platform: every approver of the round the decision completed, in order; else its reviewer
    (a decision without approvals, or a later approver's reject). See the module's docstring."""
    linked = list(decision.approvals.select_related("approver").order_by("position"))
    if _completing(decision, linked):
        return ", ".join(platform_name(approval.approver) for approval in linked)
    return platform_name(decision.reviewer)


def _completing(decision, linked: list[Approval]) -> Approval | None:
    """The approval that completed the round and made ``decision``, if any: the round's last, given by the decision's
    reviewer in a place that reached the count. An earlier approver's reject links the round without completing it."""
    final = linked[-1] if linked else None
    if final and final.approver_id == decision.reviewer_id and final.position >= final.approvals_required:
        return final
    return None


def choices_to_approve(hold: Hold, round_shown: int) -> list[dict]:
    """The choices of "approve as it is": the open round's decision, when its latest approval is still ``round_shown``.

    Given as ``ItemChoice``'s keyword arguments, without the earlier approvers' comments (the
    decision sent carries them anyway). Raises ``RoundChanged`` otherwise; ``count`` checks
    the round again under the hold's lock.
    """
    current = rounds.open_round(rounds.with_rounds(Approval.objects.filter(hold=hold)))
    if not current or current[-1].pk != round_shown:
        raise RoundChanged
    return [
        {"item_id": item["item_id"], "action": item["action"], "data": item.get("data"), "comment": ""}
        for item in current[0].items
    ]


def _store(hold, approver, choices, found, place: tuple, now) -> Approval:
    round_number, position, stage, required = place
    stages = chains.stages_for(found)
    stage_group = stages[stage - 1].group if stages else None
    originals = {item.item_id: item.data for item in hold.items.all()}
    try:
        with transaction.atomic():
            return Approval.objects.create(
                hold=hold,
                # A remembered approval may win a hold whose round a policy, lowered since, opened: its name is kept.
                policy=found.policy if found and isinstance(found.policy, ApprovalPolicy) else None,
                policy_name=found.policy.name if found else "",
                approvals_required=required,
                approver=approver,
                round=round_number,
                position=position,
                stage=stage,
                stage_group=stage_group,
                created_at=now,
                payload_digest=hold.payload_digest,
                items=[
                    {
                        "item_id": choice.item_id,
                        "action": choice.action,
                        "original_data": originals[choice.item_id],
                        "data": choice.data if choice.action == DecisionItem.Action.EDIT else None,
                        "comment": choice.comment,
                    }
                    for choice in choices
                ],
            )
    except IntegrityError:
        # Only reachable without the hold's lock; the constraints keep a person to one place a round.
        raise NotCounted("This approval was given already; reload the hold to see where it stands.") from None


def same_decision(items: list[dict], choices: list) -> bool:
    """Whether ``choices`` decide every item as ``items`` did: the same action and, for an edit, the same data."""
    if len(items) != len(choices):
        return False
    for item, choice in zip(items, choices, strict=True):
        if item["item_id"] != choice.item_id or item["action"] != choice.action:
            return False
        if choice.action == DecisionItem.Action.EDIT and not same_json(item.get("data"), choice.data):
            return False
    return True


def _with_latest_comments(choices: list, approvals: list[Approval]) -> list:
    """The choices, each item carrying the latest comment the round's approvers wrote on it ("" if none did)."""
    completed = []
    for position, choice in enumerate(choices):
        comments = [approval.items[position].get("comment") or "" for approval in approvals]
        latest = next((comment for comment in reversed(comments) if comment), "")
        completed.append(dataclasses.replace(choice, comment=latest))
    return completed
