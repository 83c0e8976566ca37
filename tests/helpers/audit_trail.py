"""How the audit events' tests read the trail: the events of a kind, in order, or the one event of a kind."""

from audit.models import AuditEvent


def trail(kind: str, **filters) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(kind=kind, **filters).order_by("sequence"))


def only(kind: str, **filters) -> AuditEvent:
    found = trail(kind, **filters)
    assert len(found) == 1, f"expected one {kind} event, found {len(found)}"
    return found[0]
