"""What the handing-over tests read: who was told what, the queue as a reviewer sees it."""

from django.urls import reverse

from holds.deciding.decisions import ItemChoice
from holds.models import Hold
from notifications.models import Notification

Event = Notification.Event
Channel = Notification.Channel


def told(event: str, user) -> list[Notification]:
    return list(Notification.objects.filter(event=event, user=user).order_by("channel"))


def approve_all(hold: Hold) -> list[ItemChoice]:
    return [ItemChoice(item_id=item.item_id, action="approve") for item in hold.items.all()]


def queue_page(client, query: str = "") -> str:
    response = client.get(reverse("queue") + query)
    assert response.status_code == 200
    return response.content.decode()


def listed(client, query: str = "") -> list[int]:
    return [row.hold.pk for row in client.get(reverse("queue") + query).context["rows"]]
