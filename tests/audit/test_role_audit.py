"""Role changes are audited on every path: the admin, ``createuser``, single sign-on's mapping, bulk deletes.

A user deleted outside the admin (a shell) is not: no path of the app deletes users, and the trail
records what its paths do."""

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from django.urls import reverse

from audit import chain
from audit.models import AuditEvent, EventKind
from reviewqueue import roles
from sso.models import Identity
from tests.helpers.single_sign_on import sso_sign_in
from tests.helpers.users import make_user
from tests.oidc_provider.running import IdentityProvider

pytestmark = pytest.mark.django_db


def role_events() -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(kind=EventKind.ROLE_CHANGED).order_by("sequence"))


@pytest.fixture(autouse=True)
def the_chain_holds_after_each_test():
    yield
    assert chain.verify().broken is None


@pytest.fixture
def root_client(client):
    root = make_user("root", is_superuser=True, is_staff=True)
    client.force_login(root)
    return client


def test_createuser_records_a_new_reviewer_with_the_role_it_got(capsys):
    call_command("createuser", "carol", "--role", "reviewer", "--password", "pw-long-enough-1")

    [event] = role_events()
    assert event.actor is None
    assert event.payload["object"] == "carol" and event.payload["action"] == "added"
    assert event.payload["source"] == "createuser"
    assert event.payload["changes"]["groups"] == {"added": [roles.REVIEWERS], "removed": []}
    assert event.payload["now"] == {
        "groups": [roles.REVIEWERS],
        "is_active": True,
        "is_staff": False,
        "is_superuser": False,
    }
    assert "pw-long-enough-1" not in str(event.payload)


def test_createuser_making_a_reviewer_an_admin_records_before_and_after():
    reviewer = make_user("dave", roles.REVIEWERS)

    call_command("createuser", "dave", "--role", "admin")

    [event] = role_events()
    assert event.payload["object_id"] == str(reviewer.pk) and event.payload["action"] == "changed"
    assert event.payload["changes"]["fields"] == {"is_staff": [False, True], "is_superuser": [False, True]}
    assert event.payload["changes"]["groups"] == {"added": [], "removed": [roles.REVIEWERS]}
    assert event.payload["now"]["is_superuser"] is True


def test_createuser_that_changes_nothing_records_nothing():
    call_command("createuser", "erin", "--role", "auditor")
    call_command("createuser", "erin", "--role", "auditor")

    assert len(role_events()) == 1


def test_changes_made_before_the_block_are_not_attributed_to_it():
    make_user("frank", roles.REVIEWERS)  # e.g. earlier in the same process: not createuser's doing

    call_command("createuser", "grace", "--role", "auditor")

    assert [event.payload["object"] for event in role_events()] == ["grace"]


def test_single_sign_ons_group_mapping_is_recorded_with_its_source(settings, rf, tmp_path):
    for name, value in IdentityProvider(tmp_path).settings().items():
        setattr(settings, name, value)
    heidi = make_user("heidi", roles.REVIEWERS)
    Identity.objects.create(user=heidi, issuer=settings.OIDC_OP_ISSUER, subject="heidi-1")

    sso_sign_in(rf.get("/sso/callback/"), {"sub": "heidi-1", "preferred_username": "heidi", "groups": ["rq-auditors"]})

    [event] = role_events()
    assert event.actor is None and event.payload["source"] == "sso" and event.payload["action"] == "changed"
    assert event.payload["changes"]["groups"] == {"added": [roles.AUDITORS], "removed": [roles.REVIEWERS]}


def test_a_createuser_that_fails_records_nothing_and_rolls_back_with_the_change():
    Group.objects.filter(name=roles.AUDITORS).delete()

    with pytest.raises(CommandError, match="role groups are missing"):
        call_command("createuser", "ivan", "--role", "auditor")

    assert role_events() == []
    assert not User.objects.filter(username="ivan").exists()


def test_the_admins_bulk_delete_of_users_is_recorded_once_per_user_naming_the_admin(root_client):
    doomed = [make_user("judy", roles.REVIEWERS), make_user("ken", roles.AUDITORS)]

    response = root_client.post(
        reverse("admin:auth_user_changelist"),
        {"action": "delete_selected", "_selected_action": [str(user.pk) for user in doomed], "post": "yes"},
    )

    assert response.status_code == 302
    assert not User.objects.filter(username__in=["judy", "ken"]).exists()
    events = role_events()
    assert sorted(event.payload["object"] for event in events) == ["judy", "ken"]
    assert all(event.payload["action"] == "deleted" and event.actor.username == "root" for event in events)
    judy = next(event for event in events if event.payload["object"] == "judy")
    assert judy.payload["before"]["groups"] == [roles.REVIEWERS]


def test_deleting_one_user_in_the_admin_is_recorded_once(root_client):
    leo = make_user("leo", roles.REVIEWERS)

    root_client.post(reverse("admin:auth_user_delete", args=[leo.pk]), {"post": "yes"})

    [event] = role_events()
    assert event.payload["object"] == "leo" and event.payload["action"] == "deleted"
    assert event.actor.username == "root" and event.payload["before"]["groups"] == [roles.REVIEWERS]
