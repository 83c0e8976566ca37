"""The Celery app. Tasks live in ``holds/tasks.py`` and only call plain functions."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewqueue.settings")

app = Celery("reviewqueue")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
