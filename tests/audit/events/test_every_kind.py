"""Every kind of audit event has a test in ``tests/audit/events/`` that drives the code path writing it."""

import pytest

from audit.models import RETIRED_KINDS, EventKind

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("immediate_delivery")]


def test_every_kind_has_a_test_here():
    """A new kind of event needs a test that drives its code path (this list is checked against EventKind)."""
    no_longer_written = RETIRED_KINDS
    covered = {
        EventKind.HOLD_SEEN,
        EventKind.CLAIMED,
        EventKind.RELEASED,
        EventKind.TAKEN_OVER,
        EventKind.DECISION_SUBMITTED,
        EventKind.HELD_FOR_PEOPLE,
        EventKind.APPROVAL_GIVEN,
        EventKind.STAGE_COMPLETED,
        EventKind.WITHDRAWN,
        EventKind.DELIVERY_ATTEMPT,
        EventKind.APPLIED,
        EventKind.NOT_APPLIED,
        EventKind.EXPIRED,
        EventKind.DECIDED_ELSEWHERE,
        EventKind.NOTIFICATION_SENT,
        EventKind.NOTIFICATION_FAILED,
        EventKind.SIGNED_IN,
        EventKind.LOCKED_OUT,
        EventKind.ROLE_CHANGED,
        EventKind.SETTING_CHANGED,
        EventKind.ESCALATED,
        EventKind.APPROVAL_WITHDRAWN,
        EventKind.ASSIGNED,
        EventKind.REASSIGNED,
        EventKind.UNASSIGNED,
        EventKind.NOTE_ADDED,
        EventKind.TOKEN_CREATED,
        EventKind.TOKEN_FIRST_USED,
        EventKind.TOKEN_REVOKED,
    }
    assert covered | no_longer_written == set(EventKind)
