"""Verifying the audit hash chain on a schedule and keeping the outcome for /metrics and the alert rules."""

from __future__ import annotations

import logging
import time

from django.utils import timezone

from audit import chain
from operations.models import AuditVerification

logger = logging.getLogger(__name__)


def verify_and_record() -> AuditVerification:
    """Walk the whole chain (``audit.chain.verify``) and store the outcome as the one verification row."""
    started = time.monotonic()
    result = chain.verify()
    outcome = AuditVerification(
        pk=1,
        checked_at=timezone.now(),
        intact=result.broken is None,
        events_checked=result.checked,
        seconds=time.monotonic() - started,
        problem=str(result.broken or ""),
    )
    outcome.save()
    if result.broken:
        logger.error("audit chain verification failed: %s", result.broken)
    return outcome


def latest() -> AuditVerification | None:
    return AuditVerification.objects.filter(pk=1).first()
