from django import template

from holds import editing

register = template.Library()


@register.filter
def shown(value) -> str:
    """A JSON value as a reviewer reads it in a summary (null as "null", strings as they are)."""
    return editing.display(value)
