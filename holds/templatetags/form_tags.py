"""Template filters of the decision form (templates/holds/_decide_form.html)."""

from django import template

from holds.deciding import form_layout

register = template.Library()


@register.filter
def field_groups(item_review) -> form_layout.FieldGroups:
    """An item's field rows split into those shown at once and the bulky ones folded below them."""
    return form_layout.field_groups(item_review.field_rows)
