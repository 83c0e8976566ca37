from django.core.management.base import BaseCommand, CommandError

from audit import chain


class Command(BaseCommand):
    help = "Check the audit trail's hash chain; name the first event that breaks it and exit non-zero."

    def handle(self, *args, **options):
        result = chain.verify()
        if result.broken:
            raise CommandError(f"{result.broken} ({result.checked} events before it are intact)")
        last = f"#{result.last_sequence} {result.last_hash}"
        self.stdout.write(f"audit chain intact: {result.checked} events, last {last}")
