from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    name = "approvals"
    verbose_name = "Approval policies"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth.models import Group
        from django.db.models.signals import post_delete, post_save

        from approvals import policies
        from approvals.models import ApprovalPolicy, RememberedApproval

        # A policy's groups are read with it: a renamed group changes what the pages say.
        for model in (ApprovalPolicy, RememberedApproval, Group):
            post_save.connect(policies.policies_changed, sender=model, dispatch_uid=f"approvals.saved.{model.__name__}")
            post_delete.connect(
                policies.policies_changed, sender=model, dispatch_uid=f"approvals.deleted.{model.__name__}"
            )
