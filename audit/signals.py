"""Recording sign-ins and the admin's changes to roles and settings.

Successful sign-ins come from Django's auth signals, lockouts from django-axes,
which keeps the failed attempts themselves in its own prunable table (a stranger's
guesses must not grow the append-only trail). Admin changes come from the admin's
own log: every change, addition or deletion made through the admin writes a
``LogEntry`` in the same transaction as the change, naming the admin who made it.
The log says which fields changed but not their values, so the user and group
signals that fire earlier in that transaction note the values before and after
(``_pending``), and the ``LogEntry`` picks them up.

Approval policies are noted the same way: every field an admin changes, with its value
before and after (``policy_saving``), every value of a policy added, and every value of one
deleted (read as its ``LogEntry`` is written, just before the deletion).

A team scope's patterns are noted with their values before and after, on its group (changed
on the group's page) and on the scope itself (changed in its own list): who sees which holds
is a role change too.

Role changes made elsewhere (``createuser``, single sign-on's group mapping) go
through the same signals and are recorded by ``recording_role_changes``, a block
those paths wrap their changes in, inside their transaction. A user deleted in bulk in the admin
gets a ``LogEntry`` each, but written with ``bulk_create``, which sends no signal:
the deletion itself (``pre_delete``) records it then, naming the admin from that
entry. Notes nobody recorded (a shell) are dropped when the next request starts.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from decimal import Decimal

from axes.signals import user_locked_out
from django.contrib.admin.models import DELETION, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.auth.signals import user_logged_in
from django.contrib.contenttypes.models import ContentType
from django.core.signals import request_started
from django.db.models.signals import m2m_changed, post_save, pre_delete, pre_save
from django.utils import timezone

from approvals.models import ApprovalPolicy
from audit import events
from audit.models import EventKind
from reviewqueue.forwarded import client_ip
from teams.models import PATTERN_FIELDS, TeamScope

ROLE_FIELDS = ("is_active", "is_staff", "is_superuser")
ROLE_MODELS = ("auth.user", "auth.group")
ACTIONS = {1: "added", 2: "changed", 3: "deleted"}
ADMIN_DELETION_WINDOW = timedelta(minutes=1)
RECORDED_DELETION = "auth.user deletion on record"  # a _pending key's model: no role change to record
POLICY_MODEL = "approvals.approvalpolicy"

_pending: contextvars.ContextVar[dict | None] = contextvars.ContextVar("audit_pending_role_changes", default=None)


def connect() -> None:
    User = get_user_model()
    user_logged_in.connect(signed_in, dispatch_uid="audit.signed_in")
    user_locked_out.connect(locked_out, dispatch_uid="audit.locked_out")
    pre_save.connect(user_saving, sender=User, dispatch_uid="audit.user_saving")
    post_save.connect(user_saved, sender=User, dispatch_uid="audit.user_saved")
    pre_delete.connect(user_deleting, sender=User, dispatch_uid="audit.user_deleting")
    pre_save.connect(group_saving, sender=Group, dispatch_uid="audit.group_saving")
    m2m_changed.connect(groups_changed, sender=User.groups.through, dispatch_uid="audit.groups_changed")
    m2m_changed.connect(permissions_changed, sender=Group.permissions.through, dispatch_uid="audit.permissions_changed")
    pre_save.connect(policy_saving, sender=ApprovalPolicy, dispatch_uid="audit.policy_saving")
    post_save.connect(policy_saved, sender=ApprovalPolicy, dispatch_uid="audit.policy_saved")
    pre_save.connect(scope_saving, sender=TeamScope, dispatch_uid="audit.scope_saving")
    post_save.connect(scope_saved, sender=TeamScope, dispatch_uid="audit.scope_saved")
    pre_delete.connect(scope_deleting, sender=TeamScope, dispatch_uid="audit.scope_deleting")
    post_save.connect(admin_logged, sender=LogEntry, dispatch_uid="audit.admin_logged")
    request_started.connect(forget_pending, dispatch_uid="audit.forget_pending")


def signed_in(sender, request, user, **kwargs) -> None:
    events.record(EventKind.SIGNED_IN, actor=user, payload=_client(request))


def locked_out(sender, request, username, ip_address, **kwargs) -> None:
    """The failure that reached the limit; the attempts refused during the lockout are not recorded again.

    axes sends this signal for those refused attempts too, but only the failure
    that reached the limit has counted its failures (``axes_failures_since_start``).
    """
    failures = getattr(request, "axes_failures_since_start", None)
    if failures is None:
        return
    payload = {"username": str(username or "")[:150], "failures": failures, **_client(request)}
    events.record(EventKind.LOCKED_OUT, payload=payload)


def _client(request) -> dict:
    if request is None:
        return {}
    return {"ip": client_ip(request) or "", "user_agent": request.META.get("HTTP_USER_AGENT", "")[:300]}


def user_saving(sender, instance, update_fields=None, **kwargs) -> None:
    if instance.pk is None or (update_fields is not None and not set(update_fields) & set(ROLE_FIELDS)):
        return  # a new user is logged as added; a last_login update is no role change
    before = sender.objects.filter(pk=instance.pk).values(*ROLE_FIELDS).first()
    if before is None:
        return
    for field in ROLE_FIELDS:
        if before[field] != getattr(instance, field):
            _note("auth.user", instance.pk)["fields"][field] = [before[field], getattr(instance, field)]


def user_saved(sender, instance, created: bool, **kwargs) -> None:
    if created:
        _note("auth.user", instance.pk)["added"] = True


def user_deleting(sender, instance, **kwargs) -> None:
    """A user's deletion, unless the admin's ``LogEntry`` for it was recorded already (a single delete)."""
    if (_pending.get() or {}).pop((RECORDED_DELETION, str(instance.pk)), None):
        return
    entry = (
        LogEntry.objects.filter(
            content_type=ContentType.objects.get_for_model(sender),
            object_id=str(instance.pk),
            action_flag=DELETION,
            action_time__gte=timezone.now() - ADMIN_DELETION_WINDOW,  # written just before, in the same request
        )
        .select_related("user")
        .order_by("-action_time", "-pk")
        .first()
    )
    payload = {
        "model": "auth.user",
        "object_id": str(instance.pk),
        "object": instance.get_username(),
        "action": "deleted",
        "message": "" if entry else "outside the admin",
        "before": _roles_now(instance.pk),
    }
    events.record(EventKind.ROLE_CHANGED, actor=entry.user if entry else None, payload=payload)


@contextmanager
def recording_role_changes(*, actor=None, source: str) -> Iterator[list]:
    """Record the role changes made inside the block, outside the admin: by ``createuser`` or single sign-on.

    Use it inside the transaction that makes the changes::

        with transaction.atomic(), recording_role_changes(source="sso"):
            role_mapping.apply(user, groups)

    Users added, their ``is_active``/``is_staff``/``is_superuser`` and groups changed (through
    ``user.groups`` or ``group.user_set``), groups renamed or given permissions: whatever the
    signals noted in the block becomes one ``role_changed`` event per user or group when it ends
    without an error (appended to the list it yields). ``source`` names the path; ``actor`` is
    who made the change, None for the system. Notes made before the block are not its own and
    are left as they were.
    """
    token = _pending.set({})
    recorded: list = []
    try:
        yield recorded
        recorded.extend(_record_noted(actor, source))
    finally:
        _pending.reset(token)


def _record_noted(actor, source: str) -> list:
    pending = _pending.get() or {}
    recorded = []
    for (model, pk), noted in list(pending.items()):
        if model not in ROLE_MODELS:
            continue
        del pending[(model, pk)]
        changes = _non_empty(noted)
        if not noted.get("added") and changes == {"fields": {}}:
            continue  # saved without a role change
        payload = {
            "model": model,
            "object_id": pk,
            "object": _name_of(model, pk),
            "action": "added" if noted.get("added") else "changed",
            "message": f"by {source}",
            "source": source,
            "changes": changes,
        }
        if model == "auth.user":
            payload["now"] = _roles_now(pk)
        recorded.append(events.record(EventKind.ROLE_CHANGED, actor=actor, payload=payload))
    return recorded


def _name_of(model: str, pk) -> str:
    if model == "auth.user":
        user = get_user_model().objects.filter(pk=pk).first()
        return user.get_username() if user else ""
    return Group.objects.filter(pk=pk).values_list("name", flat=True).first() or ""


def group_saving(sender, instance, **kwargs) -> None:
    if instance.pk is None:
        return
    before = sender.objects.filter(pk=instance.pk).values_list("name", flat=True).first()
    if before is not None and before != instance.name:
        _note("auth.group", instance.pk)["fields"]["name"] = [before, instance.name]


def policy_saving(sender, instance, **kwargs) -> None:
    """The policy's fields an admin changed, each as [before, after] (a group by its name)."""
    if instance.pk is None:
        return
    before = sender.objects.filter(pk=instance.pk).first()
    if before is None:
        return
    old_values, new_values = _policy_values(before), _policy_values(instance)
    for field, old in old_values.items():
        if old != new_values[field]:
            _note(POLICY_MODEL, instance.pk)["fields"][field] = [old, new_values[field]]


def policy_saved(sender, instance, created: bool, **kwargs) -> None:
    if created:
        noted = _note(POLICY_MODEL, instance.pk)["fields"]
        noted.update({field: [None, value] for field, value in _policy_values(instance).items()})


def _policy_values(policy) -> dict:
    """A policy's values as the audit records them: decimals as text, groups by name."""
    values = {}
    for field in policy._meta.concrete_fields:
        if field.primary_key:
            continue
        if field.is_relation:
            related = getattr(policy, field.name)
            values[field.name] = str(related) if related else None  # a group by its name, a user by username
        else:
            value = getattr(policy, field.attname)
            if isinstance(value, Decimal):  # as the column keeps it, so that 500 and 500.0000 are no change
                value = str(value.quantize(Decimal(10) ** -field.decimal_places))
            values[field.name] = value
    return values


def scope_saving(sender, instance, **kwargs) -> None:
    """The patterns an admin changed on a stored scope, as policy_saving does (a new scope's: ``scope_saved``)."""
    if instance.pk is None:
        return
    stored = sender.objects.filter(pk=instance.pk).values(*PATTERN_FIELDS).first()
    if stored is not None:
        _note_scope(instance, stored, _patterns(instance))


def scope_saved(sender, instance, created: bool, **kwargs) -> None:
    if created:
        _note_scope(instance, dict.fromkeys(PATTERN_FIELDS, ""), _patterns(instance))


def scope_deleting(sender, instance, **kwargs) -> None:
    _note_scope(instance, _patterns(instance), dict.fromkeys(PATTERN_FIELDS, ""))


def _patterns(scope) -> dict:
    return {field: getattr(scope, field) for field in PATTERN_FIELDS}


def _note_scope(scope, before: dict, after: dict) -> None:
    for field in PATTERN_FIELDS:
        if before[field] != after[field]:
            for model, pk in (("auth.group", scope.group_id), ("teams.teamscope", scope.pk)):
                _note(model, pk)["fields"][f"team scope {field}"] = [before[field], after[field]]


def groups_changed(sender, instance, action, reverse, model, pk_set, **kwargs) -> None:
    """A user's groups changed, from either side (``user.groups`` or ``group.user_set``)."""
    if action not in ("post_add", "post_remove", "pre_clear"):
        return
    change = "added" if action == "post_add" else "removed"
    if reverse:  # instance is a group, pk_set its users
        users = pk_set if action != "pre_clear" else set(instance.user_set.values_list("pk", flat=True))
        for user_pk in users:
            _note("auth.user", user_pk)["groups"][change].append(instance.name)
        return
    groups = instance.groups.all() if action == "pre_clear" else model.objects.filter(pk__in=pk_set)
    _note("auth.user", instance.pk)["groups"][change].extend(sorted(groups.values_list("name", flat=True)))


def permissions_changed(sender, instance, action, reverse, model, pk_set, **kwargs) -> None:
    if reverse or action not in ("post_add", "post_remove", "pre_clear"):
        return
    change = "added" if action == "post_add" else "removed"
    permissions = instance.permissions.all() if action == "pre_clear" else model.objects.filter(pk__in=pk_set)
    codenames = sorted(f"{p.content_type.app_label}.{p.codename}" for p in permissions.select_related("content_type"))
    _note("auth.group", instance.pk)["permissions"][change].extend(codenames)


def _note(model: str, pk) -> dict:
    pending = _pending.get()
    if pending is None:
        pending = {}
        _pending.set(pending)
    return pending.setdefault(
        (model, str(pk)),
        {"fields": {}, "groups": {"added": [], "removed": []}, "permissions": {"added": [], "removed": []}},
    )


def forget_pending(sender, **kwargs) -> None:
    _pending.set(None)


def admin_logged(sender, instance: LogEntry, created: bool, **kwargs) -> None:
    """An admin change: a role change for users and groups, a setting change for anything else."""
    if not created or instance.content_type is None or instance.content_type.app_label == "audit":
        return
    model = f"{instance.content_type.app_label}.{instance.content_type.model}"
    pending = _pending.get() or {}
    noted = pending.pop((model, str(instance.object_id)), None)
    payload = {
        "model": model,
        "object_id": instance.object_id,
        "object": instance.object_repr,
        "action": ACTIONS.get(instance.action_flag, str(instance.action_flag)),
        "message": instance.get_change_message(),
    }
    if noted and _non_empty(noted) != {"fields": {}}:
        payload["changes"] = _non_empty(noted)
    if model == "auth.user" and instance.action_flag != DELETION:
        payload["now"] = _roles_now(instance.object_id)
    if model == "auth.user" and instance.action_flag == DELETION:
        payload["before"] = _roles_now(instance.object_id)
        _note_recorded_deletion(instance.object_id)
    if model == POLICY_MODEL and instance.action_flag == DELETION:
        policy = ApprovalPolicy.objects.filter(pk=instance.object_id).first()
        payload["before"] = _policy_values(policy) if policy else {}
    kind = EventKind.ROLE_CHANGED if model in ROLE_MODELS else EventKind.SETTING_CHANGED
    events.record(kind, actor=instance.user, payload=payload)


def _note_recorded_deletion(pk) -> None:
    """Tell ``user_deleting`` that this deletion is on record already."""
    pending = _pending.get()
    if pending is None:
        pending = {}
        _pending.set(pending)
    pending[(RECORDED_DELETION, str(pk))] = True


def _non_empty(noted: dict) -> dict:
    changes = {"fields": noted["fields"]}
    for part in ("groups", "permissions"):
        if noted[part]["added"] or noted[part]["removed"]:
            changes[part] = noted[part]
    return changes


def _roles_now(user_pk) -> dict:
    user = get_user_model().objects.filter(pk=user_pk).first()
    if user is None:
        return {}
    roles_now = {field: getattr(user, field) for field in ROLE_FIELDS}
    return {"groups": sorted(user.groups.values_list("name", flat=True)), **roles_now}
