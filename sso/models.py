from django.conf import settings
from django.db import models


class Identity(models.Model):
    """A person at an identity provider (its issuer and their ``sub``), and the account they sign in to here.

    Accounts are found by this link, never by a name or an email address an identity
    provider sends, so that nobody is signed in to someone else's account.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identities")
    issuer = models.CharField(max_length=500)
    subject = models.CharField(max_length=255)  # OpenID Connect caps ``sub`` at 255 ASCII characters
    linked_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "identities"
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="sso_identity_one_account_per_person"),
            models.UniqueConstraint(fields=["issuer", "user"], name="sso_identity_one_person_per_account"),
        ]

    def __str__(self):
        return f"{self.subject} at {self.issuer}"
