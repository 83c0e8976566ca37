"""The sign-in brake: what it counts and refuses, and what a locked-out client is told.

django-axes counts failed sign-ins on both login forms (ours and the admin's)
per username and per client address, in its own prunable table, and refuses
further attempts, even with the right password, for ``SIGN_IN_LOCKOUT_MINUTES``
after ``SIGN_IN_FAILURE_LIMIT`` failures. Its settings point here for the backend
that refuses and the handler that stores the attempts, and for the lockout page; the
client's address is ``reviewqueue.forwarded.client_ip``'s, as everywhere.

Both brake password sign-ins only: single sign-on's callback authenticates with a
nonce, not a password, and the provider guards its own sign-ins, so a failed one
(an issuer mismatch, say) neither counts against the client nor is refused here.
"""

from __future__ import annotations

import math

from axes.backends import AxesStandaloneBackend
from axes.handlers.database import AxesDatabaseHandler
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Max, Q
from django.shortcuts import render
from django.utils import timezone


def _with_password(credentials: dict | None) -> bool:
    """Whether a sign-in is a password's (either login form's), the only kind the brake counts or refuses."""
    return "password" in (credentials or {})


class PasswordBackend(AxesStandaloneBackend):
    """axes' backend (first of ``AUTHENTICATION_BACKENDS`` after single sign-on's), refusing locked-out password
    sign-ins only."""

    def authenticate(self, request, **credentials):
        if not _with_password(credentials):
            return None
        return super().authenticate(request, **credentials)


class AttemptsHandler(AxesDatabaseHandler):
    """axes' database handler (``AXES_HANDLER``), storing the client's headers without NUL, which PostgreSQL refuses.

    axes stores the User-Agent and Accept headers of a failed attempt as sent, and a
    header may carry a NUL: without this, such a failed sign-in would be a 500.
    A failure without a password (single sign-on's) is not stored.
    """

    def user_login_failed(self, sender, credentials: dict, request=None, **kwargs):
        if not _with_password(credentials):
            return None
        if request is not None:
            request.axes_user_agent = request.axes_user_agent.replace("\x00", "")
            request.axes_http_accept = request.axes_http_accept.replace("\x00", "")
        return super().user_login_failed(sender, credentials, request, **kwargs)


def locked_out(request, original_response=None, credentials=None):
    """The page a locked-out client gets (axes' ``AXES_LOCKOUT_CALLABLE``): why, and how long to wait."""
    context = {
        "failure_limit": settings.AXES_FAILURE_LIMIT,
        "wait_minutes": _minutes_until_unlocked(request, credentials),
    }
    return render(request, "registration/locked_out.html", context, status=429)


def _minutes_until_unlocked(request, credentials) -> int:
    """Whole minutes until the newest failure counted against this username or address is older than the lockout."""
    username = (credentials or {}).get("username") or request.POST.get("username")
    latest = AccessAttempt.objects.filter(Q(username=username) | Q(ip_address=request.axes_ip_address)).aggregate(
        latest=Max("attempt_time")
    )["latest"]
    if latest is None:
        return settings.SIGN_IN_LOCKOUT_MINUTES
    left = latest + settings.AXES_COOLOFF_TIME - timezone.now()
    return max(math.ceil(left.total_seconds() / 60), 1)
