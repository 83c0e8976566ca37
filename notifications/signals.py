"""What notifications tell the apps above them, which connect to these in their ``AppConfig.ready``; notifications
imports none of them.

``holds_changed``: once the transaction commits, with ``hold_ids``, the holds that were decided (here or on the
platform), whose decision was delivered, undone or not applied, or that expired or closed: the one place every such
change passes (``notify.resolve_for_holds``, ``notify.reopen_for_hold``), for messages showing a hold's state to be
brought up to date. Sent with ``send_robust``: a receiver's failure never undoes the change.
"""

from django.dispatch import Signal

holds_changed = Signal()
