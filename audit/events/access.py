"""The events of access: signing in, being locked out of it, and API tokens made, first used and revoked.

One keyword-only builder per kind, named as the kind; each returns the ``Entry`` that
``audit.events`` appends. A stranger's failed guesses are not recorded (django-axes counts
them in its own prunable table): only the failure that locked a username out.
"""

from __future__ import annotations

from audit.events import Entry
from audit.models import EventKind
from reviewqueue.forwarded import client_ip


def signed_in(*, user, request) -> Entry:
    return Entry(EventKind.SIGNED_IN, actor=user, payload=_client(request))


def locked_out(*, username: str, failures: int, request) -> Entry:
    """``username`` locked out after ``failures`` failed sign-ins; the guessed password is never recorded."""
    payload = {"username": str(username or "")[:150], "failures": failures, **_client(request)}
    return Entry(EventKind.LOCKED_OUT, payload=payload)


def _client(request) -> dict:
    if request is None:
        return {}
    return {"ip": client_ip(request) or "", "user_agent": request.META.get("HTTP_USER_AGENT", "")[:300]}


def token_created(*, actor, token) -> Entry:
    """``actor`` made ``token`` (none: the ``createtoken`` command); its secret is never recorded, its hint is."""
    return Entry(EventKind.TOKEN_CREATED, actor=actor, payload=_token(token))


def token_first_used(*, token) -> Entry:
    return Entry(EventKind.TOKEN_FIRST_USED, actor=token.user, payload=_token(token))


def token_revoked(*, actor, token) -> Entry:
    return Entry(EventKind.TOKEN_REVOKED, actor=actor, payload=_token(token))


def _token(token) -> dict:
    return {
        "token": token.pk,
        "name": token.name,
        "hint": token.hint,
        "scopes": token.scopes,
        "owner": token.user.get_username(),
        "expires_at": token.expires_at.isoformat(),
    }
