"""Agent-written JSON made storable: PostgreSQL's text and jsonb refuse NUL and lone surrogates.

Such characters carry no meaning a reviewer needs, but one of them in one hold
would otherwise fail the whole transaction it is written in; they become U+FFFD.
"""

import re

UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")


def storable(value):
    """``value`` with every string in it (dict keys too) made storable."""
    if isinstance(value, str):
        return UNSTORABLE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {storable(key): storable(nested) for key, nested in value.items()}
    if isinstance(value, list):
        return [storable(nested) for nested in value]
    return value
