"""The web pages of holds: thin views that read the request, call the modules doing the work and render.

The hold page (``hold_page``), bulk decisions and assignments from the queue (``bulk``), what the hold page shows of
a hold's approvals (``approval_page``) and what every page's header needs (``context_processors``)."""
