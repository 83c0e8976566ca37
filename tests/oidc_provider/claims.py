"""What the test identity provider says about a person: the standard claims, and a ``groups`` scope."""

from django.utils.translation import gettext_lazy as _
from oidc_provider.lib.claims import ScopeClaims


def userinfo(claims: dict, user) -> dict:
    claims["preferred_username"] = user.username
    claims["name"] = user.get_full_name()
    claims["email"] = user.email
    claims["email_verified"] = True
    return claims


class GroupClaims(ScopeClaims):
    info_groups = (_("Groups"), _("The groups you belong to."))

    def scope_groups(self):
        return {"groups": sorted(self.user.groups.values_list("name", flat=True))}
