from django.core.management.base import BaseCommand
from oidc_provider.models import Client, ResponseType


class Command(BaseCommand):
    help = "Register (or re-register) a confidential client of the code flow, signing its ID tokens with RS256."

    def add_arguments(self, parser):
        parser.add_argument("client_id")
        parser.add_argument("--secret", required=True)
        parser.add_argument("--redirect-uri", required=True)

    def handle(self, *args, client_id, secret, redirect_uri, **options):
        client, _ = Client.objects.update_or_create(
            client_id=client_id,
            defaults={
                "name": "Review Queue",
                "client_type": "confidential",
                "client_secret": secret,
                "jwt_alg": "RS256",
                "require_consent": True,
                "reuse_consent": False,
                "_redirect_uris": redirect_uri,
            },
        )
        client.response_types.set([ResponseType.objects.get(value="code")])
