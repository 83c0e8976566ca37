"""Single sign-on's parts without a provider: off by default, its settings, the claims it trusts, roles and accounts.

The redirect flow itself, against a real provider, is in tests/browser/test_sso_flow.py.
"""

from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.test import RequestFactory

from reviewqueue import roles
from sso import accounts, claims, role_mapping
from sso.backend import SingleSignOnBackend
from tests.helpers.preloaded import start_django
from tests.helpers.users import make_user
from tests.oidc_provider.running import IdentityProvider

SSO_ENVIRONMENT = {
    "OIDC_RP_CLIENT_ID": "review-queue",
    "OIDC_RP_CLIENT_SECRET": "s3cret",
    "OIDC_OP_ISSUER": "https://sso.example.com/realms/staff",
    "OIDC_OP_AUTHORIZATION_ENDPOINT": "https://sso.example.com/realms/staff/protocol/openid-connect/auth",
    "OIDC_OP_TOKEN_ENDPOINT": "https://sso.example.com/realms/staff/protocol/openid-connect/token",
    "OIDC_OP_USER_ENDPOINT": "https://sso.example.com/realms/staff/protocol/openid-connect/userinfo",
    "OIDC_OP_JWKS_ENDPOINT": "https://sso.example.com/realms/staff/protocol/openid-connect/certs",
}


@pytest.fixture
def sso_on(settings, tmp_path):
    """Single sign-on configured as for the test provider, which need not run for these tests."""
    for name, value in IdentityProvider(tmp_path).settings().items():
        setattr(settings, name, value)
    settings.AUTHENTICATION_BACKENDS = ["sso.backend.SingleSignOnBackend", *settings.AUTHENTICATION_BACKENDS]
    return settings


def test_single_sign_on_is_off_by_default(client, db):
    page = client.get("/login/").content.decode()

    assert "Sign in with" not in page and 'name="password"' in page
    assert client.get("/sso/start/").status_code == 404
    assert client.get("/sso/callback/?code=x&state=y").status_code == 404


def test_the_oidc_variables_configure_it(tmp_path):
    code = (
        "from django.conf import settings as s; "
        "print(s.AUTHENTICATION_BACKENDS, s.OIDC_RP_SCOPES, s.OIDC_RP_SIGN_ALGO, s.OIDC_REVIEWER_GROUPS, "
        "s.OIDC_AUDITOR_GROUPS, s.OIDC_USE_PKCE, s.OIDC_USE_NONCE, sep='|')"
    )
    variables = SSO_ENVIRONMENT | {"OIDC_REVIEWER_GROUPS": "rq-reviewers, rq-leads", "LOCAL_PASSWORDS": "false"}

    started = start_django(code, REVIEWQUEUE_VAR_DIR=str(tmp_path), **variables)

    backends, scopes, algorithm, reviewer_groups, auditor_groups, pkce, nonce = started.stdout.strip().split("|")
    assert backends == "['sso.backend.SingleSignOnBackend', 'reviewqueue.signin.PasswordBackend']"
    assert (scopes, algorithm, reviewer_groups, auditor_groups) == (
        "openid email profile",
        "RS256",
        "['rq-reviewers', 'rq-leads']",
        "[]",
    )
    assert pkce == nonce == "True"


@pytest.mark.parametrize(
    "variables, named",
    [
        ({"OIDC_RP_CLIENT_SECRET": ""}, "OIDC_RP_CLIENT_SECRET"),
        ({"OIDC_OP_TOKEN_ENDPOINT": "sso.example.com/token"}, "OIDC_OP_TOKEN_ENDPOINT"),
        ({"OIDC_RP_SIGN_ALGO": "none"}, "OIDC_RP_SIGN_ALGO"),
        ({"OIDC_RP_SCOPES": "email,profile"}, "OIDC_RP_SCOPES"),
        ({"OIDC_LINK_VERIFIED_EMAIL": "sometimes"}, "OIDC_LINK_VERIFIED_EMAIL"),
        ({"OIDC_RP_CLIENT_ID": "", "LOCAL_PASSWORDS": "false"}, "LOCAL_PASSWORDS"),
    ],
)
def test_a_bad_oidc_setting_stops_start_up_naming_it(variables, named, tmp_path):
    started = start_django(REVIEWQUEUE_VAR_DIR=str(tmp_path), **(SSO_ENVIRONMENT | variables))

    assert started.returncode != 0
    assert named in started.stderr.splitlines()[-1]
    assert "s3cret" not in started.stderr


def test_claims_of_the_wrong_kind_count_as_missing(sso_on):
    hostile = {"sub": "abc", "email": "not an address", "preferred_username": "Zoë O'Neil <b>", "groups": "solo"}

    assert claims.email(hostile) == ""
    assert claims.username(hostile) == "ZoëONeilb"
    assert claims.username({"preferred_username": "zoe\x00", "email": "zoe@example.com"}) == "zoe@example.com"
    assert claims.groups(hostile) == {"solo"}
    assert claims.groups({"groups": ["rq-reviewers", 7, {"x": 1}, "bad\x00"]}) == {"rq-reviewers"}
    assert claims.groups({"groups": {"rq-reviewers": True}}) == set()
    with pytest.raises(claims.Refused):
        claims.subject({"sub": ["abc"]})
    with pytest.raises(claims.Refused):
        claims.subject({"sub": "x" * 256})
    with pytest.raises(claims.Refused):
        claims.username({"preferred_username": "<>!", "email": "nope"})


def test_a_username_falls_back_to_the_email_address(sso_on):
    assert claims.username({"email": "kim.lee+rq@example.com"}) == "kim.lee+rq@example.com"


def test_the_mapping_changes_only_the_roles_it_manages(sso_on, db):
    lee = make_user("lee", roles.REVIEWERS, "Local team")
    sso_on.OIDC_AUDITOR_GROUPS = []  # auditors are granted by admins here

    role_mapping.apply(lee, {"rq-auditors", "other"})
    assert sorted(lee.groups.values_list("name", flat=True)) == ["Local team"]

    lee.groups.add(Group.objects.get_or_create(name=roles.AUDITORS)[0])
    role_mapping.apply(lee, {"rq-reviewers"})
    assert sorted(lee.groups.values_list("name", flat=True)) == [roles.AUDITORS, "Local team", roles.REVIEWERS]


def test_a_new_person_whose_username_is_taken_here_is_refused(sso_on, db):
    make_user("max")

    with pytest.raises(claims.Refused, match="username Max is taken"):
        accounts.account_for({"sub": "42", "preferred_username": "Max", "email": "max.elsewhere@example.com"})
    with pytest.raises(claims.Refused, match="username max is taken"):
        accounts.account_for({"sub": "43", "preferred_username": "ｍａｘ", "email": "max.wide@example.com"})

    assert User.objects.filter(username__iexact="max").count() == 1


def test_a_password_sign_in_still_works_beside_single_sign_on(sso_on, client, alice):
    assert (
        SingleSignOnBackend().authenticate(RequestFactory().get("/?code=c&state=s"), username="alice", password="pw")
        is None
    )

    response = client.post("/login/", {"username": "alice", "password": "pw"})

    assert response.status_code == 302 and client.session["_auth_user_id"] == str(alice.pk)


def test_with_passwords_off_createuser_still_makes_accounts_that_no_password_opens(sso_on, rf, db):
    sso_on.LOCAL_PASSWORDS = False
    sso_on.AUTHENTICATION_BACKENDS = [b for b in sso_on.AUTHENTICATION_BACKENDS if not b.endswith("ModelBackend")]

    call_command("createuser", "root", "--role", "admin", "--email", "root@example.com", "--password", "break-glass")

    assert User.objects.get(username="root").is_superuser
    assert authenticate(rf.post("/login/"), username="root", password="break-glass") is None


def test_the_start_keeps_only_a_safe_next_page_and_asks_for_pkce(sso_on, client, db):
    to_provider = client.get("/sso/start/", {"next": "/holds/?env=default"})
    kept = client.session["oidc_login_next"]
    client.get("/sso/start/", {"next": "https://evil.example/"})

    assert to_provider.status_code == 302 and to_provider["Location"].startswith(sso_on.OIDC_OP_AUTHORIZATION_ENDPOINT)
    assert "code_challenge_method=S256" in to_provider["Location"] and "nonce=" in to_provider["Location"]
    assert kept == "/holds/?env=default" and client.session["oidc_login_next"] is None


def test_an_unreachable_provider_sends_the_person_back_to_sign_in_with_a_message(sso_on, client, db, caplog):
    sso_on.OIDC_OP_TOKEN_ENDPOINT = "http://127.0.0.1:9/token"  # the discard port: nothing answers
    location = client.get("/sso/start/")["Location"]
    state = parse_qs(urlsplit(location).query)["state"][0]

    response = client.get("/sso/callback/", {"code": "some-code", "state": state}, follow=True)

    assert response.redirect_chain == [("/login/", 302)]
    assert "Signing in with Test IdP did not work." in response.content.decode()
    assert "_auth_user_id" not in client.session
    assert "Single sign-on failed: ConnectionError" in caplog.text and sso_on.OIDC_RP_CLIENT_SECRET not in caplog.text


def test_admins_see_the_links_and_may_only_delete_them(sso_on, client, db):
    root = make_user("root", is_staff=True, is_superuser=True)
    kim = accounts.account_for({"sub": "k-1", "preferred_username": "kim", "email": "kim@example.com"}).user
    client.force_login(root)

    listing = client.get("/admin/sso/identity/", {"q": "kim"})

    assert listing.status_code == 200 and "k-1" in listing.content.decode()
    assert client.get("/admin/sso/identity/add/").status_code == 403
    assert kim.username == "kim" and not kim.has_usable_password()
