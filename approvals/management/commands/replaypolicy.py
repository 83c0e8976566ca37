import json

from django.core.management.base import BaseCommand, CommandError

from approvals import replay
from approvals.models import ApprovalPolicy
from reviewqueue import readers


class Command(BaseCommand):
    help = "What a saved approval policy would have done to the holds decided in the last 7, 30 or 90 days."

    def add_arguments(self, parser):
        parser.add_argument("name", help="The policy's name.")
        parser.add_argument("--days", default=str(replay.DEFAULT_WINDOW), help="7, 30 or 90 (default 30).")
        parser.add_argument("--json", dest="as_json", action="store_true", help="Print one JSON object of the figures.")

    def handle(self, *args, name, days, as_json: bool, **options):
        try:
            window = int(
                readers.choice(days, "--days", [str(choice) for choice in replay.WINDOWS]) or replay.DEFAULT_WINDOW
            )
        except readers.BadValue as error:
            raise CommandError(str(error)) from None
        policy = ApprovalPolicy.objects.filter(name=name).first()
        if policy is None:
            raise CommandError(f"no approval policy is named {name!r}")
        result = replay.replay(policy, window)
        if as_json:
            self.stdout.write(json.dumps(result.figures()))
            return
        self.stdout.write(f"Policy '{policy.name}', holds decided in the last {window} days:")
        self.stdout.write(f"  matched {result.matched}")
        self.stdout.write(f"  would have approved by itself {result.would_approve}")
        self.stdout.write(f"  would have needed people {result.would_need_more}")
        for words in result.wait_words:
            self.stdout.write(f"    {words}")
        self.stdout.write(f"  its default outcome would have decided {result.would_default}")
        self.stdout.write(
            f"  approved by it, though people rejected them: {', '.join(result.people_rejected) or 'none'}"
        )
        self.stdout.write(f"  approved by it, though people edited them: {', '.join(result.people_edited) or 'none'}")
