"""Team scopes in the admin: on each group's page, and listed on their own.

Changes are audited as every admin change is (``audit.admin_changes``): a role change when made on the
group's page, with the scope's patterns before and after.
"""

from django import forms
from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError

from audit.admin_changes import AuditedAdmin
from teams import scopes
from teams.models import PATTERN_FIELDS, TeamScope


class TeamScopeForm(forms.ModelForm):
    """Each field's globs are checked as the queue will read them: a pattern it could not read is a field error."""

    class Meta:
        model = TeamScope
        fields = ["group", *PATTERN_FIELDS]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in PATTERN_FIELDS:
            self.fields[name].validators.append(_check)


def _check(text: str) -> None:
    try:
        scopes.check_patterns(text)
    except scopes.InvalidPattern as invalid:
        raise ValidationError(str(invalid), code="invalid_pattern") from None


class TeamScopeInline(admin.StackedInline):
    model = TeamScope
    form = TeamScopeForm
    can_delete = True
    max_num = 1
    verbose_name_plural = "Team scope (members see only the holds it matches; none: every hold)"


admin.site.unregister(Group)


@admin.register(Group)
class GroupWithScopeAdmin(AuditedAdmin, GroupAdmin):
    inlines = [*GroupAdmin.inlines, TeamScopeInline]


@admin.register(TeamScope)
class TeamScopeAdmin(AuditedAdmin):
    form = TeamScopeForm
    list_display = ["group", *PATTERN_FIELDS]
    list_select_related = ["group"]
    search_fields = ["group__name", *PATTERN_FIELDS]
    ordering = ["group__name"]
