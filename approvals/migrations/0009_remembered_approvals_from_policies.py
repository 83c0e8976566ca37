"""Each reviewer's remembered approval, kept until now as an approval policy with ``remembered_by`` set, becomes a
``RememberedApproval`` of the same pk (so the audit's events of it name it still), with the decisions it made, and
the policy goes; backwards, each becomes such a policy again, of the same pk unless a policy took it since.

Nothing it could approve is widened: one an admin disabled, whose globs an admin changed from the hold's values, or
without its amounts (none the app made) matched no hold, and is moved ended. The policy fields a remembered approval
never set (a wait, a default outcome, a target, groups) are not moved: it approves at once, with none of them.
"""

import re
import uuid

from django.core.management.color import no_style
from django.db import migrations
from django.utils import timezone

GLOB_SPECIAL = re.compile(r"([*?\[])")
BRACKETED = re.compile(r"\[([*?\[])\]")


def literal(value: str) -> str:
    """As ``approvals.alike.literal``, as it was when this migration was written."""
    return GLOB_SPECIAL.sub(r"[\1]", value)


def from_literal(pattern: str) -> str:
    return BRACKETED.sub(r"\1", pattern)


def reset_sequence(schema_editor, model) -> None:
    """Rows were written with their pks: the next one made takes the pk after the largest."""
    with schema_editor.connection.cursor() as cursor:
        for statement in schema_editor.connection.ops.sequence_reset_sql(no_style(), [model]):
            cursor.execute(statement)


def from_policies(apps, schema_editor):
    ApprovalPolicy = apps.get_model("approvals", "ApprovalPolicy")
    RememberedApproval = apps.get_model("approvals", "RememberedApproval")
    now = timezone.now()
    remembered = ApprovalPolicy.objects.filter(remembered_by__isnull=False).order_by("pk")
    for policy in remembered:
        if policy.remembered_from_id is None:
            raise RuntimeError(
                f"approval policy {policy.pk} “{policy.name}” is a remembered approval without its hold, which the app "
                "never made: set its remembered_from, or clear its remembered_by, and migrate again"
            )
        patterns = [policy.env_pattern, policy.agent_pattern, policy.capability_pattern]
        env, agent, capability = (from_literal(pattern) for pattern in patterns)
        ended_at, reason = policy.ended_at, policy.ended_reason
        if ended_at is None:
            if not policy.enabled:
                ended_at, reason = now, reason or "disabled in the admin"
            elif [literal(value) for value in (env, agent, capability)] != patterns:
                ended_at, reason = now, "its globs were changed in the admin"
            elif policy.remembered_amount is None or policy.remembered_total is None:
                ended_at, reason = now, "made without its amounts"
        RememberedApproval.objects.create(
            pk=policy.pk,
            owner_id=policy.remembered_by_id,
            source_hold_id=policy.remembered_from_id,
            env=env,
            agent=agent,
            capability=capability,
            amount_at_most=policy.remembered_amount if policy.remembered_amount is not None else 0,
            total_at_most=policy.remembered_total if policy.remembered_total is not None else 0,
            currency=policy.remembered_currency,
            daily_cap_count=policy.daily_cap_count,
            daily_cap_amount=policy.daily_cap_amount,
            valid_until=policy.valid_until,
            ended_at=ended_at,
            ended_reason=reason[:200],
        )
        policy.decisions.update(policy=None, remembered_id=policy.pk)
        # No approval is given and no hold escalates under a policy needing 0 people: they keep its name, should any.
        policy.approvals.update(policy=None)
        policy.escalations.update(policy=None)
    remembered.delete()
    reset_sequence(schema_editor, RememberedApproval)


def to_policies(apps, schema_editor):
    ApprovalPolicy = apps.get_model("approvals", "ApprovalPolicy")
    RememberedApproval = apps.get_model("approvals", "RememberedApproval")
    PolicyDecision = apps.get_model("approvals", "PolicyDecision")
    taken = set(ApprovalPolicy.objects.values_list("pk", flat=True))
    every = list(RememberedApproval.objects.select_related("owner").order_by("pk"))
    # Those keeping their pks first, so that the sequence, reset after them, gives the others pks nobody has.
    for keeps_pk in (True, False):
        for remembered in every:
            if (remembered.pk not in taken) != keeps_pk:
                continue
            policy = ApprovalPolicy.objects.create(
                pk=remembered.pk if keeps_pk else None,
                name=f"remembered by {remembered.owner.username[:60]} {uuid.uuid4().hex[:8]}",
                env_pattern=literal(remembered.env),
                agent_pattern=literal(remembered.agent),
                capability_pattern=literal(remembered.capability),
                approvals_required=0,
                auto_wait_minutes=0,
                daily_cap_count=remembered.daily_cap_count,
                daily_cap_amount=remembered.daily_cap_amount,
                valid_until=remembered.valid_until,
                enabled=remembered.ended_at is None,
                remembered_by_id=remembered.owner_id,
                remembered_from_id=remembered.source_hold_id,
                remembered_amount=remembered.amount_at_most,
                remembered_total=remembered.total_at_most,
                remembered_currency=remembered.currency,
                ended_at=remembered.ended_at,
                ended_reason=remembered.ended_reason,
            )
            PolicyDecision.objects.filter(remembered_id=remembered.pk).update(policy=policy, remembered=None)
        if keeps_pk:
            reset_sequence(schema_editor, ApprovalPolicy)
    RememberedApproval.objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [
        ("approvals", "0008_remembered_approval"),
    ]

    operations = [migrations.RunPython(from_policies, to_policies)]
