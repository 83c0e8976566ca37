"""The authentication backend of single sign-on: mozilla-django-oidc's code flow, stricter where it is lenient.

The library checks the state (in its callback view), the nonce and PKCE, and the ID token's
signature against the provider's keys. This backend also checks the token's audience, issuer
and expiry, that the userinfo is about the same subject, and finds the account through
``sso.accounts`` rather than by email address.
"""

from __future__ import annotations

import logging

import jwt
import requests
from django.conf import settings
from django.core.exceptions import SuspiciousOperation
from django.db import transaction
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from audit import events, role_changes
from sso import accounts, role_mapping
from sso import claims as read

logger = logging.getLogger(__name__)


class SingleSignOnBackend(OIDCAuthenticationBackend):
    def authenticate(self, request, nonce=None, code_verifier=None, **credentials):
        """Only the callback's call, which carries the nonce; a password form's call is for the other backends."""
        if credentials or nonce is None or request is None:
            return None
        try:
            return super().authenticate(request, nonce=nonce, code_verifier=code_verifier)
        except (requests.RequestException, jwt.PyJWTError, SuspiciousOperation, ValueError, KeyError) as problem:
            # The exception names what failed (a refused code, a bad signature, an unreachable provider;
            # ValueError and KeyError: an answer that is not the JSON the library expects, e.g. no id_token);
            # the client secret travels only in the token request's body, never in these messages.
            logger.warning("Single sign-on failed: %s: %s", type(problem).__name__, problem)
            return None

    def get_payload_data(self, token, key):
        """The verified claims of a signed JWT: the configured algorithm only, meant for us, from our issuer,
        unexpired."""
        if jwt.get_unverified_header(token).get("alg") != self.OIDC_RP_SIGN_ALGO:
            raise SuspiciousOperation("The token is not signed with OIDC_RP_SIGN_ALGO")
        issuer = settings.OIDC_OP_ISSUER
        return jwt.decode(
            token,
            key,
            algorithms=[self.OIDC_RP_SIGN_ALGO],
            audience=self.OIDC_RP_CLIENT_ID,
            issuer=[issuer, f"{issuer}/"],  # the setting is read without a trailing slash; some issuers have one
            options={"require": ["exp", "iat", "iss", "aud", "sub"]},
        )

    def get_or_create_user(self, access_token, id_token, payload):
        userinfo = self.get_userinfo(access_token, id_token, payload)
        if not isinstance(userinfo, dict) or userinfo.get("sub") != payload.get("sub"):
            raise SuspiciousOperation("The userinfo is not about the subject of the ID token")
        claims = payload | userinfo  # some providers put the groups in the ID token only
        try:
            # Audited as the admin's role changes are: a role_changed event for an account added or changed, by "sso".
            with transaction.atomic():
                user, created = accounts.account_for(claims)
                before = None if created else role_changes.user_roles(user.pk)
                if user.is_active:
                    role_mapping.apply(user, read.groups(claims))
                if change := role_changes.user_change(user, before, actor=None, source="sso"):
                    events.append(change)
        except read.Refused as refusal:
            self.request.sso_refusal = str(refusal)
            logger.warning("Single sign-on refused for subject %r: %s", payload.get("sub"), refusal)
            return None
        return user
