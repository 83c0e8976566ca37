"""Remembered approvals: a reviewer's "and the same again" on the summary before Send, within limits.

A reviewer approving every item of a hold as the agent asked may remember the approval for 1 hour,
until the end of the day (in their time zone) or 7 days, none past ``REMEMBER_MAX_HOURS``. It is kept
as a ``models.RememberedApproval`` owned by the reviewer, which the standing policies' machinery reads as a
policy needing 0 people: ``policies.requirement`` picks it for a like hold (``approvals.alike``:
the same env, agent and capability, each item's amount read for certain and at most this one's largest, all
together at most its total, in the same currency), ``policies.own_action`` approves at once (a wait of 0),
under its daily caps (the allowance's: a count of holds, and optionally the sum of their amounts, counted as
every policy's are, ``policies.over_cap``) and before its ``valid_until``, and the policy sweep
(``holds.deciding.by_policy``) decides, once per hold, naming it "policy: remembered by alice".

Never a hole. It is neither offered nor made (a forged POST included) when:

- the hold is under four eyes: a policy needing two or more people matches it, or a round of approvals is
  open (any such policy also wins over a remembered approval later, ``policies.requirement``);
- an amount of the hold is not read for certain (more than an amount column holds included: alone or all together),
  or its items name different currencies;
- the reviewer edited or rejected anything;
- no ``RememberAllowance`` of an admin admits the hold's env, agent and capability (none by default);
- the reviewer may not review, or is away.

It is never wider than its owner's team scopes: it matches only the env, agent and capability of a hold
they could see, and stops (``stopped_reason``) when they no longer could, when they lose the Reviewers
role, are deactivated or go away, when the allowance goes, at its ``valid_until`` or on revoke. The sweep
checks that with the hold and the remembered approval locked before each decision, and ``end_stopped`` ends such
approvals (``ended_at``, with the reason), so that they stop matching anywhere; the Undo of the decision it was
made with ends it too (``undone``). Making, revoking and ending one are audited as setting changes of it; each use is
a decision whose audit names it and its owner.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, time, timedelta
from decimal import Decimal

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from approvals import alike, policies, replay, rounds
from approvals.models import RememberAllowance, RememberedApproval
from audit import events as audit_events
from audit.events import roles_and_settings
from holds.models import DecisionItem
from notifications.models import NotificationSettings
from people import naming
from people import wording as people_wording
from reviewqueue import roles
from reviewqueue.agent_numbers import carried
from reviewqueue.viewer import Viewer
from teams import scopes

REMEMBERED_MODEL = RememberedApproval._meta.label_lower
REPLAY_DAYS = 30


class NotRememberable(Exception):
    """This approval cannot be remembered; ``message`` says why, for the reviewer."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclasses.dataclass(frozen=True)
class Duration:
    key: str
    label: str
    until: datetime


@dataclasses.dataclass(frozen=True)
class Offer:
    """What remembering this approval would make: ``remembered`` (unsaved), the ``durations`` to choose from, and the
    replay of it over the last ``REPLAY_DAYS`` days (None when not asked for)."""

    remembered: RememberedApproval
    durations: list[Duration]
    replay: replay.Replay | None = None

    @property
    def words(self) -> str:
        """Exactly what it approves."""
        remembered = self.remembered
        capped = ""
        if remembered.daily_cap_amount is not None:
            capped = f", their amounts at most {alike.written(remembered.daily_cap_amount)} a day in all"
        return (
            f"Holds of agent {remembered.agent}, capability {remembered.capability} in env {remembered.env}, "
            f"{alike.why(remembered)}, approved as asked in your name, at most {remembered.daily_cap_count} a day"
            f"{capped}."
        )

    @property
    def people_approved(self) -> int:
        """Of the holds it would have approved, how many people approved as asked."""
        found = self.replay
        return found.would_approve - len(found.people_rejected) - len(found.people_edited) if found else 0


def durations(now: datetime) -> list[Duration]:
    """The durations offered at ``now``: 1 hour, until the end of the day in the active zone, 7 days; none past
    ``REMEMBER_MAX_HOURS``."""
    local = timezone.localtime(now)
    end_of_day = datetime.combine(local.date() + timedelta(days=1), time.min, tzinfo=local.tzinfo)
    offered = [
        Duration("hour", "for 1 hour", now + timedelta(hours=1)),
        Duration("day", "until the end of the day", end_of_day),
        Duration("week", "for 7 days", now + timedelta(days=7)),
    ]
    longest = now + timedelta(hours=settings.REMEMBER_MAX_HOURS)
    return [duration for duration in offered if duration.until <= longest]


def offer(hold, viewer: Viewer, choices, now: datetime, with_replay: bool = False) -> Offer | None:
    """What remembering ``viewer``'s ``choices`` for ``hold`` (its items prefetched) would make, or None when it may
    not be remembered."""
    try:
        return _offer(hold, viewer, choices, now, with_replay)
    except NotRememberable:
        return None


def _offer(hold, viewer: Viewer, choices, now: datetime, with_replay: bool) -> Offer:
    """``offer``, raising ``NotRememberable`` with the reason."""
    if not durations(now):
        raise NotRememberable("Remembering approvals is turned off.")
    if not (roles.can_review(viewer) and scopes.may_see(viewer, hold)):
        raise NotRememberable("Only a reviewer who may decide this hold may remember its approval.")
    if not choices or any(choice.action != DecisionItem.Action.APPROVE for choice in choices):
        raise NotRememberable("Only an approval of every item as the agent asked can be remembered.")
    caps = caps_for(hold)
    if caps is None:
        raise NotRememberable("An admin has not allowed approvals of this agent and capability to be remembered.")
    if NotificationSettings.objects.filter(user=viewer.user, away_until__gt=now).exists():
        raise NotRememberable("You are away: an approval remembered now would stop at once.")
    item_data = [item.data for item in hold.items.all()]
    amounts = alike.certain_amounts(item_data)
    currency = alike.currency(item_data)
    if amounts is None or currency is None:
        doubtful = carried(item_data).doubtful()
        why = f" ({doubtful.path} {doubtful.doubt()})" if doubtful else ""
        raise NotRememberable(
            f"This hold's amounts are not read for certain{why}, so its approval cannot be remembered."
        )
    candidate = RememberedApproval(
        owner=viewer.user,
        source_hold=hold,
        env=hold.env,
        agent=hold.agent,
        capability=hold.capability,
        amount_at_most=max(amounts),
        total_at_most=sum(amounts),
        currency=currency,
        daily_cap_count=caps.count,
        daily_cap_amount=caps.amount,
    )
    standing = rounds.standing(hold, [*policies.all_policies(), candidate])
    # The very hold must be one it would approve: no four-eyes policy matches it, and it is like itself.
    if standing.approvals or standing.requirement is None or standing.requirement.policy is not candidate:
        raise NotRememberable("This hold is under four eyes: its approval cannot be remembered.")
    found = replay.replay(candidate, REPLAY_DAYS, now) if with_replay else None
    return Offer(candidate, durations(now), found)


@dataclasses.dataclass(frozen=True)
class Caps:
    """The daily caps a remembered approval gets: how many holds, and the sum of their amounts (None: no such cap)."""

    count: int
    amount: Decimal | None


def caps_for(hold) -> Caps | None:
    """The strictest daily caps of the admins' allowances admitting ``hold`` (the smallest count, and the smallest
    amount any of them sets), or None when none admits it."""
    admitting = [
        allowance
        for allowance in RememberAllowance.objects.all()
        if scopes.glob_matches(allowance.env_pattern, hold.env)
        and scopes.glob_matches(allowance.agent_pattern, hold.agent)
        and scopes.glob_matches(allowance.capability_pattern, hold.capability)
    ]
    if not admitting:
        return None
    amounts = [allowance.daily_cap_amount for allowance in admitting if allowance.daily_cap_amount is not None]
    return Caps(min(allowance.daily_cap_count for allowance in admitting), min(amounts, default=None))


def remember(hold, viewer: Viewer, choices, duration_key: str, now: datetime) -> audit_events.Entry:
    """Make ``viewer``'s remembered approval of holds like ``hold`` for the duration named ``duration_key``; raise
    ``NotRememberable`` when it may not be (see the module's rules). Call it in the transaction that stores the
    decision, before it, so that a refusal stores neither. Returns its audit event, for the caller to append once the
    decision took its locks: the audit chain's head comes last (docs/architecture.md, invariants)."""
    made = _offer(hold, viewer, choices, now, with_replay=False)
    duration = next((one for one in made.durations if one.key == duration_key), None)
    if duration is None:
        raise NotRememberable("Choose how long to remember this approval among the durations offered.")
    remembered = made.remembered
    remembered.valid_until = duration.until
    remembered.save()
    return roles_and_settings.setting_changed(
        actor=viewer.user,
        hold=hold,
        model=REMEMBERED_MODEL,
        object_id=str(remembered.pk),
        object_repr=str(remembered),
        action="added",
        message=f"remembered approval {duration.label}, until {people_wording.moment(duration.until)}: {made.words}",
        details={"remembered": _facts(remembered)},
    )


def _facts(remembered: RememberedApproval) -> dict:
    return {
        "by": remembered.owner.get_username(),
        "hold": remembered.source_hold.hold_id,
        "env": remembered.env,
        "agent": remembered.agent,
        "capability": remembered.capability,
        "amount_at_most": str(remembered.amount_at_most),
        "total_at_most": str(remembered.total_at_most),
        "currency": remembered.currency,
        "valid_until": remembered.valid_until.isoformat() if remembered.valid_until else None,
        "daily_cap_count": remembered.daily_cap_count,
        "daily_cap_amount": None if remembered.daily_cap_amount is None else str(remembered.daily_cap_amount),
    }


def stopped_reason(remembered: RememberedApproval, now: datetime) -> str:
    """Why ``remembered`` approves nothing at ``now`` ("" while it may): ended or revoked, past its time, its owner
    deactivated, no longer a reviewer, away or no longer seeing its holds, or no allowance left for them. Reads the
    owner afresh."""
    if remembered.ended_at is not None:
        return remembered.ended_reason or "ended"
    if remembered.valid_until is not None and remembered.valid_until <= now:
        return f"its time ran out at {people_wording.moment(remembered.valid_until)}"
    owner = get_user_model().objects.get(pk=remembered.owner_id)
    name = naming.name(owner)
    if not owner.is_active:
        return f"{name} was deactivated"
    viewer = scopes.viewer_of(owner)
    if not roles.can_review(viewer):
        return f"{name} no longer has the Reviewers role"
    if NotificationSettings.objects.filter(user=owner, away_until__gt=now).exists():
        return f"{name} is away"
    source = remembered.source_hold
    if not scopes.may_see(viewer, source):
        return f"{name} no longer sees these holds"
    if caps_for(source) is None:
        return "an admin no longer allows these approvals to be remembered"
    return ""


def end_stopped(now: datetime) -> list[RememberedApproval]:
    """End every remembered approval that has stopped (``stopped_reason``); return those ended."""
    return [
        remembered
        for remembered in RememberedApproval.objects.running()
        if (why := stopped_reason(remembered, now)) and end(remembered, why, now)
    ]


def undone(hold, owner, now: datetime) -> list[RememberedApproval]:
    """``owner`` undid their decision of ``hold``: the approvals they remembered with it end too."""
    # Every row locked before the first is audited: the audit chain's head comes last.
    made = list(
        RememberedApproval.objects.running()
        .filter(source_hold=hold, owner=owner)
        .select_for_update(of=("self",), no_key=True)
    )
    return [remembered for remembered in made if end(remembered, "its approval was undone", now, actor=owner)]


def revoke(remembered_pk: int, user, now: datetime, owned_only: bool = False) -> RememberedApproval | None:
    """Revoke remembered approval ``remembered_pk`` as ``user``: its owner (or, unless ``owned_only``, a superuser);
    None when it is not theirs to revoke. Revoking one already ended changes nothing."""
    mine = Q() if user.is_superuser and not owned_only else Q(owner=user)
    remembered = (
        RememberedApproval.objects.filter(mine, pk=remembered_pk).select_related("owner", "source_hold").first()
    )
    if remembered is not None:
        end(remembered, f"revoked by {naming.name(user)}", now, actor=user)
    return remembered


def end(remembered: RememberedApproval, reason: str, now: datetime, actor=None) -> bool:
    """End ``remembered`` for good, saying why, and audit it; False when it had ended already."""
    with transaction.atomic():
        ended = RememberedApproval.objects.filter(pk=remembered.pk, ended_at__isnull=True).update(
            ended_at=now, ended_reason=reason[:200]
        )
        if not ended:
            return False
        policies.policies_changed()
        audit_events.append(
            roles_and_settings.setting_changed(
                actor=actor,
                hold=remembered.source_hold,
                model=REMEMBERED_MODEL,
                object_id=str(remembered.pk),
                object_repr=str(remembered),
                action="changed",
                message=f"remembered approval ended: {reason}",
                details={"remembered": _facts(remembered) | {"ended": reason}},
            )
        )
    remembered.ended_at, remembered.ended_reason = now, reason[:200]
    return True


@dataclasses.dataclass(frozen=True)
class Listed:
    """A remembered approval as its lists show it: what it approves, whose, how many it matched so far, and
    whether it still runs (``stopped``: why not, "" while it does)."""

    remembered: RememberedApproval
    label: str
    words: str
    matched: int
    stopped: str


def listed(owner=None, now: datetime | None = None) -> list[Listed]:
    """Remembered approvals, newest first: ``owner``'s, or everyone's (for admins and auditors)."""
    now = now or timezone.now()
    found = RememberedApproval.objects.select_related("owner", "source_hold")
    if owner is not None:
        found = found.filter(owner=owner)
    return [
        Listed(
            remembered,
            remembered.label(now),
            Offer(remembered, []).words,
            remembered.matched,
            _stopped_words(remembered, now),
        )
        for remembered in found.with_matched()[:500]
    ]


def _stopped_words(remembered: RememberedApproval, now: datetime) -> str:
    """Why a listed approval no longer runs, by its own fields alone ("" while it runs): the sweep ends the others."""
    if remembered.ended_at is not None:
        return remembered.ended_reason or "ended"
    if remembered.valid_until is not None and remembered.valid_until <= now:
        return f"its time ran out at {people_wording.moment(remembered.valid_until)}"
    return ""
