"""People for the tests: a user with a password of ``pw`` in the named groups."""


def make_user(username: str, *groups: str, **fields):
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user(username, email=f"{username}@example.com", password="pw", **fields)
    for name in groups:
        user.groups.add(Group.objects.get_or_create(name=name)[0])
    return user
