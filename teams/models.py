"""Team scopes: which holds the members of a group may see and decide."""

from django.contrib.auth.models import Group
from django.db import models

PATTERN_FIELDS = ("env_patterns", "agent_patterns", "capability_patterns")


class TeamScope(models.Model):
    """Limits a group's members to the holds matching its patterns.

    Each field is a list of globs, one per line (``prod-*``); a hold is in the scope when
    it matches one pattern of every non-blank field. A user sees the holds in the scopes
    of all their scoped groups; a user in no scoped group sees every hold.
    """

    group = models.OneToOneField(Group, on_delete=models.CASCADE, related_name="team_scope")
    env_patterns = models.TextField(blank=True, help_text="Globs over the env, one per line; blank: any env.")
    agent_patterns = models.TextField(blank=True, help_text="Globs over the agent, one per line; blank: any agent.")
    capability_patterns = models.TextField(
        blank=True, help_text="Globs over the capability, one per line; blank: any capability."
    )

    def __str__(self) -> str:
        return f"scope of {self.group}"
