import json

from django import template

from audit import timing
from holds.models import ACTION_WORDS
from reviewqueue import runlinks

register = template.Library()


@register.filter
def duration(value) -> str:
    """A timedelta or a number of seconds, as people say it (see ``timing.humanize``)."""
    if value is None or value == "":
        return "—"
    seconds = value.total_seconds() if hasattr(value, "total_seconds") else float(value)
    return timing.humanize(seconds)


@register.filter
def percent(share) -> str:
    return f"{float(share) * 100:.0f} %"


@register.filter
def pretty_json(value) -> str:
    """Indented JSON for a <pre>; the template escapes it like any text."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


@register.filter
def action_word(action: str) -> str:
    """"Approve", "Approve with edits" or "Reject" for an item action's code."""
    return ACTION_WORDS.get(action, action)


@register.filter
def action_words(actions: str) -> str:
    """An event's space-separated action codes ("approve edit") as words."""
    return ", ".join(ACTION_WORDS.get(action, action) for action in actions.split())


@register.filter
def run_url(run_id: str, env: str) -> str:
    """``{{ event.run_id|run_url:event.env }}``: the run's page on the platform, or ""."""
    return runlinks.run_url(env, run_id)
