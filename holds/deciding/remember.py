"""A reviewer's decision sent with "Remember this approval": the decision and the remembered approval, both or
neither (the rules of remembering are ``approvals.remembering``'s)."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from approvals import remembering
from audit import events as audit_events
from holds.deciding import decisions
from holds.models import Decision


def submit(hold, viewer, choices, duration: str, round_shown=None, decision_shown=None, duplicates_checked=None):
    """``decisions.submit`` of ``viewer``'s ``choices``, remembering the approval for ``duration`` (a
    ``remembering.Duration`` key; blank: not remembered). Raises ``remembering.NotRememberable`` (and stores
    nothing) when it may not be remembered, as a forged confirm may ask, and what ``decisions.submit`` raises
    (``duplicates_checked`` is its)."""
    with transaction.atomic():
        remembered = remembering.remember(hold, viewer, choices, duration, timezone.now()) if duration else None
        made = decisions.submit(
            hold,
            viewer.user,
            choices,
            round_shown=round_shown,
            decision_shown=decision_shown,
            duplicates_checked=duplicates_checked,
        )
        if duration and not isinstance(made, Decision):  # it became an approval under four eyes meanwhile
            raise remembering.NotRememberable("This hold is under four eyes: its approval cannot be remembered.")
        if remembered:
            audit_events.append(remembered)
    return made
