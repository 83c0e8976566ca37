import json

from django import template
from django.utils.html import format_html

from audit import timing
from holds.models import ACTION_WORDS
from people.templatetags.people import person
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
    """A share as "40 %"; "—" when there is none (nothing to divide)."""
    if share is None or share == "":
        return "—"
    return f"{float(share) * 100:.0f} %"


@register.filter
def pretty_json(value) -> str:
    """Indented JSON for a <pre>; the template escapes it like any text."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


@register.filter
def action_word(action: str) -> str:
    """ "Approve", "Approve with edits" or "Reject" for an item action's code."""
    return ACTION_WORDS.get(action, action)


@register.filter
def action_words(actions: str) -> str:
    """An event's space-separated action codes ("approve edit") as words."""
    return ", ".join(ACTION_WORDS.get(action, action) for action in actions.split())


@register.filter
def run_url(run_id: str, env: str) -> str:
    """``{{ event.run_id|run_url:event.env }}``: the run's page on the platform, or ""."""
    return runlinks.run_url(env, run_id)


@register.filter
def actor(event) -> str:
    """Who did it: the account named as everywhere else, and the name the trail recorded if the account was renamed
    since.

    The recorded name is part of the hashed row, so a rename never makes an old event
    look like someone else's work.
    """
    if event.actor is None:
        return format_html('<span class="person">{}</span>', event.actor_label)
    named = person(event.actor)
    if event.actor_name and event.actor_name != event.actor.get_username():
        return format_html('{} <span class="muted">(recorded as {})</span>', named, event.actor_name)
    return named
