"""Signs of rubber-stamping: how long a reviewer had a hold open before deciding it.

A decision's *look* runs from its reviewer first opening the hold's page (``HoldFirstOpened``, noted with their
presence) to the decision (``Decision.created_at``). A decision whose reviewer had not opened the page before it (a
bulk decision from the queue, say) has none, and neither has a policy's. A decision is *quick* when its look is
shorter than ``QUICK_SECONDS``.
"""

from datetime import timedelta

from django.db.models import BooleanField, ExpressionWrapper, F, OuterRef, Q, QuerySet, Subquery

from holds.models import Decision, HoldFirstOpened

QUICK_SECONDS = 5


def with_look(decisions: QuerySet[Decision]) -> QuerySet[Decision]:
    """``decisions`` with ``opened_at`` (when their reviewer first opened the hold, before deciding; None for none)
    and ``quick`` (True for a quick decision; None or False otherwise)."""
    opened = HoldFirstOpened.objects.filter(
        hold=OuterRef("hold"), user=OuterRef("reviewer"), opened_at__lte=OuterRef("created_at")
    )
    quick = Q(created_at__lt=F("opened_at") + timedelta(seconds=QUICK_SECONDS))
    return decisions.annotate(opened_at=Subquery(opened.values("opened_at")[:1])).annotate(
        quick=ExpressionWrapper(quick, output_field=BooleanField())
    )


def quick_decisions() -> QuerySet[Decision]:
    """Every quick decision."""
    return with_look(Decision.objects.all()).filter(quick=True)
