"""Team scopes in the admin: on each group's page, and listed on their own.

Changes are audited as every admin change is: the admin's ``LogEntry`` becomes an audit
event (``audit/signals.py``), a role change when made on the group's page.
"""

from django import forms
from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError

from teams import scopes
from teams.models import TeamScope


class TeamScopeForm(forms.ModelForm):
    """Each field's globs are checked as the queue will read them: a pattern it could not read is a field error."""

    class Meta:
        model = TeamScope
        fields = ["group", "env_patterns", "agent_patterns", "capability_patterns"]

    def clean_env_patterns(self) -> str:
        return _checked(self.cleaned_data["env_patterns"])

    def clean_agent_patterns(self) -> str:
        return _checked(self.cleaned_data["agent_patterns"])

    def clean_capability_patterns(self) -> str:
        return _checked(self.cleaned_data["capability_patterns"])


def _checked(text: str) -> str:
    try:
        scopes.check_patterns(text)
    except scopes.InvalidPattern as invalid:
        raise ValidationError(str(invalid), code="invalid_pattern") from None
    return text


class TeamScopeInline(admin.StackedInline):
    model = TeamScope
    form = TeamScopeForm
    can_delete = True
    max_num = 1
    verbose_name_plural = "Team scope (members see only the holds it matches; none: every hold)"


admin.site.unregister(Group)


@admin.register(Group)
class GroupWithScopeAdmin(GroupAdmin):
    inlines = [*GroupAdmin.inlines, TeamScopeInline]


@admin.register(TeamScope)
class TeamScopeAdmin(admin.ModelAdmin):
    form = TeamScopeForm
    list_display = ["group", "env_patterns", "agent_patterns", "capability_patterns"]
    list_select_related = ["group"]
    search_fields = ["group__name", "env_patterns", "agent_patterns", "capability_patterns"]
    ordering = ["group__name"]
