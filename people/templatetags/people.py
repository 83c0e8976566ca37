"""``{% load people %}``: times in the viewer's zone, and people named the same way on every page.

``exact_time`` and ``relative_time`` put the ISO time in ``<time datetime>`` and the
exact local time with its zone in the text or the ``title``; static/holds/app.js
rewrites a ``data-relative`` time's text as the clock moves.
"""

from django import template
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.html import format_html

from people import naming, relative

register = template.Library()

EXACT = "Y-m-d H:i:s T"


def _exact_title(local) -> str:
    return f"{date_format(local, EXACT)} ({timezone.get_current_timezone_name()})"


@register.filter
def exact_time(value, shown: str = "Y-m-d H:i:s"):
    """``{{ value|exact_time }}`` or ``{{ value|exact_time:"H:i" }}``: the time in the viewer's zone, the zone always
    named.

    The visible part follows Django's date format ``shown``, then the zone's abbreviation
    ("14:02 CET"); the ``title`` carries the full date, seconds and zone name.
    """
    if not value:
        return ""
    local = timezone.localtime(value)
    return format_html(
        '<time datetime="{}" title="{}">{} {}</time>',
        value.isoformat(),
        _exact_title(local),
        date_format(local, shown),
        date_format(local, "T"),
    )


@register.filter
def relative_time(value, now=None):
    """``{{ value|relative_time }}``: "3 minutes ago" or "in 3 minutes", with the exact time in the ``title``.

    The text is right when the page is made; app.js keeps it right (``data-relative``).
    """
    if not value:
        return ""
    return format_html(
        '<time datetime="{}" title="{}" data-relative>{}</time>',
        value.isoformat(),
        _exact_title(timezone.localtime(value)),
        relative.relative(value, now or timezone.now()),
    )


@register.filter
def person(user):
    """``{{ user|person }}``: the person's name (see ``naming.name``), with their email as a tooltip when known."""
    if user is None:
        return format_html('<span class="person">{}</span>', naming.name(None))
    if user.email:
        return format_html('<span class="person" title="{}">{}</span>', user.email, naming.name(user))
    return format_html('<span class="person">{}</span>', naming.name(user))


@register.simple_tag
def time_zone_name() -> str:
    """The zone this page shows times in, for ``<body data-time-zone>``."""
    return timezone.get_current_timezone_name()


@register.filter
def person_name(user) -> str:
    """``{{ user|person_name }}``: the name alone, as plain text, where markup cannot go (an ``<option>``)."""
    return naming.name(user)
