"""How long a decision took, measured the same way on the decision page and in the statistics.

``waited``: from the agent asking (the hold's ``created_at``) to the decision.
``to_decide``: from the hold first appearing in the queue (``first_seen_at``) to
the decision; the time a reviewer could have acted, whatever the platform's clock
says. ``to_deliver``: from the decision to the platform's final answer.
"""

from datetime import timedelta


def waited(decision) -> timedelta:
    return decision.created_at - decision.hold.created_at


def to_decide(decision) -> timedelta:
    return decision.created_at - decision.hold.first_seen_at


def to_deliver(decision) -> timedelta | None:
    return decision.finished_at - decision.created_at if decision.finished_at else None


def humanize(seconds: float | None) -> str:
    """A duration as people say it: "45 s", "12 min 05 s", "3 h 20 min", "2 d 4 h"."""
    if seconds is None:
        return "—"
    whole = round(seconds)
    sign, whole = ("−", -whole) if whole < 0 else ("", whole)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        text = f"{days} d {hours} h"
    elif hours:
        text = f"{hours} h {minutes:02d} min"
    elif minutes:
        text = f"{minutes} min {secs:02d} s"
    else:
        text = f"{secs} s"
    return sign + text
