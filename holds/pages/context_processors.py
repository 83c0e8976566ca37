from holds.deciding import decisions
from holds.queue import display as queue_display
from reviewqueue import roles


def navigation(request):
    """What the header shows a signed-in user: the pages their roles open."""
    if not request.user.is_authenticated:
        return {}
    return {
        "can_review": roles.can_review(request.viewer),
        "can_audit": roles.can_audit(request.viewer),
        "has_a_role": roles.has_a_role(request.viewer),
    }


def countdowns(request):
    """The rules of the live countdowns, which base.html hands to app.js: ``holds.queue.display.COUNTDOWN``."""
    return {"countdown_rules": queue_display.COUNTDOWN}


def polling(request):
    """How often a decision still being sent asks for its state (``holds/_decision_status.html``)."""
    return {"status_poll_seconds": decisions.STATUS_POLL_SECONDS}
