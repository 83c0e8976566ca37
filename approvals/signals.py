"""What approvals tell the apps above them, which connect to these in their ``AppConfig.ready``; approvals imports
none of them.

``holds_escalated``: in the transaction that created them, with ``escalations``, a list of (``Escalation``, the
group's members who may see its hold): those members are to be told.

``stage_waiting``: in the transaction of the approval that opened them, with ``hold`` (its row locked), ``states``
(``chains.StageState``, the stages of its chain the open round now waits for), ``stages`` (how many the chain has)
and ``round_number`` (the round of approvals): the stages' people who may see the hold are to be told; with ``key``,
what the message is about instead of that round's stage (a first stage blocked as holds arrive, told once a day).
"""

from django.dispatch import Signal

holds_escalated = Signal()
stage_waiting = Signal()
