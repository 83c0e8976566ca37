"""The Celery app, and the base class of the tasks that retry.

Tasks live in each app's ``tasks.py`` and only call plain functions; domain code
queues them by name through ``reviewqueue/queueing.py``.
"""

import os

from celery import Celery, Task

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewqueue.settings")

app = Celery("reviewqueue")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


class RetryingTask(Task):
    """A task whose work returns the seconds to wait before trying again, or None when it is finished.

    The work decides when to give up (a retry limit, a final answer), so Celery
    retries without a limit of its own. Acknowledged late: a task whose worker dies
    is handed to another worker rather than lost.
    """

    max_retries = None
    acks_late = True

    def __call__(self, *args, **kwargs):
        delay = super().__call__(*args, **kwargs)
        if delay is not None:
            raise self.retry(countdown=delay)
