from django.apps import AppConfig


class HoldsConfig(AppConfig):
    name = "holds"
    verbose_name = "Holds"

    def ready(self) -> None:
        from approvals import subject_totals
        from holds.links import action_links
        from holds.queue import display
        from holds.related import totals
        from notifications import hold_links

        hold_links.register(action_links.links_for_many)
        hold_links.register_amounts(display.amounts)
        subject_totals.register(totals.totals, totals.totals_of_many)
