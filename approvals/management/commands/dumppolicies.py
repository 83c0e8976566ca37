"""``manage.py dumppolicies``: every approval policy as one JSON file (``approvals.policy_files``), to stdout."""

import json

from django.core.management.base import BaseCommand

from approvals import policy_files


class Command(BaseCommand):
    help = "Write every approval policy, its stages included, as JSON (the file loadpolicies takes)."

    def handle(self, *args, **options) -> None:
        self.stdout.write(json.dumps(policy_files.dump(), indent=2, ensure_ascii=False))
