"""Role and setting changes in the admin are recorded by the admins (``audit.admin_changes``), naming who changed
what, never a secret."""

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from audit.models import EventKind
from notifications.models import WebhookChannel
from reviewqueue import roles
from tests.helpers.admin_forms import WEBHOOK_FORM, admin_form_data
from tests.helpers.audit_trail import only

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_delivery")]


# Role and setting changes in the admin


def test_giving_a_user_a_role_in_the_admin_names_the_admin_and_the_change(root_client, root, alice):
    url = reverse("admin:auth_user_change", args=[alice.pk])
    data = admin_form_data(root_client.get(url))
    data["groups"] = [str(Group.objects.get(name=roles.AUDITORS).pk)]
    data["is_staff"] = "on"

    response = root_client.post(url, data)

    assert response.status_code == 302
    event = only(EventKind.ROLE_CHANGED)
    assert event.actor == root
    assert event.payload["object"] == "alice" and event.payload["action"] == "changed"
    assert event.payload["changes"]["groups"] == {"added": ["Auditors"], "removed": ["Reviewers"]}
    assert event.payload["changes"]["fields"] == {"is_staff": [False, True]}
    assert event.payload["now"]["groups"] == ["Auditors"]


def test_making_a_superuser_in_the_admin_is_recorded(root_client, root, bob):
    url = reverse("admin:auth_user_change", args=[bob.pk])
    data = admin_form_data(root_client.get(url))
    data["is_superuser"] = "on"

    root_client.post(url, data)

    event = only(EventKind.ROLE_CHANGED)
    assert event.payload["changes"]["fields"] == {"is_superuser": [False, True]}


def test_changing_a_groups_permissions_in_the_admin_is_a_role_change(root_client, root):
    group = Group.objects.get(name=roles.REVIEWERS)
    url = reverse("admin:auth_group_change", args=[group.pk])
    data = admin_form_data(root_client.get(url))
    permission = root_client.get(url).context["adminform"].form.fields["permissions"].queryset.get(codename="view_user")
    data["permissions"] = [str(permission.pk)]

    root_client.post(url, data)

    event = only(EventKind.ROLE_CHANGED)
    assert event.payload["model"] == "auth.group" and event.payload["changes"]["permissions"]["added"] == [
        "auth.view_user"
    ]


def test_a_setting_changed_in_the_admin_is_recorded_without_its_secret(root_client, root):
    root_client.post(
        reverse("admin:notifications_webhookchannel_add"),
        WEBHOOK_FORM,
    )
    assert WebhookChannel.objects.get(name="ops").events == ["expired"]

    event = only(EventKind.SETTING_CHANGED)
    assert (
        event.actor == root
        and event.payload["model"] == "notifications.webhookchannel"
        and event.payload["action"] == "added"
    )
    assert "s3cr3t-value" not in str(event.payload)
