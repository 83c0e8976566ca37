"""The one-tap link's page (``holds.links.action_links``): thin, it reads the request, asks the module and renders.

Opening a link only shows what it would do; its *Send* (a POST) decides. Sign-in comes first
(``LoginRequiredMiddleware`` returns to the link), then the role (a 403 that names it, about no hold), then the
link's own checks.
"""

from django.http import Http404
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods

from approvals import link_standing
from holds.deciding import decisions, describe, review
from holds.links import action_links
from holds.models import DecisionItem
from holds.pages import approval_page
from holds.pages.guards import reviewer_required
from holds.related import safeguard
from reviewqueue import readers

REFUSAL_STATUS = {
    action_links.UNREADABLE: 400,
    action_links.SOMEONE_ELSE: 403,
    action_links.EXPIRED: 410,
    action_links.USED: 409,
    action_links.DECIDED: 409,
    action_links.CHANGED: 409,
}


@reviewer_required
@require_http_methods(["GET", "HEAD", "POST"])
def action_link(request, token):
    now = timezone.now()
    try:
        link, hold = action_links.opened(token, request.viewer, now)
    except action_links.Refused as refused:
        return _refused(request, refused)
    return _decide(request, token, link, hold, now)


def _decide(request, token, link, hold, now):
    """The link's page for a reviewer, or its Send; an Approve link of a possible duplicate (one made before it was
    flagged) opens the hold's page instead, where approving it asks for a confirmation."""
    if link.action == DecisionItem.Action.APPROVE and safeguard.guard(hold, now=now).needed:
        return redirect("hold", pk=hold.pk)
    error = ""
    if request.method == "POST":
        comment = ""
        if link.action == DecisionItem.Action.REJECT:
            comment = readers.text(request.POST.get("comment", "").replace("\r\n", "\n"), "comment", review.MAX_COMMENT)
        round_shown = readers.integer(request.POST.get("round", ""), "round", minimum=0, maximum=readers.ID_MAX)
        if round_shown is None:  # nobody approves what no page showed them
            raise readers.BadValue("round", "say which round of approvals the page showed")
        try:
            action_links.send(token, request.viewer, comment.strip(), round_shown, now)
        except action_links.Refused as refused:
            return _refused(request, refused)
        except decisions.DecisionRefused as refused:
            error = refused.message
        else:
            return redirect("action-link", token=token)
    four_eyes = link_standing.link_standing(hold, request.viewer, link.action)
    claimant = hold.claimant(now)
    context = {
        "hold": hold,
        "link": link,
        "approving": link.action == DecisionItem.Action.APPROVE,
        "items": [
            {
                "item": item,
                "does": describe.sentence(item.title, item.data, item.item_id),
                "amount": describe.item_amount(item.data),
            }
            for item in hold.items.all()
        ],
        "four_eyes": four_eyes,
        "claimant": claimant if claimant and claimant != request.user else None,
        "error": error,
        "now": now,
    }
    return render(request, "holds/act.html", context, status=409 if error else 200)


def _refused(request, refused: action_links.Refused):
    """The clear page of a link that sends nothing; for the reviewer who used it, what it did."""
    if refused.kind == action_links.NOT_FOUND:
        raise Http404(refused.message)
    use = refused.use
    if use is not None and use.user_id == request.user.pk:
        return _outcome(request, refused.hold, use)
    context = {"refused": refused, "hold": refused.hold}
    return render(request, "holds/act_refused.html", context, status=REFUSAL_STATUS[refused.kind])


def _outcome(request, hold, use):
    """What the reviewer's own use of the link did, as the hold page shows it: the decision with Undo in its
    window, or their approval recorded while four eyes wait."""
    # An approval that sent nothing: the decision a later approver's completed round made, if any.
    decision = use.decision or hold.live_decision()
    recorded = "" if use.decision_id else link_standing.recorded_words(hold, request.viewer)
    undoable = approval_page.page_context(hold, request.viewer)["undoable_approval"] if recorded else None
    context = {"hold": hold, "use": use, "decision": decision, "recorded": recorded, "undoable_approval": undoable}
    return render(request, "holds/act_outcome.html", context)
