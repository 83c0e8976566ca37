"""Read a reviewer's submitted form into per-item choices, checked before anything is sent.

Each item of the hold has an action (approve or reject), a comment, and, when the
hold allows ``edit``, typed fields for its data (see ``editing``). An approved item
whose fields changed becomes an ``edit`` carrying its full data. The summary that
shows the choices signs a digest of them and of the hold's latest decision, and only a
confirm carrying that digest for the same choices, within ``CLAIM_MINUTES``, is sent, and
only while that decision is still the latest (``summary_digest``, ``confirmed_decision``).
"""

from __future__ import annotations

import dataclasses
import hashlib
from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.utils.crypto import constant_time_compare

from audit.chain import canonical
from holds.deciding import editing
from holds.deciding.decisions import ItemChoice
from holds.models import DecisionItem, Hold, HoldItem
from holds.related import safeguard
from reviewqueue.agent_json import storable

ACTIONS = (DecisionItem.Action.APPROVE, DecisionItem.Action.REJECT)
SUMMARY_SALT = "holds.deciding.review.summary"
MAX_COMMENT = 5000  # of one comment sent with every item: a reject-all, or a bulk decision's
DUPLICATE_NOT_CHECKED = "Nothing was sent: tick that you checked the other holds to approve a possible duplicate."
MAX_DUPLICATES_POSTED = 500  # ids a confirm may say it checked: far above any hold's duplicates
NOT_CONFIRMED = "Nothing was sent: the decision did not match a summary shown to you. Check it, then send it."


class NotConfirmed(Exception):
    """A confirm that carries no summary's signature for these choices, or an expired one; ``message`` says which."""

    def __init__(self, message: str = NOT_CONFIRMED):
        super().__init__(message)
        self.message = message


def sign_summary(salt: str, shown) -> str:
    """``shown`` (JSON) signed with the time, for a summary's confirm form to carry back; ``salt`` names the summary."""
    return signing.TimestampSigner(salt=salt).sign_object(shown)


def read_summary(salt: str, signed: str, not_confirmed: str = NOT_CONFIRMED):
    """What ``sign_summary`` signed in ``signed`` within ``CLAIM_MINUTES`` (as long as a claim taken without
    JavaScript lasts); raise ``NotConfirmed`` for an expired one, or saying ``not_confirmed`` for a forged one."""
    try:
        return signing.TimestampSigner(salt=salt).unsign_object(
            signed, max_age=timedelta(minutes=settings.CLAIM_MINUTES)
        )
    except signing.SignatureExpired:
        raise NotConfirmed(
            f"Nothing was sent: this summary is more than {settings.CLAIM_MINUTES} minutes old. "
            "Check it again, then send it."
        ) from None
    except signing.BadSignature:
        raise NotConfirmed(not_confirmed) from None


@dataclasses.dataclass
class ItemReview:
    item: HoldItem
    prefix: str
    fields: list[editing.Field]
    editable: bool
    action: str = ""
    comment: str = ""
    edited: object = None
    changes: list[editing.Change] = dataclasses.field(default_factory=list)
    errors: list[editing.FieldError] = dataclasses.field(default_factory=list)
    action_error: str = ""
    submitted: object = None  # the posted form, to show the reviewer's own values again

    @property
    def final_action(self) -> str:
        if self.action == DecisionItem.Action.APPROVE and self.changes:
            return DecisionItem.Action.EDIT
        return self.action

    def error_for(self, name: str) -> str:
        return next((error.message for error in self.errors if error.name == name), "")

    def value_of(self, field: editing.Field):
        """What the input shows: the reviewer's submitted value, else the agent's."""
        if self.submitted is None:
            return field.initial
        if field.kind == editing.FieldKind.BOOLEAN:
            return field.name in self.submitted
        return self.submitted.get(field.name, field.initial)

    @property
    def field_rows(self) -> list[tuple[editing.Field, object, str]]:
        return [(field, self.value_of(field), self.error_for(field.name)) for field in self.fields]


def blank(hold: Hold) -> list[ItemReview]:
    """The form as first shown: every field at the agent's value, no action chosen."""
    return [
        ItemReview(
            item=item,
            prefix=f"item-{position}",
            fields=editing.fields_for(item.data, f"item-{position}-field"),
            editable=hold.allows_edit,
        )
        for position, item in enumerate(hold.items.all())
    ]


def restored(hold: Hold, withdrawn) -> list[ItemReview]:
    """The form filled with a withdrawn decision's choices: Undo gives the reviewer back what they wrote."""
    reviews = blank(hold)
    chosen = {item.item_id: item for item in withdrawn.items.all()}
    for item_review in reviews:
        choice = chosen.get(item_review.item.item_id)
        if choice is None:
            continue
        rejected = choice.action == DecisionItem.Action.REJECT
        item_review.action = DecisionItem.Action.REJECT if rejected else DecisionItem.Action.APPROVE
        item_review.comment = choice.comment
        if choice.action == DecisionItem.Action.EDIT:
            sent = {
                field.key: field.initial for field in editing.fields_for(choice.data, f"{item_review.prefix}-field")
            }
            # As a browser posts the form: a checkbox that is off is absent.
            item_review.submitted = {
                field.name: sent.get(field.key, field.initial)
                for field in item_review.fields
                if sent.get(field.key, field.initial) is not False
            }
    return reviews


def read(hold: Hold, submitted) -> tuple[list[ItemReview], bool]:
    """The reviews as submitted, and whether they are all valid."""
    submitted = {key: storable(value) for key, value in submitted.items()}  # no NUL reaches the database
    reviews = blank(hold)
    valid = True
    for review in reviews:
        review.submitted = submitted
        review.action = submitted.get(f"{review.prefix}-action", "")
        review.comment = submitted.get(f"{review.prefix}-comment", "").replace("\r\n", "\n").strip()
        if review.action not in ACTIONS:
            review.action_error = "Choose approve or reject."
            review.action = ""
        if review.editable and review.action != DecisionItem.Action.REJECT:
            review.edited, review.changes, review.errors = editing.validate_item(
                review.item.data, f"{review.prefix}-field", submitted
            )
        valid = valid and not review.action_error and not review.errors
    return reviews, valid


def choices(reviews: list[ItemReview]) -> list[ItemChoice]:
    return [
        ItemChoice(
            item_id=review.item.item_id,
            action=review.final_action,
            data=review.edited if review.final_action == DecisionItem.Action.EDIT else None,
            comment=review.comment,
        )
        for review in reviews
    ]


def rejecting_all(hold: Hold, comment: str) -> list[ItemChoice]:
    """Every item of the hold rejected, each with ``comment``."""
    return [
        ItemChoice(item_id=item.item_id, action=DecisionItem.Action.REJECT, comment=comment)
        for item in hold.items.all()
    ]


def summary_digest(hold: Hold, reviewer, reviews: list[ItemReview], round_shown: int) -> str:
    """The signed digest of the choices a summary shows, of the round of approvals it shows them against (its latest
    approval's id, ``rounds.NO_ROUND`` for none) and of the hold's latest decision (``hold.latest_decision_id``, from
    ``decisions.with_latest_decision``), timed, for its confirm form to carry back."""
    shown = {"choices": _fingerprint(hold, reviewer, reviews, round_shown), "decision": hold.latest_decision_id}
    return sign_summary(SUMMARY_SALT, shown)


def confirmed_decision(hold: Hold, reviewer, reviews: list[ItemReview], signed: str, round_shown: int | None) -> int:
    """The hold's latest decision as the summary in ``signed`` showed it, for ``decisions.submit`` to check; raise
    ``NotConfirmed`` unless ``signed`` is a summary of exactly these choices and this round, shown to this reviewer for
    this hold within ``CLAIM_MINUTES``.

    A forged confirm has no valid signature; a digest from other choices, another round,
    another hold or another reviewer signs a different fingerprint.
    """
    shown = read_summary(SUMMARY_SALT, signed)
    if not constant_time_compare(shown["choices"], _fingerprint(hold, reviewer, reviews, round_shown)):
        raise NotConfirmed
    return shown["decision"]


def _fingerprint(hold: Hold, reviewer, reviews: list[ItemReview], round_shown: int | None) -> str:
    """A hash of what the summary shows: per item what is sent and the agent's data it is set against, and the
    round of approvals the decision joins or restarts."""
    shown = {
        "hold": [hold.pk, hold.env, hold.hold_id],
        "reviewer": reviewer.pk,
        "round": round_shown,
        "items": [
            [choice.item_id, choice.action, choice.data, choice.comment, item_review.item.data]
            for choice, item_review in zip(choices(reviews), reviews, strict=True)
        ],
    }
    return hashlib.sha256(canonical(shown).encode()).hexdigest()


@dataclasses.dataclass(frozen=True)
class DuplicateCheck:
    """What the summary asks a reviewer approving a possible duplicate to confirm: the ids they may see (``named``)
    and how many more there are outside their teams (``more``), in ``words``."""

    named: tuple[str, ...]
    more: int
    words: str
    subject_words: str


def duplicate_check(hold: Hold, viewer, reviews: list[ItemReview]) -> DuplicateCheck | None:
    """The confirmation the summary asks for when its choices approve a possible duplicate (``holds.related
    .safeguard``), else None."""
    guard = safeguard.needs_person(hold, choices(reviews))
    if guard is None:
        return None
    seen = guard.seen_by(viewer)
    subjects = sorted({shared.shown for duplicate in guard.duplicates for shared in duplicate.shared})
    subject_words = ", ".join(subjects[:5]) + (" …" if len(subjects) > 5 else "")
    return DuplicateCheck(seen.named, seen.more, seen.words(), subject_words)


def duplicates_checked(submitted) -> list[str] | None:
    """The ids a confirm says the reviewer checked (the summary's ``duplicate`` fields), or None when its
    confirmation is not ticked."""
    if submitted.get("duplicates-confirmed") != "yes":
        return None
    return [str(value)[:200] for value in submitted.getlist("duplicate")[:MAX_DUPLICATES_POSTED]]
