"""Bulk decisions through Django's test client: the holds ticked, and the summary's "Send"."""

from django.urls import reverse

from tests.helpers.forms import fields_of

BULK = reverse("bulk-review")


def selected(holds, action, comment=""):
    return {"hold": [str(hold.pk) for hold in holds], "action": action, "comment": comment}


def confirm(client, summary):
    return client.post(BULK, {**fields_of(summary.content.decode(), "confirm-form"), "confirm": "yes"})
