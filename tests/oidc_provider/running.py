"""Starting the test identity provider in a process of its own, and telling it who exists.

Its commands and its server are ``python -m tests.oidc_provider …`` forked from the suite's preloaded process
(tests/helpers/preloaded.py), each with the provider's environment."""

from __future__ import annotations

import os
import time
from pathlib import Path

import httpx

from tests.helpers import preloaded
from tests.helpers.processes import free_port

MODULE = "tests.oidc_provider"
CLIENT_ID = "review-queue"
CLIENT_SECRET = "idp-test-client-secret-4f1c9"


class IdentityProvider:
    """django-oidc-provider served by ``runserver`` on 127.0.0.1, with its own SQLite file under ``folder``."""

    def __init__(self, folder: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.issuer = f"{self.url}/openid"
        self.environment = os.environ | {"IDP_DATABASE": str(folder / "idp.sqlite3"), "IDP_URL": self.url}
        self.log = folder / "idp.log"
        self.server: preloaded.Process | None = None

    def manage(self, *arguments: str) -> None:
        preloaded.run_module(MODULE, list(arguments), self.environment).check_returncode()

    def start(self, redirect_uri: str) -> None:
        self.manage("migrate", "--verbosity", "0")
        self.manage("creatersakey")
        self.manage("idp_client", CLIENT_ID, "--secret", CLIENT_SECRET, "--redirect-uri", redirect_uri)
        self.server = preloaded.start_module(
            MODULE, ["runserver", f"127.0.0.1:{self.port}", "--noreload"], self.environment, self.log
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{self.issuer}/.well-known/openid-configuration", timeout=1).raise_for_status()
                return
            except httpx.HTTPError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the identity provider did not start: {self.log.read_text()}")

    def person(self, username: str, *, groups: tuple[str, ...] = (), email: str = "", password: str = "idp-pw") -> None:
        """Create or update someone at the provider, in exactly ``groups``."""
        email = email or f"{username}@example.com"
        self.manage("idp_user", username, "--password", password, "--email", email, "--groups", ",".join(groups))

    def stop(self) -> None:
        # Killed: a throwaway server whose SQLite file goes with the test's folder.
        if self.server is not None:
            self.server.kill()
            self.server.wait()

    def settings(self) -> dict:
        """Review Queue's single sign-on settings for this provider, as the environment would give them."""
        return {
            "SSO_ENABLED": True,
            "OIDC_RP_CLIENT_ID": CLIENT_ID,
            "OIDC_RP_CLIENT_SECRET": CLIENT_SECRET,
            "OIDC_OP_ISSUER": self.issuer,
            "OIDC_OP_AUTHORIZATION_ENDPOINT": f"{self.issuer}/authorize",
            "OIDC_OP_TOKEN_ENDPOINT": f"{self.issuer}/token",
            "OIDC_OP_USER_ENDPOINT": f"{self.issuer}/userinfo",
            "OIDC_OP_JWKS_ENDPOINT": f"{self.issuer}/jwks",
            "OIDC_RP_SIGN_ALGO": "RS256",
            "OIDC_RP_SCOPES": "openid email profile groups",
            "OIDC_TIMEOUT": 10.0,
            "OIDC_USE_NONCE": True,
            "OIDC_USE_PKCE": True,
            "OIDC_AUTHENTICATION_CALLBACK_URL": "sso_callback",
            "OIDC_PROVIDER_NAME": "Test IdP",
            "OIDC_USERNAME_CLAIM": "preferred_username",
            "OIDC_ROLE_CLAIM": "groups",
            "OIDC_REVIEWER_GROUPS": ["rq-reviewers"],
            "OIDC_AUDITOR_GROUPS": ["rq-auditors"],
            "OIDC_LINK_VERIFIED_EMAIL": False,
        }
