"""Personal access tokens for the API, and the answers kept for requests sent with an Idempotency-Key."""

from django.conf import settings
from django.db import models
from django.db.models import Q


class ApiToken(models.Model):
    """A person's token for the API (``api.tokens``): only the SHA-256 of the secret is kept, never the secret."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, help_text="What the person calls it: the script or tool using it.")
    digest = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the token, hex.")
    hint = models.CharField(max_length=16, help_text="The token's first characters, to tell it apart.")
    scopes = models.JSONField(default=list, help_text="What it may do: read, decide, audit.")
    created_at = models.DateTimeField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    expires_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        indexes = [models.Index(fields=["user", "created_at"], name="api_token_user")]

    def __str__(self) -> str:
        return f"{self.name} ({self.hint}…) of {self.user}"


class IdempotentRequest(models.Model):
    """The first answer to a request sent with an Idempotency-Key, for its retries to get again (``api.idempotency``).

    Bound to the token's user and the key; ``request_digest`` names the request (method, path, body), so the same key
    with another request is refused rather than answered with the first one's answer.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    request_digest = models.CharField(max_length=64)
    created_at = models.DateTimeField()
    status = models.PositiveSmallIntegerField(null=True, help_text="Null while the first request is running.")
    content_type = models.CharField(max_length=100, blank=True)
    body = models.BinaryField(default=bytes)
    location = models.CharField(max_length=300, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="idempotency_key_once_per_user"),
            models.CheckConstraint(condition=~Q(key=""), name="idempotency_key_not_blank"),
        ]

    def __str__(self) -> str:
        return f"{self.key} of {self.user}"
