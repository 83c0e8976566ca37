"""Idempotency-Key: a retried request gets the first request's answer, and does nothing more.

The key is bound to the token's user: the first request with it stores a row (unique per user and key) in the
transaction that does its work, and its answer in the same transaction, so either both the change and the answer
are kept or neither. A retry finds the row and gets the stored answer, marked ``Idempotent-Replayed: true``; one
sent while the first is still running waits on the row's unique index until the first commits. The same key with
another request (another method, path or body, compared by ``request_digest``) is refused, 422, as the IETF's
draft on the header asks. A key is kept ``KEPT`` (``forget_old``): a retry later than that is a new request, which
the hold's own checks then answer (a decided hold is a 409).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.http import HttpResponse
from django.utils import timezone

from api import problems
from api.models import IdempotentRequest
from audit.chain import canonical
from reviewqueue import readers

HEADER = "Idempotency-Key"
MAX_KEY = 255
KEPT = timedelta(hours=24)  # as long as the payment APIs people know keep theirs


def read_key(value: str | None) -> str:
    """The header's key ("" when none was sent); a blank or overlong one is a ``readers.BadValue``."""
    if value is None:
        return ""
    key = readers.text(value, HEADER, MAX_KEY)
    if not key:
        raise readers.BadValue(HEADER, "send a key of 1 to 255 characters, or no header")
    return key


def request_digest(method: str, path: str, body) -> str:
    return hashlib.sha256(canonical([method, path, body]).encode()).hexdigest()


def answer(request, user, key: str, body, work: Callable[[], HttpResponse]) -> HttpResponse:
    """``work()``'s answer, or with ``key`` (``read_key``) the stored answer of the first request that sent it.

    ``body`` is the request's body as read (JSON values), for the digest. ``work`` answers problems by raising
    ``problems.Problem``: those are stored too, as its answer.
    """
    if not key:
        return _run(request, work)
    digest = request_digest(request.method, request.path, body)
    with transaction.atomic():
        try:
            with transaction.atomic():
                kept = IdempotentRequest.objects.create(
                    user=user, key=key, request_digest=digest, created_at=timezone.now()
                )
        except IntegrityError:
            return _replay(IdempotentRequest.objects.get(user=user, key=key), digest)
        response = _run(request, work)
        kept.status = response.status_code
        kept.content_type = response.get("Content-Type", "")
        kept.body = response.content
        kept.location = response.get("Location", "")
        kept.save(update_fields=["status", "content_type", "body", "location"])
    return response


def _run(request, work: Callable[[], HttpResponse]) -> HttpResponse:
    try:
        return work()
    except problems.Problem as problem:
        return problem.response(request.path)


def _replay(kept: IdempotentRequest, digest: str) -> HttpResponse:
    if kept.request_digest != digest:
        raise problems.Problem(
            422,
            "This Idempotency-Key was sent before with another request; use a new key for a new request.",
            "idempotency-key-reused",
        )
    if kept.status is None:  # not reachable on PostgreSQL, where the retry waited for the first to commit
        raise problems.conflict(
            "The first request with this Idempotency-Key is still running.", "idempotency-key-in-use"
        )
    response = HttpResponse(bytes(kept.body), status=kept.status, content_type=kept.content_type)
    if kept.location:
        response["Location"] = kept.location
    response["Idempotent-Replayed"] = "true"
    return response


def forget_old(now: datetime | None = None) -> int:
    """Delete the requests kept with their answers for longer than ``KEPT``; return how many."""
    now = now or timezone.now()
    deleted, _ = IdempotentRequest.objects.filter(created_at__lt=now - KEPT).delete()
    return deleted
