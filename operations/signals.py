"""Each Celery task's id, name and subject on the log lines it writes (connected in ``OperationsConfig.ready``)."""

from celery.signals import task_postrun, task_prerun

from operations import logcontext

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
