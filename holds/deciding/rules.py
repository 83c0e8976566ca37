"""Business rules on a reviewer's edits: by default a refund may be lowered, never raised or zeroed.

Which rules judge which data key is the setting ``EDIT_RULES`` (a data key mapped to rule names),
so an agent that names its amounts differently needs a setting, not a code change. A rule only
judges a value the reviewer changed: what the agent asked for is the agent's responsibility.

Numbers are read as everywhere in item data (``jsonvalues.read_number``), and the rules fail closed:
a value that is not read for certain ("1,500" is 1.5 or 1500) is refused as an edit, and an original
that is not read for certain cannot be changed, since nothing says whether the edit is above it.
"""

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from reviewqueue.jsonvalues import Reading, display, read_number, same_json

# A rule takes (key, original value, edited value) and says why the edit is refused, or None.
type Rule = Callable[[str, Any, Any], str | None]


def positive(key: str, original: Any, edited: Any) -> str | None:
    """A refund of nothing is a rejection, and should be recorded as one."""
    amount = read_number(edited)
    if amount.exact is None:
        return _not_certain(amount)
    if amount.exact <= 0:
        return "must be more than 0"
    return None


def not_above_original(key: str, original: Any, edited: Any) -> str | None:
    """A reviewer may lower what the agent asked for, never pay out more than it asked."""
    asked, amount = read_number(original), read_number(edited)
    if asked.exact is None:
        return f"can't be changed: the agent's {asked.doubt}"
    if amount.exact is None:
        return _not_certain(amount)
    if amount.exact > asked.exact:
        return f"must not be more than the {display(original)} the agent asked for"
    return None


def _not_certain(amount: Reading) -> str:
    if amount.readings:
        low, high = (f"{number.normalize():f}" for number in amount.readings)
        return f"write {high} or {low}: this can't tell thousands from decimals"
    return "a number such as 20.00 is needed"


RULES: dict[str, Rule] = {"positive": positive, "not_above_original": not_above_original}

DEFAULT_EDIT_RULES: dict[str, list[str]] = {
    "amount": ["positive", "not_above_original"],
    "refund_amount": ["positive", "not_above_original"],
    "total": ["positive", "not_above_original"],
}


def configured_rules() -> dict[str, list[Rule]]:
    """The rules for each data key from ``settings.EDIT_RULES``, refusing a rule name that does not exist."""
    configured = getattr(settings, "EDIT_RULES", DEFAULT_EDIT_RULES)
    if not isinstance(configured, Mapping):
        raise ImproperlyConfigured("EDIT_RULES must map data keys to lists of rule names")
    return {key: _rules_named(key, names) for key, names in configured.items()}


def _rules_named(key: str, names: Any) -> list[Rule]:
    if not isinstance(names, list | tuple):
        raise ImproperlyConfigured(f"EDIT_RULES[{key!r}] must be a list of rule names")
    for name in names:
        if not isinstance(name, str) or name not in RULES:
            raise ImproperlyConfigured(
                f"EDIT_RULES[{key!r}] names an unknown rule {name!r}; the rules are: {', '.join(RULES)}"
            )
    return [RULES[name] for name in names]


def check_edit(edits: Iterable[tuple[str, Any, Any]]) -> list[tuple[str, str]]:
    """Why the configured rules refuse an edit, as (key, message) pairs.

    ``edits`` holds (key, original value, edited value) for each top-level value; unchanged ones are not judged.
    """
    rules = configured_rules()
    refusals = []
    for key, original, edited in edits:
        if same_json(original, edited):
            continue
        for rule in rules.get(key, []):
            if (message := rule(key, original, edited)) and (key, message) not in refusals:
                refusals.append((key, message))
    return refusals
