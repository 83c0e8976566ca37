"""What the hold page shows of a hold's approvals: the open round's decision item by item, and what the viewer may
do."""

from __future__ import annotations

import dataclasses

from django.utils import timezone

from approvals import alone, awaiting, policies, rounds, wording
from approvals.models import Approval
from holds.deciding import describe, editing
from holds.models import ACTION_WORDS, DecisionItem, Hold
from holds.related import safeguard
from reviewqueue.sql import expressions
from reviewqueue.viewer import Viewer


@dataclasses.dataclass(frozen=True)
class ShownItem:
    """One item of the open round's decision as the next approver reads it."""

    item_id: str
    title: str
    word: str
    sentence: str
    changes: list[editing.Change]
    comments: list[tuple[str, str]]  # (approver's username, comment), in the round's order


def shown_items(hold: Hold, approvals: list[Approval]) -> list[ShownItem]:
    """The round's decision item by item: what it does, its edits (original → new) and every approver's comment."""
    if not approvals:
        return []
    titles = {item.item_id: item.title for item in hold.items.all()}
    shown = []
    for position, item in enumerate(approvals[0].items):
        edited = item["action"] == DecisionItem.Action.EDIT
        data = item.get("data") if edited else item.get("original_data")
        title = titles.get(item["item_id"], "")
        comments = [
            (approval.approver.get_username(), approval.items[position].get("comment"))
            for approval in approvals
            if approval.items[position].get("comment")
        ]
        shown.append(
            ShownItem(
                item_id=item["item_id"],
                title=title,
                word=ACTION_WORDS.get(item["action"], item["action"]),
                sentence=""
                if item["action"] == DecisionItem.Action.REJECT
                else describe.sentence(title, data, item["item_id"]),
                changes=editing.changes(item.get("original_data"), item.get("data")) if edited else [],
                comments=comments,
            )
        )
    return shown


def page_annotations() -> dict:
    """Annotations for the hold page's one query of the hold: whether it has any approval, so that a hold without
    costs no query more (``page_context``; the policies come from ``policies.all_policies``, kept per process).

    Written as SQL: the ORM takes longer to build an ``Exists`` than the database to answer it.
    """
    return {"any_approval": expressions.has_any(Approval, Approval._meta.get_field("hold").column)}


def page_context(hold: Hold, viewer: Viewer) -> dict:
    """What the hold page shows ``viewer`` (``request.viewer``) of the hold's approvals (see ``holds/_approvals.html``).

    ``superseded`` are the approvals of a round the platform's change to the hold ended: shown
    as history, they no longer count.
    """
    approvals = (
        list(rounds.with_rounds(Approval.objects.filter(hold=hold).select_related("approver")))
        if getattr(hold, "any_approval", True)
        else []
    )
    found = rounds.standing(hold, approvals=approvals)
    last = found.approvals[-1] if found.approvals else None
    return {
        "standing": found,
        "blocked_stages": awaiting.blocked(hold, found) if found.is_chain else set(),
        "round_items": shown_items(hold, found.approvals),
        "superseded": [wording.approval_words(approval) for approval in rounds.superseded_round(approvals)],
        "approval_refusal": found.refusal_for(viewer) if viewer else "",
        "approved_by_viewer": bool(viewer) and found.needs_several and found.has_approved(viewer.user),
        "alone_words": _alone_words(hold, found),
        "undoable_approval": last
        if last and viewer and last.approver_id == viewer.pk and rounds.undoable(last, timezone.now())
        else None,
    }


def _alone_words(hold: Hold, found: rounds.Standing) -> tuple[str, str] | None:
    """(words, why) of ``alone.waiting_words`` for a hold whose policy needs 0 people and nobody approved, or of
    ``alone.default_words`` for one whose policy holds its default approve back; else None."""
    need = found.requirement
    if need is None or found.approvals:
        return None
    now = timezone.now()
    if not policies.decides_alone(need.policy):
        return alone.default_words(need, hold, now)
    tally = alone.day_tally(need.policy, policies.cap_day(now))
    approvable, duplicate = "approve" in hold.actions, safeguard.guard(hold, now=now).needed
    return alone.waiting_words(need, hold, now, tally, approvable=approvable, possible_duplicate=duplicate)
