"""Approval policies (how many people must approve which holds, in which stages), the approvals given, and what
policies did by themselves, by concern."""

from approvals.models.approvals import Approval, AwaitedStage
from approvals.models.decided import Escalation, PolicyDecision
from approvals.models.policies import MOST_PEOPLE, ApprovalPolicy, ApprovalStage
from approvals.models.remembered import RememberAllowance, RememberedApproval, RememberedApprovals

__all__ = [
    "MOST_PEOPLE",
    "Approval",
    "ApprovalPolicy",
    "ApprovalStage",
    "AwaitedStage",
    "Escalation",
    "PolicyDecision",
    "RememberAllowance",
    "RememberedApproval",
    "RememberedApprovals",
]
