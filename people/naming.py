"""One way to name a person everywhere: full name if set, else username; the email goes in a tooltip."""


def name(user) -> str:
    """ "Alice Martin", or "alice" when she has no name; "system" for no user."""
    if user is None:
        return "system"
    return user.get_full_name().strip() or user.get_username()
