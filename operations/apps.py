from django.apps import AppConfig


class OperationsConfig(AppConfig):
    name = "operations"
    verbose_name = "Operations"

    def ready(self) -> None:
        from operations import signals  # noqa: F401  (connects the Celery task signals, the counts of syncs and sweep failures)
