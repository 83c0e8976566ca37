"""One admin session through every admin that changes something, and the audit events it leaves, compared whole.

The expected trail (``admin_trail.json``) was recorded before the admin changes were
recorded where they are made (they were rebuilt from the admin's log by signal
receivers): the same session must leave the same events, kind by kind and key by key.
Ids and moments are normalised; everything else is compared as written.
Regenerate only for a deliberate change: ``REGENERATE_ADMIN_TRAIL=1 pytest tests/audit/test_admin_trail.py``.
"""

import json
import os
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, Permission, User
from django.core.management import call_command
from django.urls import reverse

from api import tokens
from api.models import ApiToken
from approvals.models import ApprovalPolicy, RememberAllowance
from audit import chain
from audit.models import AuditEvent
from notifications.models import NotificationSettings, WebhookChannel
from reviewqueue import roles
from slackapp.models import SlackAccount
from sso.models import Identity
from teams.models import TeamScope
from tests.helpers.admin_forms import WEBHOOK_FORM, admin_form_data
from tests.helpers.single_sign_on import sso_sign_in
from tests.helpers.users import make_user
from tests.oidc_provider.running import IdentityProvider

pytestmark = pytest.mark.django_db

EXPECTED = Path(__file__).with_name("admin_trail.json")
MOMENT = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
IDS = ("object_id", "token")


def normalised(value, key: str = ""):
    """Ids as ``<id>`` (they depend on what ran before), moments as ``<moment>``, a token's hint as ``<hint>``."""
    if isinstance(value, dict):
        return {name: normalised(part, name) for name, part in value.items()}
    if isinstance(value, list):
        return [normalised(part) for part in value]
    if key in IDS and value not in (None, ""):
        return "<id>"
    if key == "hint":
        return "<hint>"
    if isinstance(value, str) and MOMENT.match(value):
        return "<moment>"
    return value


def trail_since(sequence: int) -> list[dict]:
    found = AuditEvent.objects.filter(sequence__gt=sequence).order_by("sequence").select_related("actor")
    return [{"kind": event.kind, "actor": event.actor_name, "payload": normalised(event.payload)} for event in found]


def post_form(client, url: str, **changes):
    """The admin form at ``url`` posted back with ``changes`` (None removes a field: an unticked box)."""
    data = admin_form_data(client.get(url))
    for name, value in changes.items():
        if value is None:
            data.pop(name, None)
        else:
            data[name] = value
    response = client.post(url, data)
    assert response.status_code == 302, response.context and (
        response.context["adminform"].form.errors,
        [inline.formset.errors for inline in response.context.get("inline_admin_formsets", [])],
    )
    return response


def delete(client, url: str):
    response = client.post(url, {"post": "yes"})
    assert response.status_code == 302
    return response


def scope_inline(prefix: str, **values) -> dict:
    return {f"{prefix}-0-{name}": value for name, value in values.items()}


def test_an_admin_session_leaves_the_trail_it_always_left(client, settings, rf, tmp_path):
    for name, value in IdentityProvider(tmp_path).settings().items():
        setattr(settings, name, value)
    root = make_user("root", is_superuser=True, is_staff=True)
    client.force_login(root)
    auditors = Group.objects.get_or_create(name=roles.AUDITORS)[0]
    alice = make_user("alice", roles.REVIEWERS)
    bob = make_user("bob", roles.REVIEWERS)
    carol = make_user("carol", roles.AUDITORS)
    dave = make_user("dave", roles.REVIEWERS)
    token, _secret = tokens.create(alice, "nightly", ["read"], 30)
    Identity.objects.create(user=bob, issuer="https://idp.example.com", subject="bob-sub")
    start = AuditEvent.objects.order_by("-sequence").values_list("sequence", flat=True).first() or 0

    # Users: added, given roles, their password changed, deleted alone and in bulk.
    client.post(
        reverse("admin:auth_user_add"),
        {"username": "erin", "password1": "a-long-pass-phrase-1", "password2": "a-long-pass-phrase-1"},
    )
    erin = User.objects.get(username="erin")
    post_form(
        client,
        reverse("admin:auth_user_change", args=[erin.pk]),
        groups=[str(auditors.pk)],
        is_staff="on",
        first_name="Erin",
    )
    post_form(
        client,
        reverse("admin:auth_user_change", args=[alice.pk]),
        groups=[str(auditors.pk)],
        is_superuser="on",
    )
    post_form(client, reverse("admin:auth_user_change", args=[carol.pk]), is_active=None)
    client.post(
        reverse("admin:auth_user_password_change", args=[bob.pk]),
        {"password1": "another-long-phrase-2", "password2": "another-long-phrase-2", "usable_password": "true"},
    )
    delete(client, reverse("admin:auth_user_delete", args=[dave.pk]))
    frank, grace = make_user("frank", roles.REVIEWERS), make_user("grace", roles.AUDITORS)
    client.post(
        reverse("admin:auth_user_changelist"),
        {"action": "delete_selected", "_selected_action": [str(frank.pk), str(grace.pk)], "post": "yes"},
    )

    # Groups: added with permissions and a team scope, renamed, their scope changed and removed, deleted.
    view_user = Permission.objects.get(codename="view_user")
    change_user = Permission.objects.get(codename="change_user")
    add_group = admin_form_data(client.get(reverse("admin:auth_group_add")))
    add_group |= {"name": "Finance", "permissions": [str(view_user.pk)]}
    add_group |= scope_inline("team_scope", env_patterns="prod", agent_patterns="refund-*", capability_patterns="")
    add_group["team_scope-TOTAL_FORMS"] = "1"
    assert client.post(reverse("admin:auth_group_add"), add_group).status_code == 302
    finance = Group.objects.get(name="Finance")
    scope = TeamScope.objects.get(group=finance)
    group_url = reverse("admin:auth_group_change", args=[finance.pk])
    post_form(
        client,
        group_url,
        name="Finance leads",
        permissions=[str(change_user.pk)],
        **scope_inline("team_scope", id=str(scope.pk), group=str(finance.pk), env_patterns="prod\nstaging"),
        **scope_inline("team_scope", agent_patterns="refund-*", capability_patterns=""),
    )
    post_form(
        client,
        group_url,
        **scope_inline(  # the stored patterns, as a browser posts them back, and the box ticked
            "team_scope",
            id=str(scope.pk),
            group=str(finance.pk),
            env_patterns="prod\nstaging",
            agent_patterns="refund-*",
            DELETE="on",
        ),
    )
    assert not TeamScope.objects.filter(group=finance).exists()
    post_form(client, reverse("admin:auth_user_change", args=[erin.pk]), groups=[str(finance.pk)])
    delete(client, reverse("admin:auth_group_delete", args=[finance.pk]))

    # Team scopes in their own list.
    client.post(
        reverse("admin:teams_teamscope_add"),
        {"group": str(auditors.pk), "env_patterns": "prod", "agent_patterns": "", "capability_patterns": ""},
    )
    auditors_scope = TeamScope.objects.get(group=auditors)
    post_form(client, reverse("admin:teams_teamscope_change", args=[auditors_scope.pk]), agent_patterns="billing-*")
    delete(client, reverse("admin:teams_teamscope_delete", args=[auditors_scope.pk]))

    # Approval policies: added, changed, deleted.
    client.post(
        reverse("admin:approvals_approvalpolicy_add"),
        {
            "name": "Large refunds",
            "capability_pattern": "refund*",
            "condition_key": "amount",
            "condition_operator": "gt",
            "condition_threshold": "500",
            "approvals_required": "2",
        },
    )
    policy = ApprovalPolicy.objects.get(name="Large refunds")
    post_form(
        client,
        reverse("admin:approvals_approvalpolicy_change", args=[policy.pk]),
        condition_threshold="750.50",
        later_approver_group=str(auditors.pk),
    )
    delete(client, reverse("admin:approvals_approvalpolicy_delete", args=[policy.pk]))

    # Remembering allowed: added, changed, deleted.
    client.post(
        reverse("admin:approvals_rememberallowance_add"),
        {"agent_pattern": "refund-*", "capability_pattern": "", "env_pattern": "", "daily_cap_count": "5"},
    )
    allowance = RememberAllowance.objects.get()
    post_form(client, reverse("admin:approvals_rememberallowance_change", args=[allowance.pk]), daily_cap_count="7")
    delete(client, reverse("admin:approvals_rememberallowance_delete", args=[allowance.pk]))

    # A webhook: added (its secret never recorded), changed, deleted.
    client.post(
        reverse("admin:notifications_webhookchannel_add"),
        WEBHOOK_FORM,
    )
    webhook = WebhookChannel.objects.get(name="ops")
    post_form(client, reverse("admin:notifications_webhookchannel_change", args=[webhook.pk]), name="ops-alerts")
    delete(client, reverse("admin:notifications_webhookchannel_delete", args=[webhook.pk]))

    # Someone's away set by an admin, then ended.
    client.post(
        reverse("admin:notifications_notificationsettings_add"),
        {"user": str(erin.pk), "away_until_0": "2099-01-02", "away_until_1": "10:00:00", "delegate": ""},
    )
    away = NotificationSettings.objects.get(user=erin)
    post_form(
        client,
        reverse("admin:notifications_notificationsettings_change", args=[away.pk]),
        away_until_0="",
        away_until_1="",
    )

    # A Slack account linked for someone, then removed.
    client.post(
        reverse("admin:slackapp_slackaccount_add"),
        {"user": str(erin.pk), "slack_user_id": "U0ERIN", "team_id": "T0TEAM"},
    )
    delete(client, reverse("admin:slackapp_slackaccount_delete", args=[SlackAccount.objects.get(user=erin).pk]))

    # A token revoked, an identity link removed.
    client.post(reverse("admin:api_apitoken_changelist"), {"action": "revoke", "_selected_action": [str(token.pk)]})
    assert ApiToken.objects.get(pk=token.pk).revoked_at is not None
    delete(client, reverse("admin:sso_identity_delete", args=[Identity.objects.get(user=bob).pk]))

    # Outside the admin: createuser.
    call_command("createuser", "heidi", "--role", "reviewer", "--password", "pw-long-enough-1")
    call_command("createuser", "heidi", "--role", "admin")

    # Outside the admin: single sign-on's accounts and roles.
    person = {"sub": "ivan-1", "preferred_username": "ivan", "email": "ivan@example.com", "groups": ["rq-reviewers"]}
    assert sso_sign_in(rf.get("/sso/callback/"), person).username == "ivan"
    sso_sign_in(rf.get("/sso/callback/"), person | {"groups": ["rq-auditors"]})
    sso_sign_in(rf.get("/sso/callback/"), person | {"groups": ["rq-auditors"]})  # nothing changed

    trail = trail_since(start)
    if os.environ.get("REGENERATE_ADMIN_TRAIL"):
        EXPECTED.write_text(json.dumps(trail, indent=1, ensure_ascii=False) + "\n")
    assert trail == json.loads(EXPECTED.read_text())
    assert chain.verify().broken is None
