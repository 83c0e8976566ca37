"""Policies as code: every approval policy written as one JSON file (``dump``), and a file made the installation's
policies exactly (``load``), checked as a whole first (``read``).

The file (docs/operating.md, *Policies as code*)::

    {"policies": [{"name": "large refunds", "agent": "*", "capability": "support", "env": "",
                   "when": {"key": "amount", "op": "gt", "value": "1000"}, "currency": "",
                   "stages": [{"approvals": 1}, {"group": "Finance", "approvals": 1}]}]}

``stages`` says who must approve, in order: a stage without ``group`` is any reviewer, ``approvals`` how many
distinct people; no stage at all, a policy that decides by itself. Every other field of a policy has a key of its
own name (``escalation_group`` and groups by name, times in ISO 8601, amounts as strings). Each policy is checked by
the admin's own form (``approvals.policy_form``), so a file can say nothing the admin could not; what it cannot say
is refused with the line of the policy and the key. A load is one transaction, and each policy it adds, changes
or removes is audited as an admin's change is (``audit.admin_changes``), its actor the command.

The stages a policy can hold today are those of its people: N distinct people (``[{"approvals": N}]``), or a first
one and then N-1 of one group (``[{"approvals": 1}, {"group": G, "approvals": N-1}]``).
"""

from __future__ import annotations

import dataclasses
import json
import json.decoder
import json.scanner
from datetime import datetime
from decimal import Decimal

from django.contrib.auth.models import Group
from django.db import transaction
from django.db.models import NOT_PROVIDED

from approvals.models import ApprovalPolicy
from approvals.policy_form import CONDITION_FIELDS, PATTERN_FIELDS, ApprovalPolicyForm
from audit import admin_changes, events

PATTERNS = {"env": "env_pattern", "agent": "agent_pattern", "capability": "capability_pattern"}
GROUPS = ("escalation_group",)
# Every other field the admin's form takes, under its own name: a field added to the form is in the file too.
OWN_KEYS = {"name", *PATTERN_FIELDS, *CONDITION_FIELDS, "approvals_required", "later_approver_group"}
FIELDS = tuple(field for field in ApprovalPolicyForm.Meta.fields if field not in OWN_KEYS)
KEYS = {"name", *PATTERNS, "when", "stages", *FIELDS}
WHEN_KEYS = {"key", "op", "value"}
STAGE_KEYS = {"group", "approvals", "with_previous"}
MOST_PEOPLE = 3


class Refused(Exception):
    """The file changes nothing; each line of ``problems`` names where and why ("line 7: policy …: …")."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


# Writing


def dump() -> dict:
    """Every policy as the file says it, by name."""
    policies = ApprovalPolicy.objects.select_related("later_approver_group", "escalation_group").order_by("name")
    return {"policies": [_written(policy) for policy in policies]}


def _written(policy: ApprovalPolicy) -> dict:
    written = {"name": policy.name, **{key: getattr(policy, field) for key, field in PATTERNS.items()}}
    written["when"] = (
        {"key": policy.condition_key, "op": policy.condition_operator, "value": _number(policy.condition_threshold)}
        if policy.condition_key
        else None
    )
    written["stages"] = _stages_of(policy)
    for field in FIELDS:
        value = getattr(policy, field)
        if isinstance(value, Group):
            value = value.name
        elif isinstance(value, Decimal):
            value = _number(value)
        elif isinstance(value, datetime):
            value = value.isoformat()
        written[field] = value
    return written


def _number(value: Decimal) -> str:
    """An amount as people write it: 1000, 49.9 (the column keeps 1000.0000)."""
    return format(value.normalize(), "f")


def _stages_of(policy: ApprovalPolicy) -> list[dict]:
    people, later = policy.approvals_required, policy.later_approver_group
    if people == 0:
        return []
    if later is None or people == 1:
        return [{"approvals": people}]
    return [{"approvals": 1}, {"group": later.name, "approvals": people - 1}]


# Reading


@dataclasses.dataclass(frozen=True)
class Read:
    """One policy of a file, checked: its line and the form holding its values."""

    line: int
    name: str
    form: ApprovalPolicyForm


def read(text: str) -> list[Read]:
    """Every policy of a file, each checked by the admin's form against the policy of its name (a new one when none
    is); ``Refused`` with every problem found, by line, when any is."""
    parsed, lines = _parsed(text)
    if not isinstance(parsed, dict) or set(parsed) != {"policies"} or not isinstance(parsed["policies"], list):
        raise Refused(['line 1: the file is one object, {"policies": [...]}'])
    problems, found, names = [], [], set()
    stored = {policy.name: policy for policy in ApprovalPolicy.objects.all()}
    groups = {group.name: group.pk for group in Group.objects.all()}
    for entry in parsed["policies"]:
        line = lines.get(id(entry), 1)
        name = entry.get("name") if isinstance(entry, dict) else None
        where = (
            f"line {line}: policy {json.dumps(name, ensure_ascii=False)}" if isinstance(name, str) else f"line {line}"
        )
        try:
            data = _form_data(entry, groups)
        except ValueError as problem:
            problems.append(f"{where}: {problem}")
            continue
        if name in names:
            problems.append(f"{where}: a second policy of that name")
            continue
        names.add(name)
        form = ApprovalPolicyForm(data, instance=stored.get(name))
        if not form.is_valid():
            problems += [f"{where}: {field}: {' '.join(errors)}" for field, errors in form.errors.items()]
            continue
        found.append(Read(line, name, form))
    if problems:
        raise Refused(problems)
    return found


def _parsed(text: str) -> tuple[object, dict[int, int]]:
    """The JSON, and the line each of its objects starts on (by ``id``); ``Refused`` naming the line it breaks at."""
    lines: dict[int, int] = {}
    decoder = json.JSONDecoder()

    def parse_object(state, *args):
        value, end = json.decoder.JSONObject(state, *args)
        lines[id(value)] = text.count("\n", 0, state[1]) + 1
        return value, end

    decoder.parse_object = parse_object
    decoder.scan_once = json.scanner.py_make_scanner(decoder)
    try:
        return decoder.decode(text), lines
    except json.JSONDecodeError as error:
        raise Refused([f"line {error.lineno}: not JSON: {error.msg}"]) from None
    except RecursionError:
        raise Refused(["line 1: nested too deeply"]) from None


def _form_data(entry, groups: dict[str, int]) -> dict:
    """The admin form's data for one policy of the file; ``ValueError`` says what is wrong with it."""
    if not isinstance(entry, dict):
        raise ValueError("each policy is an object")
    if unknown := sorted(set(entry) - KEYS):
        raise ValueError(f"unknown key {json.dumps(unknown[0])}; a policy's keys are {', '.join(sorted(KEYS))}")
    if not isinstance(entry.get("name"), str) or not entry["name"].strip():
        raise ValueError('"name" is the policy\'s name, as text')
    data = {field: _text(entry.get(key, ""), key) for key, field in PATTERNS.items()}
    data["name"] = entry["name"]
    when = entry.get("when")
    if when is not None:
        if not isinstance(when, dict) or set(when) != WHEN_KEYS:
            raise ValueError('"when" is null or {"key": …, "op": …, "value": …}')
        data |= {
            "condition_key": _text(when["key"], "when.key"),
            "condition_operator": _text(when["op"], "when.op"),
            "condition_threshold": _text(when["value"], "when.value"),
        }
    data |= _people(entry.get("stages"), groups)
    for field in FIELDS:
        default = ApprovalPolicy._meta.get_field(field).default  # a key left out means what the admin starts with
        value = entry.get(field, None if default is NOT_PROVIDED else default)
        if field in GROUPS and value is not None:
            if value not in groups:
                raise ValueError(f'"{field}": no group is named {json.dumps(value, ensure_ascii=False)}')
            value = groups[value]
        if isinstance(value, bool):
            data[field] = "on" if value else ""
        elif value is not None:
            data[field] = _text(value, field)
    return data


def _people(stages, groups: dict[str, int]) -> dict:
    """The policy's people and later group, from its stages, for the shapes a policy holds (the module's last
    paragraph)."""
    if not isinstance(stages, list):
        raise ValueError('"stages" is a list of stages, [] for a policy that decides by itself')
    for stage in stages:
        if not isinstance(stage, dict) or set(stage) - STAGE_KEYS or "approvals" not in stage:
            raise ValueError('each stage is {"approvals": N}, with "group" and "with_previous" when needed')
        if not (type(stage["approvals"]) is int and 1 <= stage["approvals"] <= MOST_PEOPLE):
            raise ValueError(f"a stage needs 1 to {MOST_PEOPLE} people")
        if "group" in stage and stage["group"] not in groups:
            raise ValueError(f"a stage's group: no group is named {json.dumps(stage['group'], ensure_ascii=False)}")
        if stage.get("with_previous"):
            raise ValueError("a stage alongside the one before it needs approval chains, which this version lacks")
    people = sum(stage["approvals"] for stage in stages)
    if people > MOST_PEOPLE:
        raise ValueError(f"a policy needs {MOST_PEOPLE} people at most")
    if not stages:
        return {"approvals_required": "0"}
    first, *later = stages
    if "group" in first or len(later) > 1 or (later and first["approvals"] != 1):
        raise ValueError(
            "this version's policies take one stage of any reviewers, or one reviewer then people of one group"
        )
    group = groups[later[0]["group"]] if later and "group" in later[0] else ""
    return {"approvals_required": str(people), "later_approver_group": group}


def _text(value, key: str) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f'"{key}" is text or a number')
    return str(value)


# Loading


@dataclasses.dataclass(frozen=True)
class Change:
    """What a load does to one policy: "add", "change" (with each field moved, before and after) or "remove"."""

    action: str
    name: str
    fields: dict[str, tuple] = dataclasses.field(default_factory=dict)

    def __str__(self) -> str:
        moved = "; ".join(f"{field}: {before!r} -> {after!r}" for field, (before, after) in self.fields.items())
        return f"{self.action} {self.name}" + (f" ({moved})" if moved else "")


def load(text: str, source: str, dry_run: bool = False) -> list[Change]:
    """Make the installation's policies exactly the file's, in one transaction, each change audited (``source``
    names the file in its message); with ``dry_run`` only what would change. ``Refused`` changes nothing."""
    with transaction.atomic():
        policies = read(text)
        named = {found.name for found in policies}
        changes = [_change(found) for found in policies]
        gone = list(ApprovalPolicy.objects.exclude(name__in=named).order_by("name"))
        changes += [Change("remove", policy.name) for policy in gone]
        changes = [change for change in changes if change.action != "change" or change.fields]
        if dry_run:
            return changes
        message = f"loadpolicies {source}"
        for found in policies:
            _save(found, message)
        for policy in gone:
            deletion = admin_changes.deleted(None, policy)
            policy.delete()
            events.append(deletion)
    return changes


def _change(found: Read) -> Change:
    if found.form.instance.pk is None:
        return Change("add", found.name)
    before = admin_changes.values_of(admin_changes.POLICY_MODEL, found.form.instance.pk)
    after = admin_changes.policy_values(found.form.save(commit=False))
    moved = {field: (before[field], value) for field, value in after.items() if before[field] != value}
    return Change("change", found.name, moved)


def _save(found: Read, message: str) -> None:
    change = found.form.instance.pk is not None
    before = admin_changes.values_of(admin_changes.POLICY_MODEL, found.form.instance.pk) if change else None
    if change and before == admin_changes.policy_values(found.form.instance):
        return  # the same policy: nothing to write, nothing to audit
    policy = found.form.save()
    events.append(admin_changes.changed(None, policy, before, message, change))
