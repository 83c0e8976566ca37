"""Who may do what: reviewers decide holds, auditors read the audit, superusers do everything."""

from functools import wraps

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied

REVIEWERS = "Reviewers"
AUDITORS = "Auditors"
GROUPS = (REVIEWERS, AUDITORS)


def in_group(user: AbstractBaseUser | AnonymousUser, group: str) -> bool:
    if not user.is_authenticated or not user.is_active:
        return False
    return user.is_superuser or group in _group_names(user)


def _group_names(user) -> frozenset[str]:
    """The user's groups, read once per user object (so once per request for ``request.user``)."""
    if not hasattr(user, "_group_names"):
        user._group_names = frozenset(user.groups.values_list("name", flat=True))
    return user._group_names


def can_review(user) -> bool:
    return in_group(user, REVIEWERS)


def can_audit(user) -> bool:
    return in_group(user, AUDITORS)


def required(check, explanation: str):
    """A view decorator that answers 403 with ``explanation`` unless ``check(user)`` passes."""

    def decorator(view):
        @wraps(view)
        def checked(request, *args, **kwargs):
            if not check(request.user):
                raise PermissionDenied(explanation)
            return view(request, *args, **kwargs)

        return checked

    return decorator
