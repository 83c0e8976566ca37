from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from api import tokens
from reviewqueue import readers


class Command(BaseCommand):
    help = (
        "Create an API token for a user and print it, alone on the last line (it is shown only here); "
        "or, with --revoke TOKEN, revoke one of theirs."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="command line")
        parser.add_argument("--days", default=str(tokens.DEFAULT_DAYS), help=f"1 to {tokens.MAX_DAYS}")
        parser.add_argument("--scopes", default=tokens.READ, help=f"comma-separated: {', '.join(tokens.SCOPES)}")
        parser.add_argument("--revoke", metavar="TOKEN", help="revoke this token of the user instead")

    def handle(self, *args, username, name, days, scopes, revoke, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no user {username!r}")
        if revoke:
            token = tokens.by_secret(revoke.strip())
            if token is None or token.user_id != user.pk:
                raise CommandError(f"{username} has no such token")
            if not tokens.revoke(token):
                raise CommandError(f"the token “{token.name}” was revoked already")
            self.stdout.write(f"revoked the token “{token.name}” ({token.hint}…) of {username}")
            return
        try:
            token, secret = tokens.create(
                user, tokens.read_name(name), tokens.read_scopes(scopes), tokens.read_days(days)
            )
        except readers.BadValue as bad:
            raise CommandError(str(bad)) from None
        except tokens.TooMany as refused:
            raise CommandError(refused.message) from None
        self.stdout.write(
            f"created the token “{token.name}” of {username}: {', '.join(token.scopes)}, "
            f"expires {token.expires_at:%Y-%m-%d %H:%M} UTC"
        )
        self.stdout.write(secret)
