"""How holds tell the apps above them that a hold was handed to someone: signals sent in the change's transaction.

``holds`` sits below ``notifications`` and must not import it; ``notifications`` connects its
receivers in its ``AppConfig.ready``. Each signal is sent inside the transaction that stores
the change, so the notifications a receiver creates commit or roll back with it.
"""

from django.dispatch import Signal

# A hold was assigned or reassigned: ``assignment`` (an ``Assignment``, its ``user`` or ``group`` set), ``by`` (who).
assigned = Signal()
# A hold's assignment ended without a new one: ``hold``, ``by``.
unassigned = Signal()
# A note mentioned people who may see its hold: ``note`` (a ``Note``), ``users`` (those to tell, its author left out).
mentioned = Signal()
