"""Recording sign-ins and lockouts, which Django's auth and django-axes announce by signal.

Successful sign-ins come from Django's ``user_logged_in``, lockouts from django-axes' ``user_locked_out``;
axes keeps the failed attempts themselves in its own prunable table (a stranger's guesses must
not grow the append-only trail). ``AuditConfig.ready`` connects them.
"""

from __future__ import annotations

from axes.signals import user_locked_out
from django.contrib.auth.signals import user_logged_in

from audit import events
from audit.events import access


def connect() -> None:
    user_logged_in.connect(signed_in, dispatch_uid="audit.signed_in")
    user_locked_out.connect(locked_out, dispatch_uid="audit.locked_out")


def signed_in(sender, request, user, **kwargs) -> None:
    events.append(access.signed_in(user=user, request=request))


def locked_out(sender, request, username, ip_address, **kwargs) -> None:
    """The failure that reached the limit; the attempts refused during the lockout are not recorded again.

    axes sends this signal for those refused attempts too, but only the failure
    that reached the limit has counted its failures (``axes_failures_since_start``).
    """
    failures = getattr(request, "axes_failures_since_start", None)
    if failures is None:
        return
    events.append(access.locked_out(username=username, failures=failures, request=request))
