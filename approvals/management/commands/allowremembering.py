from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from approvals.models import RememberAllowance
from audit import events
from audit.events import roles_and_settings
from reviewqueue import agent_numbers, readers
from teams import scopes


class Command(BaseCommand):
    help = (
        "Let reviewers remember their approvals of an agent's holds (an allowance, as added in the admin); "
        "the quickstart allows its sample agent's."
    )

    def add_arguments(self, parser):
        parser.add_argument("--agent", default="", help="A glob over the agent; blank: any.")
        parser.add_argument("--capability", default="", help="A glob over the capability; blank: any.")
        parser.add_argument("--env", default="", help="A glob over the env; blank: any.")
        parser.add_argument("--daily-cap", type=int, default=20, help="Holds a remembered approval approves a day.")
        parser.add_argument(
            "--daily-cap-amount", default="", help="The most their amounts may sum to a day; blank: no such cap."
        )

    def handle(self, *args, agent: str, capability: str, env: str, daily_cap: int, daily_cap_amount: str, **options):
        if daily_cap < 1:
            raise CommandError("--daily-cap must be at least 1")
        try:
            cap_amount = readers.decimal(
                daily_cap_amount, "--daily-cap-amount", agent_numbers.AMOUNT_DIGITS, agent_numbers.AMOUNT_PLACES
            )
        except readers.BadValue as error:
            raise CommandError(str(error)) from None
        if cap_amount is not None and cap_amount < 0:
            raise CommandError("--daily-cap-amount must not be below 0")
        try:
            for glob in (agent, capability, env):
                scopes.check_patterns(glob)
        except scopes.InvalidPattern as error:
            raise CommandError(str(error)) from None
        amount_words = f", their amounts at most {cap_amount} a day in all" if cap_amount is not None else ""
        with transaction.atomic():
            allowance, added = RememberAllowance.objects.update_or_create(
                agent_pattern=agent,
                capability_pattern=capability,
                env_pattern=env,
                defaults={"daily_cap_count": daily_cap, "daily_cap_amount": cap_amount},
            )
            events.append(
                roles_and_settings.setting_changed(
                    actor=None,
                    model=RememberAllowance._meta.label_lower,
                    object_id=str(allowance.pk),
                    object_repr=str(allowance),
                    action="added" if added else "changed",
                    message=f"by allowremembering: at most {daily_cap} a day{amount_words}",
                )
            )
        self.stdout.write(f"Reviewers may remember approvals of {allowance}, at most {daily_cap} a day{amount_words}.")
