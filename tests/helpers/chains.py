"""The approval chain the issue describes, and its people: on refunds over 1,000, first one of the Support leads, then
two of Finance alongside one of Legal."""

import dataclasses
from decimal import Decimal

from django.contrib.auth.models import Group

from approvals.models import ApprovalPolicy, ApprovalStage
from reviewqueue import roles
from tests.helpers.users import make_user


@dataclasses.dataclass
class Desk:
    policy: ApprovalPolicy
    sam: object  # Support leads
    sue: object  # Support leads
    fay: object  # Finance
    fin: object  # Finance
    lee: object  # Legal
    rex: object  # a reviewer in no group


def chain_policy(stages: list[tuple], name: str = "large refunds", over: str = "1000") -> ApprovalPolicy:
    """A policy on amounts over ``over`` with ``stages``: (group name or None, approvals or None, with_previous)."""
    fewest = sum(approvals or 1 for _, approvals, _ in stages)
    policy = ApprovalPolicy.objects.create(
        name=name,
        condition_key="amount",
        condition_operator="gt",
        condition_threshold=Decimal(over),
        approvals_required=fewest,
    )
    for position, (group, approvals, with_previous) in enumerate(stages, start=1):
        ApprovalStage.objects.create(
            policy=policy,
            position=position,
            group=Group.objects.get_or_create(name=group)[0] if group else None,
            approvals=approvals,
            with_previous=with_previous,
        )
    return policy


def member(username: str, *groups: str):
    return make_user(username, roles.REVIEWERS, *groups)


def desk() -> Desk:
    policy = chain_policy([("Support leads", 1, False), ("Finance", 2, False), ("Legal", 1, True)])
    return Desk(
        policy,
        sam=member("sam", "Support leads"),
        sue=member("sue", "Support leads"),
        fay=member("fay", "Finance"),
        fin=member("fin", "Finance"),
        lee=member("lee", "Legal"),
        rex=member("rex"),
    )


def queue_of(user, **query) -> str:
    """The queue page as ``user`` sees it, with ``query``'s filters."""
    from django.urls import reverse

    from tests.helpers.approvals_setup import signed_in

    return signed_in(user).get(reverse("queue"), query).content.decode()
