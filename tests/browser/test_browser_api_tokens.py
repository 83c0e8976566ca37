"""Alice makes an API token on Preferences → API tokens in a real Chromium and opens the API's docs page: the token
is shown once, the page passes axe, and the docs page renders under the app's CSP with nothing loaded from
elsewhere."""

from urllib.parse import urlsplit

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from api.models import ApiToken
from tests.helpers import browser as chromium
from tests.helpers.browser import accessibility_problems

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_alice_makes_a_token_sees_it_once_and_reads_the_api_docs_under_the_csp(browser, live_server, alice):
    page = chromium.signed_in_page(browser, live_server, "alice", bypass_csp=True)  # axe is injected
    page.goto(reverse("notification-preferences"))
    page.get_by_role("link", name="Tokens for your scripts and tools").click()
    page.get_by_label("Name").fill("on-call script")
    page.get_by_label("decide: decide, undo, assign and write notes").check()
    page.get_by_role("button", name="Create token").click()

    secret = page.locator("#new-token-secret").inner_text()
    assert secret.startswith("rq_")
    problems = accessibility_problems(page, "the API tokens page with a new token")
    page.goto(reverse("api-tokens"))
    expect(page.locator("#token-list")).to_contain_text("on-call script")
    assert secret not in page.content()
    chromium.close_quietly(page.context)
    assert ApiToken.objects.get().scopes == ["read", "decide"]
    assert not problems, problems

    context = browser.new_context(base_url=live_server.url)  # the app's own CSP, this time
    docs = context.new_page()
    refused, origins = [], set()
    docs.on("console", lambda message: "Content Security Policy" in message.text and refused.append(message.text))
    docs.on("request", lambda request: origins.add(urlsplit(request.url).netloc))
    docs.goto("/api/v1/docs")
    expect(docs.get_by_role("heading", name="Review Queue API")).to_be_visible()
    expect(docs.get_by_text("/api/v1/holds/{pk}/decision")).to_be_visible()
    context.close()

    assert refused == []
    assert origins == {urlsplit(live_server.url).netloc}
