"""A reviewer's decision through Django's test client: the decide form, its summary, and "Send decision"."""

from django.urls import reverse

from tests.helpers.forms import fields_of


def review_form(hold, **overrides):
    """The decide form as a reviewer sends it: every item approved, fields at the agent's values."""
    from holds.deciding import review

    form = {}
    for item_review in review.blank(hold):
        form[f"{item_review.prefix}-action"] = "approve"
        form[f"{item_review.prefix}-comment"] = ""
        if hold.allows_edit:
            for field in item_review.fields:
                if field.kind == "boolean":
                    if field.initial:
                        form[field.name] = "true"
                else:
                    form[field.name] = field.initial
    form.update(overrides)
    return form


def field_name(hold, position: int, key: str) -> str:
    """The form name of one item's field (Postgres' jsonb does not keep the agent's key order)."""
    from holds.deciding import review

    return next(field.name for field in review.blank(hold)[position].fields if field.key == key)


def through_summary(client, hold, form):
    """Send the decide form, then press "Send decision" on the summary it shows, as a browser does, having ticked
    that the other holds were checked where the summary asks (a possible duplicate: ``checked``).

    A form the summary does not accept (errors, a closed hold) answers what it showed instead.
    """
    url = reverse("hold-review", args=[hold.pk])
    summary = client.post(url, form)
    if summary.status_code != 200 or b'id="confirm-form"' not in summary.content:
        return summary
    return client.post(url, {**checked(summary.content.decode()), "confirm": "yes"})


def checked(summary: str) -> dict[str, list[str]]:
    """What the summary's "Send decision" posts, with its possible-duplicate confirmation ticked when it asks for one
    (the sample holds' four A-1001 refunds are possible duplicates of one another)."""
    fields = fields_of(summary, "confirm-form")
    if 'id="duplicates-confirmed"' in summary:
        fields["duplicates-confirmed"] = ["yes"]
    return fields


def confirm(client, hold, **overrides):
    return through_summary(client, hold, review_form(hold, **overrides))


def summary_of(client, hold, form) -> dict[str, list[str]]:
    """Show the summary of ``form``; answer what its "Send decision" button posts."""
    summary = client.post(reverse("hold-review", args=[hold.pk]), form)
    assert summary.status_code == 200
    return checked(summary.content.decode())


def send(client, hold, fields):
    return client.post(reverse("hold-review", args=[hold.pk]), {**fields, "confirm": "yes"})
