from django.apps import AppConfig


class HoldsConfig(AppConfig):
    name = "holds"
    verbose_name = "Holds"

    def ready(self) -> None:
        from holds.links import action_links
        from holds.queue import display
        from notifications import hold_links

        hold_links.register(action_links.links_for)
        hold_links.register_amounts(display.amounts)
