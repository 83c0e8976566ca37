"""The in-app messages as their recipient reads them: the inbox, and the bell's count of those unread."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from notifications.models import Notification
from reviewqueue.sql import compiled, expressions, prepared
from reviewqueue.viewer import Viewer
from teams import scopes


def in_app_for(viewer: Viewer):
    """The viewer's in-app messages, but those about a hold no longer in their team scopes (a scope narrowed since)."""
    return _in_app(viewer.user, scopes.visible_holds_q(viewer, prefix="hold__"))


# In-app messages, the channel written into the SQL rather than passed as a parameter: the bell's prepared
# statement then keeps a plan that uses the inbox's partial index (reviewqueue/sql/prepared.py).
_IN_APP = expressions.is_constant(Notification, "channel", Notification.Channel.IN_APP)


def _in_app(user, in_scope: Q | None):
    """The in-app messages of ``user`` (a user or their pk), narrowed by ``in_scope`` unless it is None."""
    messages = Notification.objects.filter(_IN_APP, user=user)
    return messages if in_scope is None else messages.filter(Q(hold__isnull=True) | in_scope)


def _unread(messages):
    return messages.filter(read_at__isnull=True, resolved_at__isnull=True)


def unread_count(viewer: Viewer) -> int:
    """The bell's count: in-app messages neither read nor resolved (those ``in_app_for`` the viewer).

    Nearly every page asks, and building the query through the ORM cost more than running it: it is compiled once a
    process for each team scope (reviewqueue/sql/compiled.py) and runs prepared.
    """
    [(count,)] = prepared.read(unread_count_query(viewer))
    return count


def unread_count_query(viewer: Viewer) -> tuple[str, tuple]:
    """``unread_count``'s SQL and parameters, one scalar: for a page that reads it in a statement of its own."""
    return compiled.sql(_unread_count, (viewer.scopes,), user=viewer.pk)


def _unread_count(seen, *, user: int) -> QuerySet:
    """``unread_count``'s query for the user with the pk ``user`` and the team scopes ``seen``."""
    return expressions.count_of(_unread(_in_app(user, scopes.scopes_q(seen, prefix="hold__"))))


# What is worth a system notification on a person's devices while a page is open in a tab they are not looking at:
# an urgent hold (about to expire, or escalated to them) and a hold handed to them.
DESKTOP_EVENTS = (
    Notification.Event.EXPIRING_SOON,
    Notification.Event.ESCALATED,
    Notification.Event.ASSIGNED,
    Notification.Event.STAGE_WAITING,
)


def newest_for_desktop(viewer: Viewer) -> Notification | None:
    """The viewer's newest in-app message of ``DESKTOP_EVENTS`` neither read nor resolved: what the bell's fragment
    hands notifications/static/notifications/desktop.js."""
    messages = _unread(in_app_for(viewer)).filter(event__in=DESKTOP_EVENTS)
    return messages.order_by("-created_at", "-pk").only("pk", "title", "link").first()
