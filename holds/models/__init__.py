"""The local mirror of the platform's holds, reviewers' claims and decisions, and the sync state: every model of
the app, gathered here where Django and the other modules look for them."""

from holds.models.decisions import ACTION_WORDS, ActionLinkUse, Decision, DecisionChannel, DecisionItem, DeliveryAttempt
from holds.models.handover import Assignment, Note
from holds.models.mirror import FilterValue, Hold, HoldFirstOpened, HoldItem, HoldViewer
from holds.models.related import HoldSubject, SharedHold, SubjectKeys, SubjectRereading
from holds.models.sync_state import ListedInWalk, PeriodicRun, QuarantinedHold, SyncState

__all__ = [
    "Decision",
    "DecisionChannel",
    "ActionLinkUse",
    "DecisionItem",
    "DeliveryAttempt",
    "ACTION_WORDS",
    "Hold",
    "FilterValue",
    "HoldItem",
    "HoldSubject",
    "SharedHold",
    "SubjectKeys",
    "SubjectRereading",
    "HoldViewer",
    "HoldFirstOpened",
    "SyncState",
    "ListedInWalk",
    "QuarantinedHold",
    "PeriodicRun",
    "Assignment",
    "Note",
]
