"""Per approval policy: decisions that took several approvals, how long the approvals took, and how often
a later approver overturned the earlier ones' decision.

A decision counts in the period it was made, as in ``audit.stats``, when approvals of a
policy asking for two or more link to it (``Approval.decision``: the round it ended); it
counts under that round's policy name. Each decision is read with its own *round chain*:
the linked round and the rounds just before it that no decision links and that approved
the hold as it was then (the same ``payload_digest``), so a round ended by an earlier
decision (one the platform refused, say) or by the platform changing the hold is not part
of it. Then:

- the decision was *approved* when its reviewer gave the linked round's last approval and
  the round reached its count;
- it was *changed* by a later approver when a round of its chain after the first began
  with someone changing the open round's decision (that restart starts the round);
- it was *rejected* by a later approver when it was not approved and its reviewer gave
  none of the chain's approvals (an earlier approver taking theirs back with a reject is
  neither);
- its *time to approve*, for approved decisions only, runs from the chain's first
  approval to the decision.

One query reads the approvals of the holds concerned; the chains are worked out here.
"""

from __future__ import annotations

import dataclasses
import statistics
from datetime import datetime
from itertools import groupby

from approvals.models import Approval, RememberedApproval
from audit import approvers
from audit.models import AuditEvent, EventKind
from audit.stats import Period


@dataclasses.dataclass
class PolicyRow:
    """One policy's figures over a period: its decisions, how many a later approver changed or rejected, and the
    seconds from first approval to decision of each approved one."""

    policy: str
    decisions: int = 0
    changed: int = 0
    rejected: int = 0
    seconds: list[float] = dataclasses.field(default_factory=list)

    @property
    def median_seconds(self) -> float | None:
        return statistics.median(self.seconds) if self.seconds else None

    @property
    def changed_share(self) -> float | None:
        return self.changed / self.decisions if self.decisions else None

    @property
    def rejected_share(self) -> float | None:
        return self.rejected / self.decisions if self.decisions else None


@dataclasses.dataclass(frozen=True)
class _Given:
    """One approval as read here, with the decision it is linked to (if any)."""

    round: int
    position: int
    approvals_required: int
    approver_id: int
    at: datetime
    payload_digest: str
    policy: str
    decision_id: int | None
    reviewer: int | None
    decided_at: datetime | None


def per_policy(period: Period) -> list[PolicyRow]:
    """One row per policy (by its name when the approvals were given), most decisions first; one query."""
    start, end = period.bounds
    decided = Approval.objects.filter(
        decision__created_at__gte=start, decision__created_at__lt=end, approvals_required__gt=1
    ).values("hold")
    given = (
        Approval.objects.filter(hold__in=decided)
        .order_by("hold", "round", "position")
        .values_list(
            "hold",
            "round",
            "position",
            "approvals_required",
            "approver",
            "created_at",
            "payload_digest",
            "policy_name",
            "decision",
            "decision__reviewer",
            "decision__created_at",
        )
    )
    rows: dict[str, PolicyRow] = {}
    for _, of_hold in groupby(given.iterator(chunk_size=5000), key=lambda values: values[0]):
        approvals = (_Given(*values[1:]) for values in of_hold)
        rounds = [list(of_round) for _, of_round in groupby(approvals, key=lambda approval: approval.round)]
        for index, linked in enumerate(rounds):
            last = linked[-1]
            if last.decision_id is None or last.approvals_required < 2 or not start <= last.decided_at < end:
                continue
            _count(rows.setdefault(last.policy, PolicyRow(last.policy)), approvers.round_chain(rounds, index))
    return sorted(rows.values(), key=lambda row: (-row.decisions, row.policy))


def _count(row: PolicyRow, chain: list[list[_Given]]) -> None:
    linked = chain[-1]
    last = linked[-1]
    row.decisions += 1
    row.changed += len(chain) > 1  # each round of the chain after the first began with a restart
    if approvers.approved_by_reviewer(linked, last.reviewer):
        row.seconds.append((last.decided_at - chain[0][0].at).total_seconds())
    elif all(approval.approver_id != last.reviewer for approvals in chain for approval in approvals):
        row.rejected += 1


@dataclasses.dataclass
class StageRow:
    """One stage of a policy's chain over a period: how often it completed, and the seconds each waited since it
    opened (the audit's *approval stage completed*)."""

    policy: str
    stage: int
    who: str
    seconds: list[float] = dataclasses.field(default_factory=list)

    @property
    def completed(self) -> int:
        return len(self.seconds)

    @property
    def median_seconds(self) -> float | None:
        return statistics.median(self.seconds) if self.seconds else None


def per_stage(period: Period) -> list[StageRow]:
    """One row per stage of each chain that completed in the period, by policy then stage; one query."""
    start, end = period.bounds
    completed = AuditEvent.objects.filter(kind=EventKind.STAGE_COMPLETED, at__gte=start, at__lt=end)
    rows: dict[tuple, StageRow] = {}
    for payload in completed.values_list("payload", flat=True).iterator(chunk_size=5000):
        try:
            key = (str(payload["policy"]), int(payload["stage"]), str(payload["who"]))
            seconds = float(payload["waited_seconds"])
        except (KeyError, TypeError, ValueError):
            continue  # written before its builder wrote these keys
        rows.setdefault(key, StageRow(*key)).seconds.append(seconds)
    return [rows[key] for key in sorted(rows)]


def remembered_approvals(limit: int = 200) -> list[RememberedApproval]:
    """Everyone's remembered approvals (``approvals.remembering``), newest first, each with ``matched``: the holds it
    approved so far. The statistics page lists them with who made them, whatever the period."""
    return list(RememberedApproval.objects.select_related("owner").with_matched()[:limit])
