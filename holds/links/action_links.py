"""One-tap links: a signed, single-use capability to approve or reject one hold, never a login.

The rules, all here:

- A link is made for one hold and one action (approve or reject), signed with Django's
  signing under ``SALT``. It binds the hold, the action, the hold's payload digest and a
  random token id; an email's link, and a push's, also binds its recipient (``BOUND_CHANNELS``). A link in a
  channel message (``CHAT_LINK``: Slack, Teams, any webhook) goes to many people and binds
  nobody: whoever opens it decides as themselves, where their role and scopes allow.
- It expires at the hold's expiry, or ``LIFETIME`` after it was made, whichever comes first.
- Opening it needs a session (the sign-in returns to the link). Opening it decides nothing:
  mail scanners and link previews fetch links. Only the page's *Send* (a POST) decides.
- ``opened`` reads and checks a link, in this order, and says why it refuses (``Refused``):
  not a link we made (``UNREADABLE``); an email's or a push's link opened by anyone but its recipient
  (``SOMEONE_ELSE``: nothing else is revealed); out of the opener's team scopes
  (``NOT_FOUND``: a 404, as the hold page answers); used once already (``USED``: who used it,
  when, and what it did); the hold decided elsewhere or closed (``DECIDED``); expired
  (``EXPIRED``); the hold changed on the platform since the message (``CHANGED``).
- Single use: ``send`` stores a row per used token id (``ActionLinkUse``, unique) in the
  transaction that submits the decision. A replay, even one racing the first use, meets
  the unique constraint and sends nothing; a refused decision (someone else's claim, say)
  rolls the row back, so the link still works once the hold is free. A row per token,
  rather than the hold's decision state, keeps an undone decision's link used: Undo gives
  the hold back to the hold page, not to a link that may sit in many inboxes.
- Deciding goes the one way every decision goes, ``decisions.submit``: the claim, four
  eyes (the link gives one approval), the undo window, delivery and the audit, which
  records the link's channel.

``links_for`` is what messages call: a hold and an optional recipient in, the Approve,
Reject and Open URLs out.
"""

from __future__ import annotations

import dataclasses
import secrets
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.core import signing
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from holds.deciding import decidable, deciders, decisions, review
from holds.models import ActionLinkUse, Decision, DecisionChannel, DecisionItem, Hold
from holds.related import safeguard
from notifications.hold_links import ActionLinks
from people import wording
from reviewqueue import roles
from reviewqueue.viewer import Viewer
from teams import scopes

# The module's first path, kept: links already sent are signed with it.
SALT = "holds.action_links"
LIFETIME = timedelta(hours=24)
ACTIONS = (DecisionItem.Action.APPROVE, DecisionItem.Action.REJECT)
CHANNELS = (DecisionChannel.EMAIL_LINK, DecisionChannel.CHAT_LINK, DecisionChannel.PUSH_LINK)
BOUND_CHANNELS = (DecisionChannel.EMAIL_LINK, DecisionChannel.PUSH_LINK)  # each made for one person
# A Slack app's interactive button carries a token signed the same way, for ``slackapp`` to read; never a link.
BUTTON_CHANNELS = (DecisionChannel.SLACK,)
MAX_TOKEN = 600  # characters: a link we made is about 200; anything much longer is not ours
FIELDS = {"t", "h", "a", "d", "r", "c", "x"}

UNREADABLE, SOMEONE_ELSE, NOT_FOUND, USED, DECIDED, EXPIRED, CHANGED = (
    "unreadable",
    "someone_else",
    "not_found",
    "used",
    "decided",
    "expired",
    "changed",
)


@dataclasses.dataclass(frozen=True)
class Link:
    """A link as read from its token: everything it was bound to."""

    token_id: str
    hold_pk: int
    action: str
    payload_digest: str
    recipient_pk: int | None
    channel: str
    expires_at: datetime


class Refused(Exception):
    """The link sends nothing; ``kind`` says why, ``message`` says it to the person, ``hold`` is the hold page to
    offer instead (None where that would reveal what they may not see), ``use`` the link's earlier use."""

    def __init__(self, kind: str, message: str, hold: Hold | None = None, use: ActionLinkUse | None = None):
        super().__init__(message)
        self.kind, self.message, self.hold, self.use = kind, message, hold, use


def links_for(hold: Hold, recipient=None, now: datetime | None = None) -> ActionLinks:
    """The links a message about ``hold`` carries: absolute URLs under ``SITE_URL``.

    With a ``recipient`` (a user: an email's) the Approve and Reject links are bound to them, and left out unless
    they may review; without one (a channel's message) they are bound to nobody. Both are left out once the hold can
    no longer be decided, Approve also where the hold does not allow it. Each call makes new links (a new token id
    each), good for ``LIFETIME`` at most. A possible duplicate's Approve opens the hold's page instead (approving it
    asks for a confirmation there), and ``warning`` names the other holds the recipient may see
    (``holds.related.safeguard``; for a channel's message, bound to nobody, those anyone seeing this hold may see).
    """
    return links_for_many(hold, [recipient], now)[0]


def links_for_many(hold: Hold, recipients: list, now: datetime | None = None, for_push: bool = False) -> list:
    """``links_for`` for each of ``recipients`` (users, or None for nobody), in their order, reading what they share
    once: whether the hold can still be decided, its possible duplicates, and every recipient's roles and scopes.
    ``for_push``: a push's links, bound to each recipient as an email's are, whose decisions count as through push."""
    now = now or timezone.now()
    opening = settings.SITE_URL + reverse("hold", args=[hold.pk])
    if decidable.closed_reason(hold, now):
        return [ActionLinks(opening) for _ in recipients]
    people = [recipient for recipient in recipients if recipient is not None]
    viewers = {viewer.pk: viewer for viewer in scopes.viewers_of(people)}
    guard, found = None, []
    for recipient in recipients:
        viewer = viewers[recipient.pk] if recipient is not None else None
        if viewer is not None and not roles.can_review(viewer):
            found.append(ActionLinks(opening))
            continue
        guard = guard or safeguard.guard(hold, now=now)
        channel = DecisionChannel.PUSH_LINK if for_push and recipient is not None else ""
        found.append(_links(hold, recipient, viewer, guard, opening, now, channel))
    return found


def _links(hold: Hold, recipient, viewer, guard, opening: str, now: datetime, channel: str) -> ActionLinks:
    if guard.needed:
        if viewer is not None:
            warning = guard.seen_by(viewer).words()
        else:  # a channel's message: whoever reads the channel, not one person's teams
            warning = guard.seen_by_its_readers().words(outside="of other agents or envs")
        approve = opening if DecisionItem.Action.APPROVE in hold.actions else None
        rejecting = "reject" in hold.actions
        reject = _url(make(hold, DecisionItem.Action.REJECT, recipient, now, channel)) if rejecting else None
        return ActionLinks(opening, approve, reject, warning=warning.capitalize())
    made = {action: _url(make(hold, action, recipient, now, channel)) for action in ACTIONS if action in hold.actions}
    return ActionLinks(opening, made.get(DecisionItem.Action.APPROVE), made.get(DecisionItem.Action.REJECT))


def make(hold: Hold, action: str, recipient=None, now: datetime | None = None, channel: str = "") -> str:
    """A signed token for ``action`` on ``hold``, bound to ``recipient`` when given (see the module's rules); or,
    with a ``channel`` of ``BUTTON_CHANNELS``, an interactive button's value, bound to nobody."""
    now = now or timezone.now()
    channel = channel or (DecisionChannel.EMAIL_LINK if recipient is not None else DecisionChannel.CHAT_LINK)
    expires_at = min(filter(None, [hold.expires_at, now + LIFETIME]))
    return signing.dumps(
        {
            "t": secrets.token_hex(8),
            "h": hold.pk,
            "a": action,
            "d": hold.payload_digest,
            "r": recipient.pk if recipient is not None else None,
            "c": channel,
            "x": int(expires_at.timestamp()),
        },
        salt=SALT,
    )


def read(token: str, channels: tuple[str, ...] = CHANNELS) -> Link:
    """The link ``token`` carries; ``Refused(UNREADABLE)`` for anything we did not sign exactly so, for one of
    ``channels``."""
    unreadable = Refused(UNREADABLE, "This link is not one Review Queue made, or it was cut short: nothing was sent.")
    if not isinstance(token, str) or not 0 < len(token) <= MAX_TOKEN:
        raise unreadable
    try:
        value = signing.loads(token, salt=SALT)
    except (signing.BadSignature, ValueError, UnicodeError):
        raise unreadable from None
    if not isinstance(value, dict) or set(value) != FIELDS:
        raise unreadable
    token_id, hold_pk, action, digest = value["t"], value["h"], value["a"], value["d"]
    recipient_pk, channel, expires = value["r"], value["c"], value["x"]
    if not (
        isinstance(token_id, str)
        and 0 < len(token_id) <= 32
        and _positive_int(hold_pk)
        and action in ACTIONS
        and isinstance(digest, str)
        and channel in channels
        and (recipient_pk is None) == (channel not in BOUND_CHANNELS)
        and (recipient_pk is None or _positive_int(recipient_pk))
        and _positive_int(expires)
    ):
        raise unreadable
    try:
        expires_at = datetime.fromtimestamp(expires, tz=UTC)
    except (OverflowError, OSError, ValueError):
        raise unreadable from None
    return Link(token_id, hold_pk, action, digest, recipient_pk, channel, expires_at)


def opened(
    token: str, viewer: Viewer, now: datetime | None = None, channels: tuple[str, ...] = CHANNELS
) -> tuple[Link, Hold]:
    """The link in ``token`` (of one of ``channels``) and its hold, checked for ``viewer`` (signed in) in the module's
    order; ``Refused`` otherwise."""
    now = now or timezone.now()
    link = read(token, channels)
    if link.recipient_pk is not None and link.recipient_pk != viewer.pk:
        raise Refused(SOMEONE_ELSE, "This link was sent to someone else: nothing was sent.")
    hold = scopes.visible(Hold.objects.all(), viewer).prefetch_related("items").filter(pk=link.hold_pk).first()
    if hold is None:
        raise Refused(NOT_FOUND, "No such hold.")
    _check_state(link, hold, now)
    return link, hold


def _check_state(link: Link, hold: Hold, now: datetime) -> None:
    """Refuse a link that was used, whose hold was decided or closed, that expired, or whose hold changed since."""
    use = ActionLinkUse.objects.filter(token_id=link.token_id).select_related("user", "decision").first()
    if use is not None:
        did = "sent its decision" if use.decision_id else "gave an approval"
        raise Refused(
            USED,
            f"This link was used already: {deciders.reviewer_name(use.user)} {did} with it at "
            f"{wording.moment(use.used_at)}. Nothing more was sent.",
            hold,
            use,
        )
    if live := hold.live_decision():
        raise Refused(
            DECIDED,
            f"Decided by {deciders.decider_name(live)} at {wording.moment(live.created_at)}: this link sends nothing.",
            hold,
        )
    if closed := decidable.closed_reason(hold, now):
        raise Refused(DECIDED, f"{closed} This link sends nothing.", hold)
    if link.expires_at <= now:
        raise Refused(EXPIRED, f"This link expired at {wording.moment(link.expires_at)}: nothing was sent.", hold)
    if hold.payload_digest != link.payload_digest:
        raise Refused(
            CHANGED,
            "The agent's request changed on the platform since this message was sent: nothing was sent. "
            "Open the hold to see it as it is now.",
            hold,
        )


def send(token: str, viewer: Viewer, comment: str = "", round_shown: int | None = None, now: datetime | None = None):
    """Use the link in ``token`` once, as ``viewer``: submit its decision through ``decisions.submit``.

    ``comment`` goes with a reject; ``round_shown`` is the round of approvals the page showed
    (``decisions.submit``). Returns the decision, or the approval when four eyes wait for more.
    Raises ``Refused`` as ``opened`` does (checked again with the hold's row locked), and
    ``decisions.DecisionRefused`` as the hold page would; either way nothing is sent and the
    link is not used up.
    """
    now = now or timezone.now()
    link, hold = opened(token, viewer, now)
    user = viewer.user
    with transaction.atomic():
        locked = Hold.objects.select_for_update(no_key=True).prefetch_related("items").get(pk=hold.pk)
        _check_state(link, locked, now)
        try:
            with transaction.atomic():
                use = ActionLinkUse.objects.create(
                    token_id=link.token_id, hold=locked, user=user, action=link.action, used_at=now
                )
        except IntegrityError:  # a replay that raced the first use, committed since
            raise Refused(USED, "This link was used already: nothing more was sent.", locked) from None
        if link.action == DecisionItem.Action.APPROVE:
            choices = [decisions.ItemChoice(item_id=item.item_id, action=link.action) for item in locked.items.all()]
        else:
            choices = review.rejecting_all(locked, comment)
        outcome = decisions.submit(locked, user, choices, now, round_shown=round_shown, channel=link.channel)
        if isinstance(outcome, Decision):
            ActionLinkUse.objects.filter(pk=use.pk).update(decision=outcome)
    return outcome


def _url(token: str) -> str:
    return settings.SITE_URL + reverse("action-link", args=[token])


def _positive_int(value) -> bool:
    return type(value) is int and 0 < value < 2**53
