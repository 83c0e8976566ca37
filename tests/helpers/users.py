"""People for the tests: a user with a password of ``pw`` in the named groups."""

from django.contrib.auth.models import Group

from holds.mirror import sync
from holds.models import Hold
from teams.models import TeamScope


def make_user(username: str, *groups: str, **fields):
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user(username, email=f"{username}@example.com", password="pw", **fields)
    for name in groups:
        user.groups.add(Group.objects.get_or_create(name=name)[0])
    return user


def scoped_group(name: str, env: str = "", agent: str = "", capability: str = "") -> Group:
    group = Group.objects.create(name=name)
    TeamScope.objects.create(group=group, env_patterns=env, agent_patterns=agent, capability_patterns=capability)
    return group


def add_hold(platform_state, platform_client, agent: str, **fields) -> Hold:
    hold_id = platform_state.add_hold("default", {"agent": agent, "question": f"Refund for {agent}?", **fields})[
        "hold_id"
    ]
    sync.sync_env(platform_client, "default")
    return Hold.objects.get(hold_id=hold_id)
