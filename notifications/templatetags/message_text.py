"""``{% load message_text %}``: what the notifications' message templates (``notifications.rendering``) write in words.

Plain text, never marked safe: the messages are text, and each channel escapes them for itself.
"""

from django import template

from notifications import rendering
from people import wording

register = template.Library()


@register.filter
def moment(value):
    """``{{ hold.expires_at|moment }}``: the time in the active time zone, as every message writes times."""
    return wording.moment(value)


@register.filter
def short(text: str) -> str:
    """``{{ hold.question|short }}``: the text on one line, cut to a title's length (``rendering.short``)."""
    return rendering.short(text)
