"""Single sign-on, end to end: a real Chromium, Review Queue's live server and a real OpenID Connect provider.

The provider is django-oidc-provider in a Django process of its own (tests/oidc_provider),
with its own login form and consent page, signing ID tokens with its RSA key.
"""

import logging
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from audit.models import AuditEvent, EventKind
from reviewqueue import roles
from sso.models import Identity
from tests.helpers.users import make_user
from tests.oidc_provider.running import CLIENT_SECRET, IdentityProvider

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def identity_provider(live_server, tmp_path_factory):
    provider = IdentityProvider(tmp_path_factory.mktemp("idp"))
    provider.start(redirect_uri=f"{live_server.url}/sso/callback/")
    yield provider
    provider.stop()


@pytest.fixture
def sso_on(settings, identity_provider):
    """Review Queue with single sign-on to the test provider, as its OIDC_ variables would set it up."""
    for name, value in identity_provider.settings().items():
        setattr(settings, name, value)
    settings.AUTHENTICATION_BACKENDS = ["sso.backend.SingleSignOnBackend", *settings.AUTHENTICATION_BACKENDS]
    return settings


@pytest.fixture
def new_page(browser, live_server):
    """A page in a fresh browser (no cookies: signed in neither here nor at the provider)."""
    contexts = []

    def open_page():
        context = browser.new_context(base_url=live_server.url)
        contexts.append(context)
        return context.new_page()

    yield open_page
    for context in contexts:
        context.close()


def sign_in_at_provider(page, username, password="idp-pw", consent="Authorize"):
    """From Review Queue's sign-in page through the provider's login form and consent page."""
    page.goto("/login/")
    page.get_by_role("link", name="Sign in with Test IdP").click()
    page.get_by_label("IdP username").fill(username)
    page.get_by_label("IdP password").fill(password)
    page.get_by_role("button", name="Log in to the IdP").click()
    expect(page.get_by_text("Review Queue would like to access")).to_be_visible()
    page.get_by_role("button", name=consent).click()


def role_names(username):
    return sorted(User.objects.get(username=username).groups.values_list("name", flat=True))


def test_a_new_reviewer_signs_in_through_the_provider_and_lands_in_the_queue(
    sso_on, identity_provider, new_page, caplog
):
    identity_provider.person("carol", groups=("rq-reviewers", "staff-london"), email="carol@example.com")
    page = new_page()
    authorization_requests = []
    page.on(
        "request",
        lambda request: (
            request.url.startswith(identity_provider.issuer + "/authorize")
            and authorization_requests.append(request.url)
        ),
    )
    caplog.set_level(logging.DEBUG)

    sign_in_at_provider(page, "carol")

    expect(page.get_by_role("heading", name="Open holds")).to_be_visible()
    carol = User.objects.get(username="carol")
    assert role_names("carol") == [roles.REVIEWERS]
    assert carol.email == "carol@example.com" and not carol.has_usable_password()
    assert Identity.objects.get(user=carol).issuer == identity_provider.issuer
    signed_in = AuditEvent.objects.filter(kind=EventKind.SIGNED_IN, actor=carol)
    assert signed_in.count() == 1 and signed_in.get().payload["ip"] == "127.0.0.1"
    # The first request to the provider carried a state, a nonce and a PKCE challenge.
    asked = parse_qs(urlsplit(authorization_requests[0]).query)
    assert {"state", "nonce", "code_challenge"} <= asked.keys() and asked["code_challenge_method"] == ["S256"]
    assert CLIENT_SECRET not in caplog.text


def test_roles_follow_the_provider_groups_at_every_sign_in(sso_on, identity_provider, new_page):
    identity_provider.person("dana", groups=("rq-reviewers",))
    sign_in_at_provider(new_page(), "dana")
    assert role_names("dana") == [roles.REVIEWERS]
    dana = User.objects.get(username="dana")
    dana.groups.add(Group.objects.create(name="Local team"))

    identity_provider.person("dana", groups=("rq-auditors",))
    page = new_page()
    sign_in_at_provider(page, "dana")

    expect(page).to_have_url(re.compile(r"/audit/"))  # an auditor who does not review lands on the audit
    assert role_names("dana") == sorted([roles.AUDITORS, "Local team"])  # groups the mapping does not manage stay
    assert AuditEvent.objects.filter(kind=EventKind.SIGNED_IN, actor=dana).count() == 2
    changes = AuditEvent.objects.filter(kind=EventKind.ROLE_CHANGED, payload__object="dana").order_by("sequence")
    assert [(event.payload["source"], event.payload["action"]) for event in changes] == [
        ("sso", "added"),
        ("sso", "changed"),
    ]
    assert changes.last().payload["changes"]["groups"] == {"added": [roles.AUDITORS], "removed": [roles.REVIEWERS]}


def test_declining_consent_leaves_the_person_signed_out_and_told_why(sso_on, identity_provider, new_page):
    identity_provider.person("ed", groups=("rq-reviewers",))
    page = new_page()

    sign_in_at_provider(page, "ed", consent="Decline")

    expect(page.get_by_text("Signing in with Test IdP did not work.")).to_be_visible()
    assert urlsplit(page.url).path == "/login/"
    assert not User.objects.filter(username="ed").exists()


def test_a_callback_replayed_or_with_a_forged_state_signs_nobody_in(sso_on, identity_provider, new_page):
    identity_provider.person("fay", groups=("rq-reviewers",))
    page = new_page()
    callbacks = []
    page.on("request", lambda request: "/sso/callback/" in request.url and callbacks.append(request.url))
    sign_in_at_provider(page, "fay")
    expect(page.get_by_role("heading", name="Open holds")).to_be_visible()

    replayed = page.request.get(callbacks[0], max_redirects=0)
    stranger = new_page()
    forged = stranger.request.get(callbacks[0], max_redirects=0)

    assert replayed.status == 400  # the state was used up: mozilla-django-oidc refuses it
    assert forged.status == 302 and forged.headers["location"] == "/login/"
    stranger.goto("/")
    expect(stranger.get_by_role("heading", name="Sign in")).to_be_visible()


def test_a_local_account_with_the_same_email_is_not_taken_over(sso_on, identity_provider, new_page):
    gina = make_user("gina", roles.AUDITORS)  # gina@example.com
    identity_provider.person("gina.sso", groups=("rq-reviewers",), email="gina@example.com")
    page = new_page()

    sign_in_at_provider(page, "gina.sso")

    expect(page.get_by_text("An account with your email address exists here already")).to_be_visible()
    assert not User.objects.filter(username="gina.sso").exists() and not Identity.objects.exists()
    assert role_names("gina") == [roles.AUDITORS]

    sso_on.OIDC_LINK_VERIFIED_EMAIL = True  # and the provider says it verified the address
    sign_in_at_provider(new_page(), "gina.sso")

    assert Identity.objects.get().user == gina
    assert role_names("gina") == [roles.REVIEWERS]


def test_a_client_locked_out_of_the_password_form_still_signs_in_through_the_provider(
    sso_on, identity_provider, new_page, alice
):
    identity_provider.person("hal", groups=("rq-reviewers",))
    sso_on.AXES_FAILURE_LIMIT = 2  # a low limit, so that reaching it takes a few sign-ins, not many
    page = new_page()
    page.goto("/login/")
    for _ in range(sso_on.AXES_FAILURE_LIMIT):
        page.goto("/login/")
        page.get_by_label("Username").fill("alice")
        page.get_by_label("Password").fill("wrong")
        page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_role("heading", name="Sign-in paused")).to_be_visible()

    sign_in_at_provider(page, "hal")

    expect(page.get_by_role("heading", name="Open holds")).to_be_visible()
    assert AuditEvent.objects.filter(kind=EventKind.SIGNED_IN, actor__username="hal").exists()
    assert AccessAttempt.objects.filter(ip_address="127.0.0.1").exists()  # the lockout itself stands


def test_failed_provider_sign_ins_never_lock_the_address_out_of_the_password_form(
    sso_on, identity_provider, new_page, alice, caplog
):
    identity_provider.person("jo", groups=("rq-reviewers",))
    sso_on.OIDC_OP_ISSUER = "https://idp.invalid"  # every ID token's issuer now mismatches: each sign-in fails
    sso_on.AXES_FAILURE_LIMIT = 2  # a low limit, so that going past it takes a few sign-ins, not many
    caplog.set_level(logging.WARNING)
    for _ in range(sso_on.AXES_FAILURE_LIMIT + 1):
        page = new_page()
        sign_in_at_provider(page, "jo")
        expect(page.get_by_text("Signing in with Test IdP did not work.")).to_be_visible()

    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill("pw")
    page.get_by_role("button", name="Sign in", exact=True).click()

    expect(page.get_by_role("heading", name="Open holds")).to_be_visible()
    assert caplog.text.count("Single sign-on failed: InvalidIssuerError") == sso_on.AXES_FAILURE_LIMIT + 1
    assert not AccessAttempt.objects.exists() and "AXES: New login failure" not in caplog.text


def test_with_local_passwords_off_only_single_sign_on_is_offered(sso_on, identity_provider, new_page, alice, client):
    sso_on.LOCAL_PASSWORDS = False
    sso_on.AUTHENTICATION_BACKENDS = [b for b in sso_on.AUTHENTICATION_BACKENDS if not b.endswith("ModelBackend")]
    identity_provider.person("ivy", groups=("rq-reviewers",))
    page = new_page()
    page.goto("/login/")

    expect(page.get_by_role("link", name="Sign in with Test IdP")).to_be_visible()
    expect(page.get_by_label("Password")).to_have_count(0)
    refused = client.post("/login/", {"username": "alice", "password": "pw"})
    assert refused.status_code == 403 and "Passwords are turned off" in refused.content.decode()
    assert "_auth_user_id" not in client.session
    assert client.get("/admin/login/").url.startswith("/login/")

    sign_in_at_provider(page, "ivy")
    expect(page.get_by_role("heading", name="Open holds")).to_be_visible()
