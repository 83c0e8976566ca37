"""Which account here a person signed in at the identity provider gets: theirs, a new one, never someone else's.

An account is found by its link to the provider's subject (``Identity``). A person without
one gets a new account named after ``OIDC_USERNAME_CLAIM``, unless an account here already
has that name or their email address: that account is linked to them only when
``OIDC_LINK_VERIFIED_EMAIL`` is on and the provider says it verified the address.
Otherwise the sign-in is refused, and an admin decides.
"""

from __future__ import annotations

from typing import NamedTuple

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction

from sso import claims as read
from sso.models import Identity


class Account(NamedTuple):
    user: object
    created: bool  # made for this sign-in, as the audit records it (an account added, not changed)


def account_for(claims: dict) -> Account:
    """The account signed in with ``claims``, linked or created; ``claims.Refused`` when there is none to give."""
    issuer, subject = settings.OIDC_OP_ISSUER, read.subject(claims)
    identity = Identity.objects.select_related("user").filter(issuer=issuer, subject=subject).first()
    if identity is not None:
        return Account(identity.user, created=False)
    try:
        with transaction.atomic():
            existing = _existing_by_email(claims)
            user = existing or _new_account(claims)
            Identity.objects.create(user=user, issuer=issuer, subject=subject)
    except IntegrityError:  # a second tab signing the same person in, or an account already linked to another person
        raise read.Refused("Your account could not be linked; please try again, or ask an administrator.") from None
    return Account(user, created=existing is None)


def _existing_by_email(claims: dict):
    address = read.email(claims)
    if not address:
        return None
    same_email = list(get_user_model().objects.filter(email__iexact=address)[:2])
    if not same_email:
        return None
    if settings.OIDC_LINK_VERIFIED_EMAIL and read.email_verified(claims) and len(same_email) == 1:
        return same_email[0]
    raise read.Refused(
        "An account with your email address exists here already and is not linked to your single sign-on: "
        "ask an administrator."
    )


def _new_account(claims: dict):
    User = get_user_model()
    username = read.username(claims)
    if User.objects.filter(username__iexact=username).exists():
        raise read.Refused(f"The username {username} is taken here by another account: ask an administrator.")
    first_name, last_name = read.names(claims)
    # No password: this account signs in only through the identity provider.
    return User.objects.create_user(username, email=read.email(claims), first_name=first_name, last_name=last_name)
