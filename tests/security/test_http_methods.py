"""A view that only reads answers 405 to every other method, so no POST, PUT or DELETE reaches code written for GET."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

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


# Playwright's sync API leaves an event loop running in the main thread of a worker that ran a browser test, where the
# test client cannot call an async view (the live events' stream): the requests go from a thread of their own, which
# sees the test's rows once they are committed.
@pytest.mark.django_db(transaction=True)
def test_every_view_that_only_reads_refuses_every_other_method_with_405(client, samples, alice, platform_client):
    decisions.submit(
        samples["h_13"],
        alice,
        [ItemChoice(item.item_id, "approve") for item in samples["h_13"].items.all()],
        duplicates_checked=every_duplicate(samples["h_13"]),
    )
    client.force_login(make_user("root", is_staff=True, is_superuser=True))  # every role: no 403 hides a missing 405

    with ThreadPoolExecutor(1) as thread:
        reading, answers = thread.submit(_every_method_of_every_reading_view, client).result()

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


def _every_method_of_every_reading_view(client) -> tuple[dict[str, str], dict[str, list[int]]]:
    """The views that answer GET (by name, with a real address) and their answers to every other method."""
    try:
        reading = {}
        for name, path, params in named_urls():
            if name.startswith("admin:") or name in FORMS:  # the Django admin answers each method itself
                continue
            url = "/" + path % {param: real_path_values(name, param)[0] for param in params}
            if client.get(url).status_code != 405:  # a 405 to GET: it takes a POST only
                reading[name] = url
        return reading, {
            name: [getattr(client, method)(url).status_code for method in CHANGING] for name, url in reading.items()
        }
    finally:
        connection.close()  # this thread's own


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
