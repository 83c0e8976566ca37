from django.apps import AppConfig


class SlackappConfig(AppConfig):
    name = "slackapp"
    verbose_name = "Slack app"

    def ready(self) -> None:
        from notifications import hold_links
        from notifications.signals import holds_changed
        from slackapp import messages

        hold_links.register_buttons(messages.buttons_for)
        holds_changed.connect(messages.queue_refresh, dispatch_uid="slackapp.refresh")
