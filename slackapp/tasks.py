"""Celery tasks: thin wrappers that call the plain functions doing the work."""

from celery import shared_task

from notifications import slack_api
from slackapp import linking, messages, pressing
from slackapp.payloads import Press

REFRESH_RETRIES = 5


@shared_task
def handle_press(fields: dict) -> str:
    """Carry out a press the request URL acknowledged (``pressing.handle``)."""
    return pressing.handle(Press.from_task_argument(fields))


@shared_task(bind=True, max_retries=REFRESH_RETRIES, acks_late=True)
def refresh_messages(self, hold_ids: list[int]) -> int:
    """Replace the Slack messages of these holds with their state now; retry while Slack is unavailable."""
    try:
        return messages.refresh(hold_ids)
    except slack_api.Unavailable as error:
        raise self.retry(countdown=2 ** (self.request.retries + 1), exc=error) from None


@shared_task
def forget_finished() -> int:
    """Delete the connect links and messages nothing needs any more (``linking.forget_expired``,
    ``messages.forget_closed``)."""
    return linking.forget_expired() + messages.forget_closed()
