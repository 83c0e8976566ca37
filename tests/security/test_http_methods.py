"""A view that only reads answers 405 to every other method, so no POST, PUT or DELETE reaches code written for GET."""

import pytest

from holds.deciding import decisions
from holds.deciding.decisions import ItemChoice
from holds.links import action_links
from tests.helpers.duplicates import every_duplicate
from tests.helpers.urls import named_urls, real_path_values
from tests.helpers.users import make_user

pytestmark = pytest.mark.django_db

# The pages whose GET shows a form that a POST to the same address sends; the others read, or take a POST only.
FORMS = {
    "login",
    "take-over",
    "assign-hold",
    "notification-preferences",
    "action-link",
    "slack-connect",
    "slack-accounts",
    "api-tokens",
}
CHANGING = ("post", "put", "patch", "delete")


def test_every_view_that_only_reads_refuses_every_other_method_with_405(client, samples, alice, platform_client):
    decisions.submit(
        samples["h_13"],
        alice,
        [ItemChoice(item.item_id, "approve") for item in samples["h_13"].items.all()],
        duplicates_checked=every_duplicate(samples["h_13"]),
    )
    client.force_login(make_user("root", is_staff=True, is_superuser=True))  # every role: no 403 hides a missing 405

    reading = {}
    for name, path, params in named_urls():
        if name.startswith("admin:") or name in FORMS:  # the Django admin answers each method itself
            continue
        url = "/" + path % {param: real_path_values(name, param)[0] for param in params}
        if client.get(url).status_code != 405:  # a 405 to GET: it takes a POST only
            reading[name] = url

    answers = {name: [getattr(client, method)(url).status_code for method in CHANGING] for name, url in reading.items()}

    assert {
        "queue",
        "hold",
        "decision-status",
        "next-hold",
        "run-context",
        "hold-file",
        "notifications",
        "notification-bell",
        "audit:list",
        "audit:export",
        "audit:stats",
        "healthz",
        "readyz",
        "sso_start",
    } <= set(reading)
    assert answers == {name: [405] * len(CHANGING) for name in reading}


def test_a_page_with_a_form_takes_its_post_but_no_other_method(client, samples, alice):
    hold = samples["h_13"]
    client.force_login(alice)
    urls = {
        "login": "/login/",
        "take-over": f"/holds/{hold.pk}/take-over",
        "assign-hold": f"/holds/{hold.pk}/assign",
        "notification-preferences": "/notifications/preferences",
        "api-tokens": "/preferences/api-tokens",
        "action-link": f"/links/{action_links.make(hold, 'approve', alice)}",
        "slack-connect": "/slack/connect/some-key",
        "slack-accounts": "/slack/accounts",
    }

    answers = {
        name: [getattr(client, method)(url).status_code for method in ("put", "patch", "delete")]
        for name, url in urls.items()
    }

    assert set(urls) == FORMS
    assert answers == {name: [405] * 3 for name in urls}
