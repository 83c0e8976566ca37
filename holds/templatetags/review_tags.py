from django import template

from reviewqueue.jsonvalues import display

register = template.Library()


@register.filter
def shown(value) -> str:
    """A JSON value as a reviewer reads it in a summary (null as "null", strings as they are)."""
    return display(value)
