"""Claims: who is reviewing a hold now, so two reviewers do not work on it at once.

A claim is explicit time-based state on the hold (who, since when, until when). It
starts when a reviewer starts deciding (merely opening a hold is presence, see
``presence``), and ends on a decision, a release, or when it times out: after
``CLAIM_MINUTES`` when taken without JavaScript, else a minute after the page's last
heartbeat (``keep_alive``), so a closed page frees the hold within a minute. Once a claim ends,
``claim_expires_at`` keeps when it did (escalation counts a hold's minutes without a claim
from then, see ``approvals.escalation``). Every change is a compare-and-set update, so two reviewers
opening the same hold at once cannot both win. A decision takes the claim in its
own transaction (``take_for_decision``): a reviewer decides only a hold whose claim
is theirs or nobody's.
"""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from audit import events
from audit.models import EventKind
from holds.models import Hold
from reviewqueue import changes


def claim_duration() -> timedelta:
    return timedelta(minutes=settings.CLAIM_MINUTES)


def _unclaimed(now: datetime) -> Q:
    """Holds nobody is reviewing now: never claimed, released, or the claim timed out."""
    return Q(claimed_by__isnull=True) | Q(claim_expires_at__isnull=True) | Q(claim_expires_at__lte=now)


def claim(hold: Hold, user, now: datetime | None = None, lasting: timedelta | None = None) -> bool:
    """Claim an open hold for ``user`` unless someone else's claim is running; True when ``user`` holds it.

    It lasts ``CLAIM_MINUTES``, or ``lasting`` for a page whose heartbeat will keep it alive.
    """
    now = now or timezone.now()
    until = now + (lasting or claim_duration())
    renewed = Hold.objects.filter(
        pk=hold.pk, status=Hold.Status.OPEN, claimed_by=user, claim_expires_at__gt=now
    ).update(claim_expires_at=until)
    with transaction.atomic():
        taken = renewed or Hold.objects.filter(_unclaimed(now), pk=hold.pk, status=Hold.Status.OPEN).update(
            claimed_by=user, claimed_at=now, claim_expires_at=until
        )
        if taken and not renewed:
            events.record(EventKind.CLAIMED, actor=user, hold=hold)
            changes.publish("claim", [hold])
    hold.refresh_from_db(fields=["claimed_by", "claimed_at", "claim_expires_at"])
    return bool(taken)


def keep_alive(hold: Hold, user, now: datetime, lasting: timedelta) -> bool:
    """Renew ``user``'s running claim for ``lasting`` from now (the page's heartbeat); False when it is not theirs.

    A claim that lapsed is not taken again here: someone may have taken it meanwhile,
    and the page then offers to claim anew.
    """
    return bool(
        Hold.objects.filter(pk=hold.pk, status=Hold.Status.OPEN, claimed_by=user, claim_expires_at__gt=now).update(
            claim_expires_at=now + lasting
        )
    )


def take_for_decision(hold: Hold, user, now: datetime) -> bool:
    """Take the hold's claim for ``user``'s decision, which ends it; False when someone else's claim is running.

    Call it in the transaction that stores the decision, with the hold's row locked:
    the compare-and-set and the decision then stand or fall together, so a claim
    taken over or a second reviewer deciding at the same moment cannot slip between.
    """
    return bool(
        Hold.objects.filter(_unclaimed(now) | Q(claimed_by=user), pk=hold.pk).update(
            claimed_by=None, claimed_at=None, claim_expires_at=now
        )
    )


def take_over(hold: Hold, user, now: datetime | None = None) -> None:
    """Take an open hold's claim from whoever holds it (the reviewer confirmed)."""
    now = now or timezone.now()
    with transaction.atomic():
        previous = Hold.objects.select_for_update(of=("self",)).select_related("claimed_by").get(pk=hold.pk).claimed_by
        taken = Hold.objects.filter(pk=hold.pk, status=Hold.Status.OPEN).update(
            claimed_by=user, claimed_at=now, claim_expires_at=now + claim_duration()
        )
        if taken:
            previous_name = previous.get_username() if previous else ""
            events.record(EventKind.TAKEN_OVER, actor=user, hold=hold, payload={"from": previous_name})
            changes.publish("claim", [hold])
    hold.refresh_from_db(fields=["claimed_by", "claimed_at", "claim_expires_at"])


def release(hold: Hold, user) -> None:
    """End ``user``'s claim on a hold, if they hold it."""
    with transaction.atomic():
        ended = Hold.objects.filter(pk=hold.pk, claimed_by=user).update(
            claimed_by=None, claimed_at=None, claim_expires_at=timezone.now()
        )
        if ended:
            events.record(EventKind.RELEASED, actor=user, hold=hold)
            changes.publish("claim", [hold])
    hold.refresh_from_db(fields=["claimed_by", "claimed_at", "claim_expires_at"])
