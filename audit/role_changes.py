"""What a change to a user's or a group's roles was, for the ``role_changed`` event of the path that made it.

The paths that change roles (the admin, ``createuser``, single sign-on) read the roles before
(``user_roles``, ``group_roles``), make their change, and hand both to ``user_change`` or
``group_change``, which record the values that moved: role flags as ``[before, after]``,
groups and permissions as ``{"added": [...], "removed": [...]}``. Of an account or a group
just made (no values before), only what it was given beyond a blank one is recorded.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from audit.events import Entry, roles_and_settings
from teams.models import PATTERN_FIELDS, TeamScope

ROLE_FIELDS = ("is_active", "is_staff", "is_superuser")
USER_MODEL = "auth.user"
GROUP_MODEL = "auth.group"
SCOPE_FIELD = "team scope {}"  # a group's team scope pattern, as its changes name it


def user_roles(pk) -> dict:
    """The stored user's groups (by name) and role flags; {} when there is no such user."""
    user = get_user_model().objects.filter(pk=pk).first()
    if user is None:
        return {}
    return {"groups": sorted(user.groups.values_list("name", flat=True)), **{f: getattr(user, f) for f in ROLE_FIELDS}}


def group_roles(pk) -> dict:
    """The stored group's name, permissions ("app.codename") and team scope patterns; {} when there is none."""
    group = Group.objects.filter(pk=pk).first()
    if group is None:
        return {}
    permissions = group.permissions.select_related("content_type")
    scope = TeamScope.objects.filter(group=group).values(*PATTERN_FIELDS).first() or dict.fromkeys(PATTERN_FIELDS, "")
    return {
        "name": group.name,
        "permissions": sorted(f"{p.content_type.app_label}.{p.codename}" for p in permissions),
        **{SCOPE_FIELD.format(field): scope[field] for field in PATTERN_FIELDS},
    }


def user_changes(before: dict | None, after: dict) -> dict:
    """The role flags and groups that moved; of a new account (``before`` None), the groups it was given."""
    fields = {} if before is None else _moved(before, after, ROLE_FIELDS)
    return _with_set({"fields": fields}, "groups", before["groups"] if before else [], after["groups"])


def group_changes(before: dict | None, after: dict) -> dict:
    """The name, team scope patterns and permissions that moved; of a new group, the patterns and permissions it
    was given."""
    scope_fields = [SCOPE_FIELD.format(field) for field in PATTERN_FIELDS]
    was = before or {"name": after["name"], "permissions": [], **dict.fromkeys(scope_fields, "")}
    return _with_set(
        {"fields": _moved(was, after, ["name", *scope_fields])}, "permissions", was["permissions"], after["permissions"]
    )


def _moved(before: dict, after: dict, names) -> dict:
    return {name: [before[name], after[name]] for name in names if before[name] != after[name]}


def _with_set(changed: dict, name: str, before: list, after: list) -> dict:
    added, removed = [one for one in after if one not in before], [one for one in before if one not in after]
    if added or removed:
        changed[name] = {"added": added, "removed": removed}
    return changed


def user_change(user, before: dict | None, *, actor, source: str) -> Entry | None:
    """The ``role_changed`` event of ``user``'s roles moved from ``before`` (None: the account is new) by a path
    outside the admin (``source``: "createuser", "sso"); None when a stored account's roles did not move."""
    now = user_roles(user.pk)
    changed = user_changes(before, now)
    if before is not None and changed == {"fields": {}}:
        return None
    return roles_and_settings.role_changed(
        actor=actor,
        model=USER_MODEL,
        object_id=str(user.pk),
        object_repr=user.get_username(),
        action="added" if before is None else "changed",
        message=f"by {source}",
        changes=changed,
        now=now,
        source=source,
    )
