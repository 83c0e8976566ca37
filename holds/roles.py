"""Who may do what: reviewers decide holds, auditors read the audit, superusers do everything."""

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

REVIEWERS = "Reviewers"
AUDITORS = "Auditors"
GROUPS = (REVIEWERS, AUDITORS)


def in_group(user: AbstractBaseUser | AnonymousUser, group: str) -> bool:
    if not user.is_authenticated or not user.is_active:
        return False
    return user.is_superuser or user.groups.filter(name=group).exists()


def can_review(user) -> bool:
    return in_group(user, REVIEWERS)


def can_audit(user) -> bool:
    return in_group(user, AUDITORS)
