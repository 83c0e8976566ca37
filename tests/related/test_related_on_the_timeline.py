"""An auditor reading a hold's timeline sees the holds related to it, each linked to its own timeline: the four
A-1001 refunds of the samples name one another."""

import re

import pytest
from django.urls import reverse

from reviewqueue import roles
from tests.helpers.users import make_user, scoped_group

pytestmark = pytest.mark.django_db


def related_fragment(client, hold) -> str:
    return client.get(reverse("hold-related", args=[hold.pk])).content.decode()


def test_the_timeline_loads_the_holds_related_to_its_hold(client, audrey, samples):
    client.force_login(audrey)

    timeline = client.get(reverse("audit:hold-timeline", args=[samples["h_12"].pk])).content.decode()
    fragment = related_fragment(client, samples["h_12"])

    assert f'hx-get="{reverse("hold-related", args=[samples["h_12"].pk])}"' in timeline
    assert "Possible duplicate of" in fragment
    for other in ("h_13", "h_14", "h_15"):
        assert f'href="{reverse("audit:hold-timeline", args=[samples[other].pk])}"' in fragment
    assert f'href="{reverse("hold", args=[samples["h_13"].pk])}"' not in fragment


def test_a_hold_with_no_related_hold_says_so(client, audrey, samples):
    client.force_login(audrey)

    fragment = related_fragment(client, samples["h_17"])

    assert "No other hold shares an order, customer or other subject with this one" in fragment
    assert "in the last 30 days" in fragment


def test_a_scoped_auditor_sees_only_the_related_holds_in_their_teams(client, samples):
    scoped = make_user("scoped-auditor", roles.AUDITORS)
    scoped.groups.add(scoped_group("llamaindex and agno", agent="llamaindex-support\nsupport-agno"))
    client.force_login(scoped)

    fragment = related_fragment(client, samples["h_12"])
    named = set(re.findall(r">(h_\d+)</a>", fragment))

    assert named == {"h_14"}
    assert client.get(reverse("hold-related", args=[samples["h_13"].pk])).status_code == 404


def test_someone_with_no_role_is_refused(client, samples):
    client.force_login(make_user("nobody"))

    assert client.get(reverse("hold-related", args=[samples["h_12"].pk])).status_code == 403
