from django.apps import AppConfig


class TeamsConfig(AppConfig):
    name = "teams"
    verbose_name = "Team scopes"
    default_auto_field = "django.db.models.BigAutoField"
