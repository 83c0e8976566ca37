from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from audit import events, role_changes
from reviewqueue import roles

ROLE_GROUPS = {"reviewer": [roles.REVIEWERS], "auditor": [roles.AUDITORS], "admin": []}


class Command(BaseCommand):
    help = "Create a user with a role (reviewer, auditor or admin), or update an existing one's."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--role", choices=sorted(ROLE_GROUPS), required=True)
        parser.add_argument("--email", default="")
        parser.add_argument("--password", help="Without it, the user must be given one with changepassword.")

    def handle(self, *args, username, role, email, password, **options):
        with transaction.atomic():
            self._create_or_update(username, role, email, password)

    def _create_or_update(self, username, role, email, password):
        user, created = get_user_model().objects.get_or_create(username=username)
        before = None if created else role_changes.user_roles(user.pk)
        if email:
            user.email = email
        if password:
            user.set_password(password)
        elif created:
            user.set_unusable_password()
        user.is_staff = user.is_superuser = role == "admin"
        user.save()
        try:
            groups = [Group.objects.get(name=name) for name in ROLE_GROUPS[role]]
        except Group.DoesNotExist:
            raise CommandError("the role groups are missing: run `manage.py migrate` first") from None
        user.groups.set(groups)
        if change := role_changes.user_change(user, before, actor=None, source="createuser"):
            events.append(change)
        self.stdout.write(f"{'created' if created else 'updated'} {role} {username}")
