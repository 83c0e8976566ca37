"""The events of changing who may do what (roles) and how the app behaves (settings).

One keyword-only builder per kind, named as the kind; each returns the ``Entry`` that
``audit.events`` appends. Both name the changed object as the admin's log does (``model``
as "app.model", ``object_id``, ``object_repr``), say what happened to it (``action``:
"added", "changed" or "deleted") and how (``message``: the admin's change message, or the
path's own words), and carry, when known, the values it changed (``changes``), and the values
of a deleted or changed object after (``now``) or before (``before``). ``audit.role_changes``
and ``audit.admin_changes`` work those out.
"""

from __future__ import annotations

from audit.events import Entry
from audit.models import EventKind


def role_changed(
    *,
    actor,
    model: str,
    object_id: str,
    object_repr: str,
    action: str,
    message: str,
    changes: dict | None = None,
    now: dict | None = None,
    before: dict | None = None,
    source: str = "",
) -> Entry:
    """A user's roles (``auth.user``: active, staff, superuser, groups) or a group's (``auth.group``: name,
    permissions, team scope) changed; ``source`` names the path outside the admin ("createuser", "sso")."""
    payload = _change(model, object_id, object_repr, action, message, changes, before)
    if now is not None:
        payload["now"] = now
    if source:
        payload["source"] = source
    return Entry(EventKind.ROLE_CHANGED, actor=actor, payload=payload)


def setting_changed(
    *,
    actor,
    model: str,
    object_id: str,
    object_repr: str,
    action: str,
    message: str,
    changes: dict | None = None,
    before: dict | None = None,
    hold=None,
    details: dict | None = None,
) -> Entry:
    """Anything else an admin (or a reviewer, for their own away or remembered approvals) changed; ``details``: the
    path's own facts besides (a remembered approval's, an away's, a Slack link's), ``hold`` the hold it came from."""
    payload = _change(model, object_id, object_repr, action, message, changes, before) | (details or {})
    return Entry(EventKind.SETTING_CHANGED, actor=actor, hold=hold, payload=payload)


def _change(model, object_id, object_repr, action, message, changes, before) -> dict:
    payload = {"model": model, "object_id": object_id, "object": object_repr, "action": action, "message": message}
    if changes is not None:
        payload["changes"] = changes
    if before is not None:
        payload["before"] = before
    return payload
