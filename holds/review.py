"""Read a reviewer's submitted form into per-item choices, checked before anything is sent.

Each item of the hold has an action (approve or reject), a comment, and, when the
hold allows ``edit``, typed fields for its data (see ``editing``). An approved item
whose fields changed becomes an ``edit`` carrying its full data.
"""

from __future__ import annotations

import dataclasses

from holds import editing
from holds.decisions import ItemChoice
from holds.models import DecisionItem, Hold, HoldItem
from holds.jsonvalues import storable

ACTIONS = (DecisionItem.Action.APPROVE, DecisionItem.Action.REJECT)


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
