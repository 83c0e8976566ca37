"""``manage.py makevapidkeys``: print a new VAPID key pair for Web Push, as the two settings that take it."""

from django.core.management.base import BaseCommand
from py_vapid import Vapid02, b64urlencode

from notifications import push


class Command(BaseCommand):
    help = "Print a new VAPID key pair for Web Push, as WEBPUSH_VAPID_PUBLIC_KEY and WEBPUSH_VAPID_PRIVATE_KEY."
    requires_system_checks = []  # the keys it prints are what the checks would ask for

    def handle(self, *args, **options) -> None:
        key = Vapid02()
        key.generate_keys()
        private = key.private_key.private_numbers().private_value.to_bytes(32, "big")
        self.stdout.write(f"WEBPUSH_VAPID_PUBLIC_KEY={push.public_key_of(key)}")
        self.stdout.write(f"WEBPUSH_VAPID_PRIVATE_KEY={b64urlencode(private)}")
