"""Personal access tokens: making one, reading one back from a request, revoking one; each audited.

A token is ``rq_`` and 32 random bytes (``secrets.token_urlsafe``): only its SHA-256 is stored,
which is enough for a secret of that entropy (no guess comes near it), and is shown once, when
made. It acts as its user, read afresh on every request (``teams.scopes.viewer_of``), so a
deactivated user's tokens stop at once, and so does one whose user lost the role an operation
needs; its scopes narrow it further (``SCOPES``): ``read`` lists and reads holds, ``decide``
decides, undoes, assigns and writes notes, ``audit`` reads the audit trail.

A person holds at most ``MAX_LIVE`` live tokens (neither revoked nor expired): a token past that is
refused (``TooMany``), and one no longer used is revoked first. Their requests count together
against the API's rate (``api.ratelimit``), whichever token sends them.

Creating, revoking and the first use of a token are audited (``token_created``, ``token_revoked``,
``token_first_used``); later uses only move ``last_used_at`` on, at most once a minute.
"""

from __future__ import annotations

import dataclasses
import hashlib
import secrets
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from api.models import ApiToken
from audit import events
from audit.events import access
from reviewqueue import readers, roles
from reviewqueue.viewer import Viewer
from teams import scopes as team_scopes

PREFIX = "rq_"
SECRET_BYTES = 32
HINT_LENGTH = 7  # "rq_" and four characters of the secret: enough to tell one's tokens apart, nothing to guess with
READ, DECIDE, AUDIT = "read", "decide", "audit"
SCOPES = {
    READ: "list and read holds and decisions",
    DECIDE: "decide, undo, assign and write notes",
    AUDIT: "read the audit trail and its export",
}
DEFAULT_DAYS = 90
MAX_DAYS = 366
MAX_NAME = 100
MAX_LIVE = 10  # live tokens a person may hold at once
LAST_USED_EVERY = timedelta(minutes=1)  # how stale ``last_used_at`` may be: no write on every request


class Refused(Exception):
    """The token cannot be used; ``message`` says why, for the caller (401)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class TooMany(Exception):
    """The person holds ``MAX_LIVE`` live tokens already; ``message`` says what to do."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


@dataclasses.dataclass(frozen=True)
class Caller:
    """Who an API request acts as: the token, and its user as a viewer read for this request."""

    token: ApiToken
    viewer: Viewer

    @property
    def user(self):
        return self.viewer.user

    def may(self, scope: str) -> bool:
        """Whether the token has ``scope`` and its user still the role it needs."""
        if scope not in self.token.scopes:
            return False
        return roles.can_audit(self.viewer) if scope == AUDIT else roles.can_review(self.viewer)


def digest_of(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def read_scopes(value: str | list[str], name: str = "scopes") -> list[str]:
    """Scopes given as "read,decide" (or a list), each once, in ``SCOPES``' order; none or an unknown one is a
    ``readers.BadValue``."""
    given = [part.strip() for part in (value.split(",") if isinstance(value, str) else value) if part.strip()]
    for scope in given:
        readers.choice(scope, name, SCOPES)
    if not given:
        raise readers.BadValue(name, f"name at least one of {', '.join(SCOPES)}")
    return [scope for scope in SCOPES if scope in given]


def read_days(value: str | int, name: str = "days") -> int:
    days = readers.integer(str(value), name, minimum=1, maximum=MAX_DAYS)
    return DEFAULT_DAYS if days is None else days


def read_name(value: str, name: str = "name") -> str:
    text = readers.text(value.strip(), name, MAX_NAME)
    if not text:
        raise readers.BadValue(name, "say what the token is for")
    return text


def offered_scopes(viewer: Viewer) -> list[str]:
    """The scopes a person may give their own tokens: those their roles can use."""
    return [scope for scope in SCOPES if (roles.can_audit(viewer) if scope == AUDIT else roles.can_review(viewer))]


def create(user, name: str, scopes: list[str], days: int, by=None, now: datetime | None = None) -> tuple[ApiToken, str]:
    """A new token of ``user``, made by ``by`` (None: the ``createtoken`` command); returns it and its secret, which
    nothing keeps. ``TooMany`` when ``user`` holds ``MAX_LIVE`` live tokens already."""
    now = now or timezone.now()
    secret = PREFIX + secrets.token_urlsafe(SECRET_BYTES)
    with transaction.atomic():
        # The person's row locked: two tokens made at once are counted one after the other.
        get_user_model().objects.select_for_update(no_key=True).filter(pk=user.pk).first()
        if live(user, now).count() >= MAX_LIVE:
            raise TooMany(
                f"{user.get_username()} holds {MAX_LIVE} live tokens, the most a person may hold: "
                "revoke one that is no longer used, then make the new one."
            )
        token = ApiToken.objects.create(
            user=user,
            name=name,
            digest=digest_of(secret),
            hint=secret[:HINT_LENGTH],
            scopes=scopes,
            created_at=now,
            created_by=by,
            expires_at=now + timedelta(days=days),
        )
        events.append(access.token_created(actor=by, token=token))
    return token, secret


def caller_for(secret: str, now: datetime | None = None) -> Caller:
    """Who a request sent with ``secret`` acts as; ``Refused`` for a token unknown, revoked or expired, or whose
    user is deactivated. Notes its use (and audits the first)."""
    now = now or timezone.now()
    token = None
    if secret.startswith(PREFIX) and len(secret) < 200:
        token = ApiToken.objects.select_related("user").filter(digest=digest_of(secret)).first()
    if token is None:
        raise Refused("This token is not known.")
    if token.revoked_at is not None:
        raise Refused("This token was revoked.")
    if token.expires_at <= now:
        raise Refused("This token has expired.")
    if not token.user.is_active:
        raise Refused("This token's user is deactivated.")
    _note_use(token, now)
    return Caller(token, team_scopes.viewer_of(token.user))


def _note_use(token: ApiToken, now: datetime) -> None:
    with transaction.atomic():
        if ApiToken.objects.filter(pk=token.pk, last_used_at__isnull=True).update(last_used_at=now):
            events.append(access.token_first_used(token=token))
        elif token.last_used_at is not None and token.last_used_at < now - LAST_USED_EVERY:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)


def revoke(token: ApiToken, by=None, now: datetime | None = None) -> bool:
    """Revoke ``token`` (by ``by``; None: the ``createtoken`` command); False when it was revoked already."""
    now = now or timezone.now()
    with transaction.atomic():
        if not ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=now, revoked_by=by):
            return False
        token.revoked_at, token.revoked_by = now, by
        events.append(access.token_revoked(actor=by, token=token))
    return True


def by_secret(secret: str) -> ApiToken | None:
    return ApiToken.objects.select_related("user").filter(digest=digest_of(secret)).first()


def of_user(user):
    """A person's tokens, newest first: what the API tokens page lists."""
    return ApiToken.objects.filter(user=user).order_by("-created_at", "-pk")


def live(user, now: datetime | None = None):
    """A person's tokens that still work: neither revoked nor expired."""
    return ApiToken.objects.filter(user=user, revoked_at__isnull=True, expires_at__gt=now or timezone.now())


def state(token: ApiToken, now: datetime | None = None) -> str:
    """ "active", "revoked" or "expired"."""
    if token.revoked_at is not None:
        return "revoked"
    return "expired" if token.expires_at <= (now or timezone.now()) else "active"
