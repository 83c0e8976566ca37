"""What holds tell the apps above them, which connect to these in their ``AppConfig.ready``; holds imports none of them.

``sync_finished``: after each env's sync, whether it succeeded or failed, with ``env``, ``seconds`` (wall time) and
``failed``. Sent with ``send``, so a receiver's exception reaches sync, which logs a ``DatabaseError`` and goes on.
"""

from django.dispatch import Signal

sync_finished = Signal()
