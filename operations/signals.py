"""Each Celery task's id, name and subject on the log lines it writes, and each sync and each sweep's failure on a
hold counted for the metrics (connected in ``OperationsConfig.ready``)."""

from celery.signals import task_postrun, task_prerun
from django.dispatch import receiver

from holds.signals import sync_finished
from operations import logcontext, sweepstats, syncstats
from reviewqueue import sweeping

# The tasks whose first argument names what the log lines are about.
TASK_SUBJECTS = {"holds.tasks.deliver_decision": "decision_id"}
_task_tokens: dict[str, dict] = {}


@task_prerun.connect
def bind_task(sender, task_id, args=(), **_) -> None:
    subject = TASK_SUBJECTS.get(sender.name)
    values = {"task_id": task_id, "task_name": sender.name}
    if subject and args:
        values[subject] = args[0]
    _task_tokens[task_id] = logcontext.bind(**values)


@task_postrun.connect
def unbind_task(sender, task_id, **_) -> None:
    tokens = _task_tokens.pop(task_id, None)
    if tokens:
        logcontext.unbind(tokens)


@receiver(sync_finished, dispatch_uid="operations.count_sync")
def count_sync(sender, env: str, seconds: float, failed: bool, **_) -> None:
    syncstats.record_sync(env, seconds, failed=failed)


@receiver(sweeping.failed, dispatch_uid="operations.count_sweep_failure")
def count_sweep_failure(sender, sweep: str, **_) -> None:
    sweepstats.record_failure(sweep)
