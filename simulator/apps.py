"""Django app config, so `manage.py runplatform` is found."""

from django.apps import AppConfig


class SimulatorConfig(AppConfig):
    name = "simulator"
    verbose_name = "Simulated platform"
