"""Where the decision form puts each field, and the errors of a refused form in that order.

An item's scalar fields (text, numbers, yes/no) show at once, so that the amount and the
decision buttons fit on one screen; its bulky ones (JSON, long text) fold below them, opened
when one of them holds an error. A reviewer who sent a form with mistakes lands on a summary
at the top of the form: it says how many things to fix and what each one is, and each entry
jumps to its field. With several items, an entry also names the item, since every item has
fields with the same labels.
"""

from dataclasses import dataclass

from holds.deciding import editing


@dataclass(frozen=True)
class FieldGroups:
    """An item's field rows (field, value, error): ``shown`` at once, ``folded`` below them, ``open`` when one of those
    has an error."""

    shown: list
    folded: list
    open: bool


def field_groups(rows: list[tuple[editing.Field, object, str]]) -> FieldGroups:
    """The rows of ``review.ItemReview.field_rows`` in the form's two groups, each in the data's order."""
    folded = [row for row in rows if row[0].multiline]
    return FieldGroups(
        shown=[row for row in rows if not row[0].multiline],
        folded=folded,
        open=any(error for _, _, error in folded),
    )


@dataclass(frozen=True)
class ErrorLink:
    """One error: ``target`` is the id of the input to fix; ``label`` names it; ``item`` names its item (or is "")."""

    target: str
    label: str
    item: str
    message: str


def action_input_id(prefix: str) -> str:
    """The id of an item's first action (its approve radio), where the "choose an action" error leads."""
    return f"{prefix}-approve"


def error_links(reviews) -> list[ErrorLink]:
    """Every error of the reviews (``review.ItemReview``), in the form's order: per item, its fields, then its
    action."""
    several = len(reviews) > 1
    links = []
    for item_review in reviews:
        item = (item_review.item.title or item_review.item.item_id) if several else ""
        labels = {field.name: editing.human_label(field.key) for field in item_review.fields}
        # As the form shows them: the scalar fields, then the folded ones.
        shown_order = sorted(item_review.fields, key=lambda field: field.multiline)
        order = {field.name: position for position, field in enumerate(shown_order)}
        for error in sorted(item_review.errors, key=lambda error: order.get(error.name, len(order))):
            links.append(
                ErrorLink(target=error.name, label=labels.get(error.name, "Value"), item=item, message=error.message)
            )
        if item_review.action_error:
            links.append(
                ErrorLink(
                    target=action_input_id(item_review.prefix),
                    label="Action",
                    item=item,
                    message=item_review.action_error,
                )
            )
    return links
