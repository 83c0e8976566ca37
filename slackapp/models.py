"""Who presses in Slack: Slack accounts linked to Review Queue accounts, and the links that connect them."""

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models

slack_id = RegexValidator(r"\A[A-Za-z0-9_.-]{1,40}\Z", "A Slack id: letters, digits, dots, dashes, underscores.")


class SlackAccount(models.Model):
    """A Slack user of one workspace (``team_id``), linked to ``user``: the only way a press names its person.

    Made by the person themselves, signed in, through a connect link that proved the Slack user is them
    (``slackapp.linking``), or by an admin in the admin; never from an email address that happens to match. ``proof``
    says which; links made before proof was asked for have none, and decide nothing while
    ``SLACK_REQUIRE_VERIFIED_LINKS`` is on.
    """

    class Proof(models.TextChoices):
        NONE = "", "not verified"
        EMAIL = "email", "verified by email"
        ADMIN = "admin", "linked by an admin"

    team_id = models.CharField(max_length=40, validators=[slack_id])
    slack_user_id = models.CharField(max_length=40, validators=[slack_id])
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="slack_accounts")
    linked_at = models.DateTimeField()
    proof = models.CharField(max_length=8, choices=Proof.choices, blank=True, default=Proof.NONE)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["team_id", "slack_user_id"], name="slack_account_once")]

    def __str__(self) -> str:
        return f"Slack {self.slack_user_id} of {self.team_id} as {self.user}"

    @property
    def verified(self) -> bool:
        return self.proof != self.Proof.NONE


class ConnectLink(models.Model):
    """A single-use "Connect your Slack account" link, good until ``expires_at``: bound to the Slack user, their
    team and the button they pressed (``button``, its signed value; ``action``), which it presses once connected.

    Only the digest of the link's secret is kept: the table alone opens nothing.
    """

    key_digest = models.CharField(max_length=64, unique=True)
    team_id = models.CharField(max_length=40)
    slack_user_id = models.CharField(max_length=40)
    user_name = models.CharField(max_length=100, blank=True)  # as the press's payload named them: only shown
    team_domain = models.CharField(max_length=100, blank=True)
    action = models.CharField(max_length=16)
    button = models.TextField()
    response_url = models.URLField(max_length=500, blank=True)
    channel_id = models.CharField(max_length=40, blank=True)
    message_ts = models.CharField(max_length=40, blank=True)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    def __str__(self) -> str:
        return f"connect link for Slack {self.slack_user_id} of {self.team_id}"
