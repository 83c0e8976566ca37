"""Calling the API as a script does: a token of a user, and requests carrying it."""

from api import tokens
from tests.helpers.duplicates import every_duplicate


def token_of(user, *scopes: str, name: str = "script") -> str:
    """A new token of ``user`` with ``scopes`` (read, decide and audit when none are named)."""
    return tokens.create(user, name, list(scopes or tokens.SCOPES), tokens.DEFAULT_DAYS)[1]


def bearer(secret: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


def approve_every_item(hold) -> dict:
    """Every item approved, by a script that checked the hold's possible duplicates where it has any (the sample
    holds' four A-1001 refunds are possible duplicates of one another)."""
    body = {"items": [{"id": item.item_id, "action": "approve"} for item in hold.items.all()]}
    if duplicates := every_duplicate(hold):
        body["duplicates_checked"] = duplicates
    return body
