"""Policies as code: every approval policy written as one JSON file (``dump``), and a file made the installation's
policies exactly (``load``), checked as a whole first (``read``).

The file (docs/operating.md, *Policies as code*)::

    {"policies": [{"name": "large refunds", "agent": "*", "capability": "support", "env": "",
                   "when": {"key": "amount", "op": "gt", "value": "1000"}, "currency": "",
                   "stages": [{"approvals": 1}, {"group": "Finance", "approvals": 1}]}]}

``stages`` says who must approve, in order (``approvals.chains``): a stage without ``group`` is any reviewer,
``approvals`` how many distinct people, or ``"all"`` for everyone in the group, and ``with_previous: true`` runs a
stage alongside the one before it; no stage at all, a policy that decides by itself. Every other field of a policy has
a key of its own name (``escalation_group`` and groups by name, times in ISO 8601, amounts as strings). Each policy is
checked by the admin's own form (``approvals.policy_form``), so a file can say nothing the admin could not; what it
cannot say is refused with the line of the policy and the key. A load is one transaction, and each policy it adds,
changes or removes is audited as an admin's change is (``audit.admin_changes``), its actor the command.

Stages that the simple fields say (N people, or 1 then N-1 of one group, 3 at most) are kept in them, as the admin
edits them; any other chain is kept as stage rows (``models.ApprovalStage``), its people the fewest it needs.
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

from approvals import awaiting, chains
from approvals.models import MOST_PEOPLE, ApprovalPolicy, ApprovalStage
from approvals.policy_form import CONDITION_FIELDS, PATTERN_FIELDS, PEOPLE_FIELDS, SIMPLE_MOST, ApprovalPolicyForm
from audit import admin_changes, events

PATTERNS = {"env": "env_pattern", "agent": "agent_pattern", "capability": "capability_pattern"}
GROUPS = ("escalation_group",)
# Every other field the admin's form takes, under its own name: a field added to the form is in the file too.
OWN_KEYS = {"name", *PATTERN_FIELDS, *CONDITION_FIELDS, *PEOPLE_FIELDS}
FIELDS = tuple(field for field in ApprovalPolicyForm.Meta.fields if field not in OWN_KEYS)
KEYS = {"name", *PATTERNS, "when", "stages", *FIELDS}
WHEN_KEYS = {"key", "op", "value"}
STAGE_KEYS = {"group", "approvals", "with_previous"}
EVERYONE = "all"


class Refused(Exception):
    """The file changes nothing; each line of ``problems`` names where and why ("line 7: policy …: …")."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(problems))
        self.problems = problems


# Writing


def dump() -> dict:
    """Every policy as the file says it, by name."""
    policies = (
        ApprovalPolicy.objects.select_related("later_approver_group", "escalation_group")
        .prefetch_related("stages__group")
        .order_by("name")
    )
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
    """The policy's chain as the file writes it (``chains.stages_of``: its stage rows, or its simple fields')."""
    written = []
    for stage in chains.stages_of(policy):
        entry = {"group": stage.group.name} if stage.group is not None else {}
        entry["approvals"] = EVERYONE if stage.approvals is None else stage.approvals
        if stage.with_previous:
            entry["with_previous"] = True
        written.append(entry)
    return written


# Reading


@dataclasses.dataclass(frozen=True)
class Read:
    """One policy of a file, checked: its line and the form holding its values."""

    line: int
    name: str
    form: ApprovalPolicyForm
    stages: list[dict]  # the stage rows to keep (group pk, approvals, with_previous); [] for the simple fields


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
            data, stages = _form_data(entry, groups, lines)
        except ValueError as problem:
            problems.append(f"{where}: {problem}")
            continue
        if name in names:
            problems.append(f"{where}: a second policy of that name")
            continue
        names.add(name)
        form = ApprovalPolicyForm(data, instance=stored.get(name), chained=bool(stages))
        if not form.is_valid():
            problems += [f"{where}: {field}: {' '.join(errors)}" for field, errors in form.errors.items()]
            continue
        found.append(Read(line, name, form, stages))
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


def _form_data(entry, groups: dict[str, int], lines: dict[int, int]) -> tuple[dict, list[dict]]:
    """The admin form's data for one policy of the file, and its stage rows ([] when the simple fields say them);
    ``ValueError`` says what is wrong with it."""
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
    people, stages = _people(entry.get("stages"), groups, lines)
    data |= people
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
    return data, stages


def _people(stages, groups: dict[str, int], lines: dict[int, int]) -> tuple[dict, list[dict]]:
    """The policy's people and later group, and its stage rows for a chain the simple fields cannot say (the
    module's docstring); a stage's problem names the stage and its line."""
    if not isinstance(stages, list):
        raise ValueError('"stages" is a list of stages, [] for a policy that decides by itself')
    rows = []
    for position, stage in enumerate(stages, start=1):
        try:
            rows.append(_stage(stage, groups, first=position == 1))
        except ValueError as problem:
            line = f", line {lines[id(stage)]}" if id(stage) in lines else ""
            raise ValueError(f"stage {position}{line}: {problem}") from None
    if not rows:
        return {"approvals_required": "0"}, []
    fewest = sum(row["approvals"] or 1 for row in rows)
    if fewest > MOST_PEOPLE:
        raise ValueError(f"a policy needs {MOST_PEOPLE} people at most, all stages together")
    first, *later = rows
    simple = (
        fewest <= SIMPLE_MOST
        and first["group"] is None
        and all(row["approvals"] is not None and not row["with_previous"] for row in rows)
        and (not later or (len(later) == 1 and first["approvals"] == 1 and later[0]["group"] is not None))
    )
    if simple:
        return {"approvals_required": str(fewest), "later_approver_group": later[0]["group"] if later else ""}, []
    return {"approvals_required": str(fewest), "later_approver_group": ""}, rows


def _stage(stage, groups: dict[str, int], first: bool) -> dict:
    """One stage of the file as a stage row's values; ``ValueError`` for a stage without people or an unknown group."""
    if not isinstance(stage, dict) or set(stage) - STAGE_KEYS or "approvals" not in stage:
        raise ValueError('each stage is {"approvals": N or "all"}, with "group" and "with_previous" when needed')
    approvals, group = stage["approvals"], stage.get("group")
    if group is not None and not isinstance(group, str):
        raise ValueError("a stage's \"group\" is a group's name")
    if group is not None and group not in groups:
        raise ValueError(f"a stage's group: no group is named {json.dumps(group, ensure_ascii=False)}")
    if approvals == EVERYONE:
        if group is None:
            raise ValueError('a stage of "all" names the group whose every member approves')
        approvals = None
    elif not (type(approvals) is int and 1 <= approvals <= MOST_PEOPLE):
        raise ValueError(f'a stage needs 1 to {MOST_PEOPLE} people, or "all" of its group')
    if not isinstance(stage.get("with_previous", False), bool):
        raise ValueError('"with_previous" is true or false')
    if first and stage.get("with_previous"):
        raise ValueError("the first stage has no stage before it to run alongside")
    return {
        "group": groups[group] if group is not None else None,
        "approvals": approvals,
        "with_previous": stage.get("with_previous", False),
    }


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


def load(text: str, source: str, dry_run: bool = False) -> tuple[list[Change], list[str]]:
    """Make the installation's policies exactly the file's, in one transaction, each change audited (``source``
    names the file in its message); with ``dry_run`` only what would change. ``Refused`` changes nothing. Returns
    the changes, and warnings: the stages whose group has no active reviewer yet (accepted, as a new installation
    loads its policies before its people sign in, but their holds will wait there)."""
    with transaction.atomic():
        policies = read(text)
        warnings = _empty_stages(policies)
        named = {found.name for found in policies}
        changes = [_change(found) for found in policies]
        gone = list(ApprovalPolicy.objects.exclude(name__in=named).order_by("name"))
        changes += [Change("remove", policy.name) for policy in gone]
        changes = [change for change in changes if change.action != "change" or change.fields]
        if dry_run:
            return changes, warnings
        # Every policy's row before the first audit, in one order: the audit chain's head comes last.
        list(ApprovalPolicy.objects.select_for_update(no_key=True).order_by("pk").values_list("pk", flat=True))
        message = f"loadpolicies {source}"
        for found in policies:
            _save(found, message)
        for policy in gone:
            deletion = admin_changes.deleted(None, policy)
            policy.delete()
            events.append(deletion)
    return changes, warnings


def _empty_stages(policies: list[Read]) -> list[str]:
    groups = {row["group"] for found in policies for row in found.stages if row["group"] is not None}
    staffed = {group for group in groups if awaiting.staffed(group)}
    return [
        f'policy "{found.name}": stage {position} asks {name}, which has no active reviewer yet: its holds will wait'
        for found in policies
        for position, row in enumerate(found.stages, start=1)
        if row["group"] is not None and row["group"] not in staffed
        for name in Group.objects.filter(pk=row["group"]).values_list("name", flat=True)
    ]


def _change(found: Read) -> Change:
    if found.form.instance.pk is None:
        return Change("add", found.name)
    before = admin_changes.values_of(admin_changes.POLICY_MODEL, found.form.instance.pk)
    after = admin_changes.policy_values(found.form.save(commit=False), _stage_values(found))
    moved = {field: (before[field], value) for field, value in after.items() if before[field] != value}
    return Change("change", found.name, moved)


def _stage_values(found: Read) -> list:
    """The file's stage rows as the audit records a policy's (``admin_changes.stage_values``)."""
    names = dict(Group.objects.filter(pk__in=[row["group"] for row in found.stages]).values_list("pk", "name"))
    return [
        admin_changes.stage_value(names.get(row["group"]), row["approvals"], row["with_previous"])
        for row in found.stages
    ]


def _save(found: Read, message: str) -> None:
    change = found.form.instance.pk is not None
    before = admin_changes.values_of(admin_changes.POLICY_MODEL, found.form.instance.pk) if change else None
    if change and before == admin_changes.policy_values(found.form.instance, _stage_values(found)):
        return  # the same policy: nothing to write, nothing to audit
    policy = found.form.save()
    ApprovalStage.objects.filter(policy=policy).delete()
    ApprovalStage.objects.bulk_create(
        ApprovalStage(
            policy=policy,
            position=position,
            group_id=row["group"],
            approvals=row["approvals"],
            with_previous=row["with_previous"],
        )
        for position, row in enumerate(found.stages, start=1)
    )
    events.append(admin_changes.changed(None, policy, before, message, change))
