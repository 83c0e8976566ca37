"""Agent-written JSON: made storable in PostgreSQL, and walked for the values inside it."""

from reviewqueue.readers import UNSTORABLE

__all__ = ["UNSTORABLE", "scalars", "storable"]

EXACT_FLOAT_LIMIT = 1e16


def storable(value):
    """``value`` as PostgreSQL's text and jsonb will store it and give it back.

    They refuse NUL and lone surrogates, which carry no meaning a reviewer needs
    but would fail the whole transaction: those become U+FFFD (dict keys too).
    jsonb also prints a float such as 1e16 as the integer 10000000000000000 and
    -0.0 as 0.0, so those are normalised the same way, and a hash made over the
    value before storing still matches what is read back.
    """
    if isinstance(value, str):
        return UNSTORABLE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {storable(key): storable(nested) for key, nested in value.items()}
    if isinstance(value, list):
        return [storable(nested) for nested in value]
    if isinstance(value, float):
        if value == 0:
            return 0.0
        if abs(value) >= EXACT_FLOAT_LIMIT and value.is_integer():
            return int(value)
    return value


def scalars(value):
    """Every number, string, boolean and null inside ``value``, depth first."""
    if isinstance(value, dict):
        for nested in value.values():
            yield from scalars(nested)
    elif isinstance(value, list):
        for nested in value:
            yield from scalars(nested)
    else:
        yield value
