"""How the audit pages' tests read the trail: every event the list shows, following its pages, and the CSV export."""

import csv
import io

from django.urls import reverse


def listed(client, query: str = "") -> list[int]:
    """Every event sequence the list shows for ``query``, following its pages to the end."""
    sequences, url = [], reverse("audit:list") + "?" + query
    while url:
        response = client.get(url)
        assert response.status_code == 200
        sequences += [row.event.sequence for row in response.context["rows"]]
        cursor = response.context["next_cursor"]
        url = reverse("audit:list") + f"?{query}&after={cursor}" if cursor else None
    return sequences


def exported(client, query: str = "") -> list[dict]:
    response = client.get(reverse("audit:export") + "?" + query)
    assert response.status_code == 200 and response.streaming
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    return list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
