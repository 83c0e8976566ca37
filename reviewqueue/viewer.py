"""Who is asking: the user with what their groups tell, read once and passed explicitly, never kept on the user.

A page's viewer is ``request.viewer`` (``teams.middleware``, read at its first use, in one query); a message's
recipients get theirs from ``teams.scopes.viewers_of``. ``roles`` reads ``group_names``, ``teams.scopes`` reads
``scopes``. Someone signed out or inactive is a viewer of no group who sees no hold.
"""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class Viewer:
    user: Any  # the User, or Django's AnonymousUser
    group_names: frozenset[str] = frozenset()
    scopes: tuple | None = ()  # their groups' team scopes (``teams.scopes.Scope``); None: every hold

    @property
    def pk(self):
        return self.user.pk

    @property
    def signed_in(self) -> bool:
        """Signed in and active: only such a viewer has roles."""
        return self.user.is_authenticated and self.user.is_active
