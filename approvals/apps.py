from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    name = "approvals"
    verbose_name = "Approval policies"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth.models import Group
        from django.db.models.signals import post_delete, post_save

        from approvals import policies
        from approvals.models import ApprovalPolicy, ApprovalStage, RememberedApproval

        # A policy's groups are read with it: a renamed group changes what the pages say.
        for model in (ApprovalPolicy, ApprovalStage, RememberedApproval, Group):
            post_save.connect(policies.policies_changed, sender=model, dispatch_uid=f"approvals.saved.{model.__name__}")
            post_delete.connect(
                policies.policies_changed, sender=model, dispatch_uid=f"approvals.deleted.{model.__name__}"
            )
        # What an open round waits for follows the policies as they are once the change commits.
        for model in (ApprovalPolicy, ApprovalStage, Group):
            for signal, name in ((post_save, "saved"), (post_delete, "deleted")):
                signal.connect(_refresh_later, sender=model, dispatch_uid=f"approvals.awaited.{name}.{model.__name__}")


def _refresh_later(**_) -> None:
    """Refresh the awaited stages once the change commits: once for the transaction, however many rows it changed (a
    policy file's load deletes and writes many stages)."""
    from django.db import transaction

    from approvals import awaiting

    pending = getattr(transaction.get_connection(), "run_on_commit", [])
    if not any(entry[1] is awaiting.refresh_open_rounds for entry in pending):
        transaction.on_commit(awaiting.refresh_open_rounds)
