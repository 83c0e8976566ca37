"""Review Queue's roles as the identity provider's groups say, applied at every single sign-on: added and removed.

A role is managed here only when its groups are configured (``OIDC_REVIEWER_GROUPS``,
``OIDC_AUDITOR_GROUPS``); otherwise admins grant it as before. The roles change through
``user.groups``; the backend records what moved (``audit.role_changes``) as the admin's changes are recorded.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group

from reviewqueue import roles


def managed_roles() -> dict[str, set[str]]:
    """Each role mapped from the provider, with the provider's groups that grant it."""
    mapping = {roles.REVIEWERS: settings.OIDC_REVIEWER_GROUPS, roles.AUDITORS: settings.OIDC_AUDITOR_GROUPS}
    return {role: set(granted_by) for role, granted_by in mapping.items() if granted_by}


def apply(user, provider_groups: set[str]) -> None:
    """Give ``user`` exactly the managed roles that ``provider_groups`` grant."""
    managed = managed_roles()
    if not managed:
        return
    wanted = {role for role, granted_by in managed.items() if granted_by & provider_groups}
    held = set(user.groups.filter(name__in=managed).values_list("name", flat=True))
    if wanted - held:
        user.groups.add(*(Group.objects.get_or_create(name=role)[0] for role in sorted(wanted - held)))
    if held - wanted:
        user.groups.remove(*Group.objects.filter(name__in=held - wanted))
