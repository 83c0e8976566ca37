from django import template

from holds.deciding import describe
from holds.models import ACTION_WORDS
from reviewqueue import runlinks
from reviewqueue.showing import display

register = template.Library()


@register.filter
def shown(value) -> str:
    """A JSON value as a reviewer reads it in a summary (null as "null", strings as they are)."""
    return display(value)


@register.filter
def action_word(action: str) -> str:
    """ "Approve", "Approve with edits" or "Reject" for an item action's code."""
    return ACTION_WORDS.get(action, action)


@register.filter
def run_url(run_id: str, env: str) -> str:
    """``{{ hold.run_id|run_url:hold.env }}``: the run's page on the platform, or ""."""
    return runlinks.run_url(env, run_id)


@register.filter
def approval_sentence(item) -> str:
    """What approving a hold item does, in one plain sentence."""
    return describe.sentence(item.title, item.data, item.item_id)


@register.filter
def sent_items(decision) -> list[describe.SentItem]:
    return describe.sent_items(decision)


@register.filter
def summary_sentence(review) -> str:
    """What a reviewed item will do once sent: approving with edits does what the edited data says."""
    data = review.edited if review.final_action == "edit" else review.item.data
    return describe.sentence(review.item.title, data, review.item.item_id)
