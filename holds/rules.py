"""Business rules on a reviewer's edits: by default a refund may be lowered, never raised or zeroed.

Which rules judge which data key is the setting ``EDIT_RULES`` (a data key mapped to rule names),
so an agent that names its amounts differently needs a setting, not a code change. A rule only
judges a value the reviewer changed: what the agent asked for is the agent's responsibility.
"""

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from reviewqueue.jsonvalues import as_decimal, display, same_json

# A rule takes (key, original value, edited value) and says why the edit is refused, or None.
type Rule = Callable[[str, Any, Any], str | None]


def positive(key: str, original: Any, edited: Any) -> str | None:
    """A refund of nothing is a rejection, and should be recorded as one."""
    amount = as_decimal(edited)
    if amount is not None and amount <= 0:
        return "must be more than 0"
    return None


def not_above_original(key: str, original: Any, edited: Any) -> str | None:
    """A reviewer may lower what the agent asked for, never pay out more than it asked."""
    asked, amount = as_decimal(original), as_decimal(edited)
    if asked is not None and amount is not None and amount > asked:
        return f"must not be more than the {display(original)} the agent asked for"
    return None


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
            if message := rule(key, original, edited):
                refusals.append((key, message))
    return refusals
