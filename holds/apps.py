from django.apps import AppConfig


class HoldsConfig(AppConfig):
    name = "holds"
    verbose_name = "Holds"
