"""Reading what an identity provider says about a person: each claim is checked for its kind before it is used.

The provider is trusted to say who someone is, not to send well-formed values: a claim of
the wrong type or with characters PostgreSQL refuses counts as missing, or refuses the sign-in
when it is one that cannot be missing.
"""

from __future__ import annotations

import re
import unicodedata

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from reviewqueue import readers

SUBJECT_MAX = 255
USERNAME_MAX = 150  # Django's username column
NAME_MAX = 150  # first_name and last_name
EMAIL_MAX = 254
GROUP_MAX = 500
NOT_IN_A_USERNAME = re.compile(r"[^\w.@+-]")  # what Django's username validator refuses


class Refused(Exception):
    """No one can be signed in with these claims; the message is for the person trying to."""


def subject(claims: dict) -> str:
    value = _text(claims, "sub", SUBJECT_MAX)
    if not value:
        raise Refused("The identity provider did not say who you are (no usable subject).")
    return value


def email(claims: dict) -> str:
    value = _text(claims, "email", EMAIL_MAX)
    try:
        validate_email(value)
    except ValidationError:
        return ""
    return value


def email_verified(claims: dict) -> bool:
    """Only a literal true counts (some providers send the string "true")."""
    return claims.get("email_verified") in (True, "true")


def username(claims: dict) -> str:
    """``OIDC_USERNAME_CLAIM`` (or else the email address), with what a username may not hold taken out.

    NFKC-normalised first, as Django stores usernames, so that "ｍａｘ" is found taken by "max".
    """
    for candidate in (_text(claims, settings.OIDC_USERNAME_CLAIM, 1000), email(claims)):
        cleaned = NOT_IN_A_USERNAME.sub("", unicodedata.normalize("NFKC", candidate))[:USERNAME_MAX]
        if cleaned:
            return cleaned
    raise Refused("The identity provider sent neither a usable username nor an email address.")


def names(claims: dict) -> tuple[str, str]:
    """Given and family name, for the name shown to colleagues."""
    return _text(claims, "given_name", NAME_MAX), _text(claims, "family_name", NAME_MAX)


def groups(claims: dict) -> set[str]:
    """The groups in ``OIDC_ROLE_CLAIM``: a list of names, or a single one; anything else is no group."""
    value = claims.get(settings.OIDC_ROLE_CLAIM)
    listed = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    found = set()
    for item in listed:
        if isinstance(item, str):
            try:
                found.add(readers.text(item, settings.OIDC_ROLE_CLAIM, GROUP_MAX))
            except readers.BadValue:
                continue
    return found - {""}


def _text(claims: dict, name: str, max_length: int) -> str:
    value = claims.get(name)
    if not isinstance(value, str):
        return ""
    try:
        return readers.text(value, name, max_length)
    except readers.BadValue:
        return ""
