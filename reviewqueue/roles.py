"""Who may do what: reviewers decide holds, auditors read the audit, superusers do everything."""

from functools import wraps

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import Q

from reviewqueue.viewer import Viewer

REVIEWERS = "Reviewers"
AUDITORS = "Auditors"
GROUPS = (REVIEWERS, AUDITORS)


def in_group(viewer: Viewer, group: str) -> bool:
    if not viewer.signed_in:
        return False
    return viewer.user.is_superuser or group in viewer.group_names


def can_review(viewer: Viewer) -> bool:
    return in_group(viewer, REVIEWERS)


def can_audit(viewer: Viewer) -> bool:
    return in_group(viewer, AUDITORS)


def members(group: str):
    """The active users of ``group``'s role (its members, and superusers, who have every role), by username."""
    return (
        get_user_model()
        .objects.filter(Q(groups__name=group) | Q(is_superuser=True), is_active=True)
        .distinct()
        .order_by("username")
    )


def reviewers():
    """The active users who may decide holds (Reviewers, and superusers), by username."""
    return members(REVIEWERS)


def admins():
    """The active superusers: whoever can mend what no reviewer can (a stage nobody may approve in, say)."""
    return get_user_model().objects.filter(is_superuser=True, is_active=True).order_by("username")


def has_a_role(viewer: Viewer) -> bool:
    """Reviewer, auditor or admin: a user with none of these may sign in, but opens no page of the app."""
    return can_review(viewer) or can_audit(viewer)


def required(check, explanation: str):
    """A view decorator that answers 403 with ``explanation`` unless ``check(request.viewer)`` passes."""

    def decorator(view):
        @wraps(view)
        def checked(request, *args, **kwargs):
            if not check(request.viewer):
                raise PermissionDenied(explanation)
            return view(request, *args, **kwargs)

        return checked

    return decorator
