from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from holds.mirror import platform, sync


class Command(BaseCommand):
    help = "Mirror the platform's open holds now (the same work the periodic sync task does)."

    def add_arguments(self, parser):
        parser.add_argument("--env", action="append", help="Env to sync (repeatable; default: AGENTOS_ENVS).")

    def handle(self, *args, env=None, **options):
        failed = False
        with platform.PlatformClient.from_settings() as client:
            for result in sync.sync_all(client, env or settings.AGENTOS_ENVS):
                if result.skipped:
                    self.stdout.write(f"{result.env}: skipped, another sync of it is running")
                elif result.error:
                    failed = True
                    self.stderr.write(f"{result.env}: failed: {result.error}")
                else:
                    self.stdout.write(
                        f"{result.env}: {result.open} open, {result.created} new, "
                        f"{result.updated} updated, {result.closed} closed"
                    )
        if failed:
            raise CommandError("sync failed for at least one env")
