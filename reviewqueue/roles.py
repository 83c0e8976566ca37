"""Who may do what: reviewers decide holds, auditors read the audit, superusers do everything."""

from functools import wraps

from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db.models import Q

from reviewqueue import prepared

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
    their roles and, for ``teams.scopes``, their team scopes."""
    if not hasattr(user, "_groups_with_scopes"):
        user._groups_with_scopes = _read_groups_with_scopes(user)
    return user._groups_with_scopes


def _read_groups_with_scopes(user) -> list[tuple]:
    """Written out: every page asks, and building this query through the ORM cost more than running it."""
    groups = user._meta.get_field("groups")
    membership = groups.remote_field.through._meta.db_table
    group = groups.related_model._meta.db_table
    scope = apps.get_model("teams", "TeamScope")._meta.db_table
    with prepared.cursor() as cursor:
        cursor.execute(
            f"SELECT g.name, s.id, s.env_patterns, s.agent_patterns, s.capability_patterns FROM {group} g"
            f" JOIN {membership} m ON m.{groups.m2m_reverse_name()} = g.id LEFT JOIN {scope} s ON s.group_id = g.id"
            f" WHERE m.{groups.m2m_column_name()} = %s",
            [user.pk],
        )
        return cursor.fetchall()


def can_review(user) -> bool:
    return in_group(user, REVIEWERS)


def reviewers():
    """The active users who may decide holds (Reviewers, and superusers, who have every role), by username."""
    return (
        get_user_model().objects.filter(Q(groups__name=REVIEWERS) | Q(is_superuser=True), is_active=True)
        .distinct().order_by("username")
    )


def can_audit(user) -> bool:
    return in_group(user, AUDITORS)


def has_a_role(user) -> bool:
    """Reviewer, auditor or admin: a user with none of these may sign in, but opens no page of the app."""
    return can_review(user) or can_audit(user)


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
