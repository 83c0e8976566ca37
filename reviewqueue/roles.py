"""Who may do what: reviewers decide holds, auditors read the audit, superusers do everything."""

from functools import wraps

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied

from reviewqueue.sql import reads

REVIEWERS = "Reviewers"
AUDITORS = "Auditors"
GROUPS = (REVIEWERS, AUDITORS)


def in_group(user: AbstractBaseUser | AnonymousUser, group: str) -> bool:
    if not user.is_authenticated or not user.is_active:
        return False
    return user.is_superuser or group in group_names(user)


def group_names(user) -> frozenset[str]:
    """The names of the user's groups, read once per user object (see ``groups_with_scopes``)."""
    if not hasattr(user, "_group_names"):
        user._group_names = frozenset(name for name, *_ in groups_with_scopes(user))
    return user._group_names


def groups_with_scopes(user) -> list[tuple]:
    """The user's groups as (name, scope pk, env, agent and capability patterns), the scope's None for a group
    without one; read once per user object (so once per request for ``request.user``): one query tells both
    their roles and, for ``teams.scopes``, their team scopes (written out: building it through the ORM cost every
    page more than running it)."""
    if not hasattr(user, "_groups_with_scopes"):
        user._groups_with_scopes = reads.groups_with_scopes(user)
    return user._groups_with_scopes


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
