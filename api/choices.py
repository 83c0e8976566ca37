"""Reading a decision sent to the API into the choices ``decisions.submit`` takes, by the hold page's own rules.

The body is the platform's shape, ``{"items": [{"id", "action", "data"?, "comment"?}]}``: one choice per item of
the hold, in any order. An edit carries the item's whole edited data, read as the form reads the same values
typed into its fields and judged by the same business rules (``editing.validate_data``); an edit that changes
nothing is an approval, as on the page. Anything the hold cannot take is a 422 with an error per field, before
anything is stored.
"""

from __future__ import annotations

from api import problems
from holds.deciding import editing
from holds.deciding.decisions import ItemChoice
from holds.models import DecisionItem, Hold
from reviewqueue.agent_json import storable


def read(hold: Hold, items: list) -> list[ItemChoice]:
    """The choices for ``hold``'s items, in the hold's order, from the body's ``items`` (``schemas.ChoiceIn``)."""
    errors = []
    by_id = {}
    for position, item in enumerate(items):
        if item.id in by_id:
            errors.append(problems.field_error(f"items[{position}].id", "names an item a second time"))
        by_id[item.id] = (position, item)
    known = {held.item_id for held in hold.items.all()}
    for item_id, (position, _) in by_id.items():
        if item_id not in known:
            errors.append(problems.field_error(f"items[{position}].id", "is not an item of this hold"))
    for held in hold.items.all():
        if held.item_id not in by_id:
            errors.append(problems.field_error("items", f"needs a decision for the item {held.item_id!r}"))
    if errors:
        raise problems.bad_input(errors, status=422)
    choices = []
    for held in hold.items.all():
        position, item = by_id[held.item_id]
        choice, item_errors = _choice(hold, held, position, item)
        choices.append(choice)
        errors += item_errors
    if errors:
        raise problems.bad_input(errors, status=422)
    return choices


def _choice(hold: Hold, held, position: int, item) -> tuple[ItemChoice, list[dict]]:
    prefix = f"items[{position}]"
    comment = storable(item.comment.replace("\r\n", "\n").strip())
    if item.action != DecisionItem.Action.EDIT:
        if item.data is not None:
            return _none(held), [problems.field_error(f"{prefix}.data", "only an edit carries data")]
        return ItemChoice(held.item_id, item.action, comment=comment), []
    if not hold.allows_edit:
        return _none(held), [problems.field_error(f"{prefix}.action", "this hold does not allow edits")]
    if item.data is None:
        return _none(held), [problems.field_error(f"{prefix}.data", "an edit needs the item's whole edited data")]
    edited, changes, field_errors = editing.validate_data(held.data, storable(item.data))
    if field_errors:
        return _none(held), [
            problems.field_error(f"{prefix}.data{f'.{error.key}' if error.key else ''}", error.message)
            for error in field_errors
        ]
    if not changes:
        return ItemChoice(held.item_id, DecisionItem.Action.APPROVE, comment=comment), []
    return ItemChoice(held.item_id, DecisionItem.Action.EDIT, edited, comment), []


def _none(held) -> ItemChoice:
    return ItemChoice(held.item_id, DecisionItem.Action.REJECT)
