"""The web pages of holds: thin views that read the request, call the modules doing the work and render.

By page or concern: the queue (``queue``), the hold page (``hold_page``), deciding on it (``decide``), who is deciding
and who is looking (``claiming``), handing the hold over (``assignment``), what the page fetches from the platform
(``run_and_files``), bulk decisions and assignments from the queue (``bulk``). Beside them: what every page of a hold
checks first (``guards``), what the hold page shows of a hold's approvals (``approval_page``) and what every page's
header needs (``context_processors``)."""
