"""What approvals tell the apps above them, which connect to these in their ``AppConfig.ready``; approvals imports
none of them.

``holds_escalated``: in the transaction that created them, with ``escalations``, a list of (``Escalation``, the
group's members who may see its hold): those members are to be told.
"""

from django.dispatch import Signal

holds_escalated = Signal()
