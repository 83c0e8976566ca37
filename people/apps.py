from django.apps import AppConfig


class PeopleConfig(AppConfig):
    name = "people"
    verbose_name = "People"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from django.contrib.auth.signals import user_logged_in

        from people import zones

        user_logged_in.connect(zones.remember_at_sign_in, dispatch_uid="people.remember_time_zone")
