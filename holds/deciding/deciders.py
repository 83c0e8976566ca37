"""Who made a decision, named for people and for the platform: below the decisions, their delivery and
``holds.lifecycle``, which all word it."""

from __future__ import annotations

from holds.models import Decision


def reviewer_name(user) -> str:
    return user.get_full_name() or user.get_username()


def decider_name(decision: Decision) -> str:
    """Who made ``decision``, for people: its reviewer, or "policy ‘small refunds’"."""
    if decision.decided_by_policy:
        return f"policy ‘{decision.decided_by_policy}’"
    return reviewer_name(decision.reviewer)


def platform_name(user) -> str:
    """How the platform's own records name the reviewer."""
    return user.email or user.get_username()
