"""Four eyes at a one-tap link or a Slack button: where a hold's approvals stand for the person pressing it, and
what it says once their approval waits for more.

The links' page (``holds.links.link_views``) and Slack's presses (``slackapp.pressing``) both ask it, so that
a press is refused, or its effect worded, by one rule.
"""

from __future__ import annotations

import dataclasses

from approvals import chains, rounds
from holds.models import DecisionItem, Hold


@dataclasses.dataclass(frozen=True)
class LinkStanding:
    """What a one-tap link's page says of four eyes (``holds/act.html``): the round it shows, why the viewer may not
    give this approval ("" when they may), and what their approval would do."""

    standing: rounds.Standing
    round_shown: int
    refusal: str
    effect: str


def link_standing(hold: Hold, viewer, action: str) -> LinkStanding:
    """Where a hold's approvals stand for ``viewer`` opening a link to ``action`` it (approve every item as the agent
    asked, or reject every item). A reject is sent at once under any policy; an approval joins the open round only
    when that round approved every item as asked, else the hold page must show what changed."""
    found = rounds.standing(hold)
    shown = rounds.shown(found.approvals)
    if action != DecisionItem.Action.APPROVE or not found.needs_several:
        return LinkStanding(found, shown, "", "")
    if refusal := found.refusal_for(viewer):
        return LinkStanding(found, shown, refusal, "")
    if found.approvals and not _approved_as_asked(found.approvals[0].items, hold):
        refusal = "The approvals so far change what the agent asked: check the decision on the hold page."
        return LinkStanding(found, shown, refusal, "")
    if not found.approvals:
        effect = f"Your approval is the first of {found.required}: nothing is sent until another person approves."
    elif len(found.approvals) + 1 >= found.round_needs:
        effect = f"{found.summary}. Yours is the last approval needed: the decision is then sent."
    else:
        effect = f"{found.summary}. Your approval counts; more are needed before anything is sent."
    return LinkStanding(found, shown, "", effect)


def recorded_words(hold: Hold, viewer) -> str:
    """ "1 of 2 approvals: yours is recorded; the next approval can come from Finance leads", while ``viewer``'s
    approval waits in the open round for more; "" otherwise."""
    found = rounds.standing(hold)
    if not any(approval.approver_id == viewer.pk for approval in found.approvals):
        return ""
    awaited = found.awaited
    later = awaited if awaited and awaited != chains.ANY_REVIEWER else "another reviewer"
    return f"{found.badge}: yours is recorded; the next approval can come from {later}"


def _approved_as_asked(approved_items: list[dict], hold: Hold) -> bool:
    """Whether an approval's items approve every item of ``hold``, in order, as the agent asked."""
    approved = [(item["item_id"], item["action"]) for item in approved_items]
    return approved == [(item.item_id, DecisionItem.Action.APPROVE) for item in hold.items.all()]
