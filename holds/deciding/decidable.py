"""Whether a hold can still be decided at all, and if not, why: the one answer every way of acting on a hold asks
(deciding, bulk, one-tap links, handing over, the hold page) before it acts.

It reads only the hold, so the modules that act on holds ask it without importing each other.
"""

from __future__ import annotations

from datetime import datetime

from holds.models import Hold
from people import wording


def closed_reason(hold: Hold, now: datetime) -> str:
    """Why the hold can no longer be decided at all ("" while it can)."""
    if hold.expires_at and hold.expires_at <= now and hold.status in (Hold.Status.OPEN, Hold.Status.EXPIRED):
        return f"This hold expired at {wording.moment(hold.expires_at)}; the agent was told nobody decided."
    if hold.status == Hold.Status.DECIDED and hold.decided_by:
        when = f" at {wording.moment(hold.decided_at)}" if hold.decided_at else ""
        return f"This hold was decided by {hold.decided_by}{when}; it can no longer be decided here."
    if hold.status != Hold.Status.OPEN:
        return f"This hold is {hold.get_status_display().lower()}; it can no longer be decided here."
    return ""
