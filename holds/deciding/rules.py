"""Business rules on a reviewer's edits: by default an amount may be lowered, never raised or zeroed.

Every amount an item carries is judged, wherever it is (``agent_numbers.amounts_in``: any key spelling,
one level of nesting, hundredths scaled), by ``AMOUNT_RULES`` unless the setting ``EDIT_RULES`` (a
data key mapped to rule names) names its key; ``EDIT_RULES`` also gives rules to other keys. A rule
only judges a value the reviewer changed: what the agent asked for is the agent's responsibility.
Whatever the setting, an edit never:

- changes a currency: a currency key ("currency", "amount_currency", any of ``CURRENCY_KEYS``), or
  the code or sign written with an amount ("900" → "900 KWD", "¥900" → "£900");
- changes what the agent acts on (an identifying key: ``*_id``, ``order*``), unless ``EDIT_RULES``
  names that key (``"order_id": []`` lets reviewers change it);
- adds anything the agent did not ask for: a key, or an element of a list, at any depth.

Numbers are read as everywhere in item data (``agent_numbers.read_number``), and the rules fail closed:
a value that is not read for certain ("1,500" is 1.5 or 1500) is refused as an edit, and an original
that is not read for certain cannot be changed, since nothing says whether the edit is above it.
"""

from collections.abc import Callable, Mapping
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from reviewqueue.agent_json import same_json
from reviewqueue.agent_numbers import Reading, amounts_in, is_currency_key, is_identifying_key, read_number
from reviewqueue.showing import display

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
AMOUNT_RULES = ["positive", "not_above_original"]  # what judges an amount whose key ``EDIT_RULES`` does not name
CURRENCY_FIXED = "the currency can't be changed: reject the item if it is wrong"
IDENTIFYING = "names what the agent acts on, so it can't be changed"

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


def check_edit(original: Any, edited: Any) -> list[tuple[Any, str]]:
    """Why an edit of an item's data from ``original`` to ``edited`` is refused, as (top-level key, message) pairs
    (key "" for data that is not an object): see the module's docstring. Unchanged values are not judged."""
    rules = configured_rules()
    refusals: list[tuple[Any, str]] = []

    def refuse(key: Any, message: str | None) -> None:
        if message and (key, message) not in refusals:
            refusals.append((key, message))

    if not (isinstance(original, dict) and isinstance(edited, dict)):
        for rule in rules.get("", []) if not same_json(original, edited) else []:
            refuse("", rule("", original, edited))
        return refusals
    before = _leaves(original)
    for path, value in _leaves(edited).items():
        if path not in before:
            refuse(path[0], f"can't add {_shown(path)}: an edit may only change what the agent asked for")
        elif not same_json(before[path], value):
            keys = [part for part in path if isinstance(part, str)]
            if any(is_currency_key(key) for key in keys):
                refuse(path[0], CURRENCY_FIXED)
            elif any(is_identifying_key(key) and key not in rules for key in keys):
                refuse(path[0], IDENTIFYING)
    asked = {amount.path: amount for amount in amounts_in(original)}
    for amount in amounts_in(edited):
        first = asked.get(amount.path)
        if first is None or same_json(first.reading.value, amount.reading.value):
            continue
        if first.currencies != amount.currencies:
            refuse(amount.top, CURRENCY_FIXED)
        for rule in rules.get(amount.key, _AMOUNT_RULES):
            refuse(amount.top, rule(amount.key, first.reading.value, amount.reading.value))
    judged = {amount.key for amount in asked.values()}
    for key, value in original.items():
        if key not in judged and key in edited and not same_json(value, edited[key]):
            for rule in rules.get(key, []):
                refuse(key, rule(key, value, edited[key]))
    return refusals


_AMOUNT_RULES = [RULES[name] for name in AMOUNT_RULES]


def _leaves(value: Any) -> dict[tuple, Any]:
    """Every value inside ``value`` that holds no other (an empty object or list counts as one), by its path of keys
    and list positions."""
    found: dict[tuple, Any] = {}
    pending: list[tuple[tuple, Any]] = [((), value)]
    while pending:
        path, current = pending.pop()
        nested = (
            current.items() if isinstance(current, dict) else enumerate(current) if isinstance(current, list) else ()
        )
        children = [(path + (key,), child) for key, child in nested]
        if children:
            pending.extend(children)
        elif path:
            found[path] = current
    return found


def _shown(path: tuple) -> str:
    """ "lines[1].amount" for ("lines", 1, "amount")."""
    return "".join(f"[{part}]" if isinstance(part, int) else f".{display(part)}" for part in path).lstrip(".")
