"""Every change made in the admin, recorded where it is made: ``AuditedAdmin``, which every admin that changes
anything is (``tests/audit/test_admin_trail.py`` checks).

An addition or a change is recorded once everything of it is saved (``save_related``:
the row, its many-to-many fields and its inlines), in the admin's own transaction, with the
admin's change message ("Changed Name and Permissions."); the values before are read as the
form is saved (``save_form``), before anything is written. A deletion is recorded with the
values the object had (``delete_model``, and ``delete_queryset`` for the list's bulk delete).
Users and groups are role changes (``audit.role_changes`` says what moved); anything else is
a setting change, with every value of an approval policy and the patterns of a team scope.
"""

from __future__ import annotations

import json
from decimal import Decimal

from django.contrib import admin
from django.contrib.admin.models import LogEntry
from django.db import transaction

from approvals.models import ApprovalPolicy, ApprovalStage
from audit import events, role_changes
from audit.events import roles_and_settings
from teams.models import PATTERN_FIELDS, TeamScope

POLICY_MODEL = "approvals.approvalpolicy"
SCOPE_MODEL = "teams.teamscope"


class AuditedAdmin(admin.ModelAdmin):
    """A model admin whose additions, changes and deletions go on the audit trail, naming the admin who made them."""

    def save_form(self, request, form, change):
        # The form keeps the stored values until save_related records the change (the admin passes it to both).
        form.audit_values_before = values_of(form.instance._meta.label_lower, form.instance.pk) if change else None
        return super().save_form(request, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        said = self.construct_change_message(request, form, formsets, not change)
        message = LogEntry(change_message=json.dumps(said))  # worded as the admin's own history words it
        events.append(
            changed(request.user, form.instance, form.audit_values_before, message.get_change_message(), change)
        )

    def delete_model(self, request, obj):
        deletion = deleted(request.user, obj)
        super().delete_model(request, obj)
        events.append(deletion)

    def delete_queryset(self, request, queryset):
        with transaction.atomic():
            deletions = [deleted(request.user, obj) for obj in queryset.order_by("pk")]
            super().delete_queryset(request, queryset)
            events.record_many(deletions)


def stage_value(group: str | None, approvals: int | None, with_previous: bool) -> str:
    """One stage of a policy's chain as the audit records it: "2 of Finance", "all of Legal, with the previous",
    "1 of any reviewer"."""
    return f"{'all' if approvals is None else approvals} of {group or 'any reviewer'}" + (
        ", with the previous" if with_previous else ""
    )


def values_of(model: str, pk) -> dict | None:
    """What the audit compares of a stored object, before and after a change; None for a model it only names."""
    if model == role_changes.USER_MODEL:
        return role_changes.user_roles(pk)
    if model == role_changes.GROUP_MODEL:
        return role_changes.group_roles(pk)
    if model == POLICY_MODEL:
        policy = ApprovalPolicy.objects.filter(pk=pk).first()
        return policy_values(policy) if policy else {}
    if model == SCOPE_MODEL:
        stored = TeamScope.objects.filter(pk=pk).values(*PATTERN_FIELDS).first()
        return {role_changes.SCOPE_FIELD.format(field): stored[field] for field in PATTERN_FIELDS} if stored else {}
    return None


def policy_values(policy, stages: list | None = None) -> dict:
    """A policy's values as the audit records them: decimals as the column keeps them (500 and 500.0000 are no
    change), related rows by name (a group by its name, a user by username), and its ``stages`` (``stage_value``s;
    read from its stored stage rows when not given)."""
    if stages is None:
        rows = ApprovalStage.objects.filter(policy=policy.pk).select_related("group") if policy.pk else []
        stages = [stage_value(row.group and row.group.name, row.approvals, row.with_previous) for row in rows]
    values = {"stages": stages}
    for field in policy._meta.concrete_fields:
        if field.primary_key:
            continue
        if field.is_relation:
            related = getattr(policy, field.name)
            values[field.name] = str(related) if related else None
        else:
            value = getattr(policy, field.attname)
            if isinstance(value, Decimal):
                value = str(value.quantize(Decimal(10) ** -field.decimal_places))
            values[field.name] = value
    return values


def changed(actor, obj, before: dict | None, message: str, change: bool) -> events.Entry:
    """The event of ``obj`` added or changed in the admin, its values having been ``before`` (None: added)."""
    model = obj._meta.label_lower
    named = _named(actor, obj, "changed" if change else "added", message)
    after = values_of(model, obj.pk)
    if model == role_changes.USER_MODEL:
        moved = role_changes.user_changes(before, after)
        return roles_and_settings.role_changed(**named, changes=_unless_empty(moved), now=after)
    if model == role_changes.GROUP_MODEL:
        moved = role_changes.group_changes(before, after)
        return roles_and_settings.role_changed(**named, changes=_unless_empty(moved))
    if after is None:
        return roles_and_settings.setting_changed(**named)
    if before is None and model == POLICY_MODEL:  # every value of a new policy
        return roles_and_settings.setting_changed(
            **named, changes={"fields": {name: [None, value] for name, value in after.items()}}
        )
    was = before or dict.fromkeys(after, "")  # a new team scope's patterns, from blank
    moved = {"fields": {name: [was[name], value] for name, value in after.items() if was[name] != value}}
    return roles_and_settings.setting_changed(**named, changes=_unless_empty(moved))


def deleted(actor, obj) -> events.Entry:
    """The event of ``obj`` deleted in the admin, with a user's roles and a policy's values as they were."""
    model = obj._meta.label_lower
    named = _named(actor, obj, "deleted", "")
    if model == role_changes.USER_MODEL:
        return roles_and_settings.role_changed(**named, before=role_changes.user_roles(obj.pk))
    if model == role_changes.GROUP_MODEL:
        return roles_and_settings.role_changed(**named)
    if model == POLICY_MODEL:
        return roles_and_settings.setting_changed(**named, before=values_of(model, obj.pk))
    return roles_and_settings.setting_changed(**named)


def _named(actor, obj, action: str, message: str) -> dict:
    """Who changed which object how, as the admin's own log names them (its text cut as the log cuts it)."""
    return {
        "actor": actor,
        "model": obj._meta.label_lower,
        "object_id": str(obj.pk),
        "object_repr": str(obj)[:200],
        "action": action,
        "message": message,
    }


def _unless_empty(moved: dict) -> dict | None:
    return None if moved == {"fields": {}} else moved
