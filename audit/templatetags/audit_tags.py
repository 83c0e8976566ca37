import json

from django import template

from audit import timing

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
