"""People for the tests: a user with a password of ``pw`` in the named groups."""

from django.contrib.auth.models import Group
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
