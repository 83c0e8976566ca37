"""``manage.py loadpolicies FILE [--dry-run]``: make the installation's approval policies exactly the file's."""

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from approvals import policy_files


class Command(BaseCommand):
    help = (
        "Make the approval policies exactly those of a JSON file (as dumppolicies writes it): added, changed and "
        "removed in one transaction, each audited. A file with any problem changes nothing."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", help="The policies' JSON file; - for standard input.")
        parser.add_argument("--dry-run", action="store_true", help="Print what would change, and change nothing.")

    def handle(self, *args, file: str, dry_run: bool, **options) -> None:
        try:
            text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeError) as error:
            raise CommandError(f"cannot read {file}: {error}") from None
        try:
            changes, warnings = policy_files.load(text, file, dry_run=dry_run)
        except policy_files.Refused as refused:
            raise CommandError(f"{file} changes nothing:\n" + "\n".join(refused.problems)) from None
        for change in changes:
            self.stdout.write(str(change))
        for warning in warnings:
            self.stderr.write(f"warning: {warning}")
        done = "would change" if dry_run else "changed"
        self.stdout.write(f"{len(changes)} {'policy' if len(changes) == 1 else 'policies'} {done}")
