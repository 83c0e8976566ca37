"""Agent-written ids never steer a request: each is one path segment, and "", "." and ".." are never sent.

The simulator's request log shows the exact path each request reached it with.
"""

import base64

import pytest
from django.urls import reverse

from holds.mirror import platform
from holds.models import Hold

ENV_PATH = "/v0/envs/default"

# An agent-written id, and the one path segment it must travel as.
HOSTILE_IDS = [
    pytest.param("h/../../runs/r_1", "h%2F..%2F..%2Fruns%2Fr_1", id="slashes and dots"),
    pytest.param("../h_1", "..%2Fh_1", id="leading .."),
    pytest.param("h%2f..%2fr_1", "h%252f..%252fr_1", id="encoded slash"),
    pytest.param("%2e%2e", "%252e%252e", id="encoded dots"),
    pytest.param("h?status=decided", "h%3Fstatus%3Ddecided", id="question mark"),
    pytest.param("h#decision", "h%23decision", id="hash"),
    pytest.param("...", "...", id="three dots"),
]


def hold_named(platform_state, hostile_id: str) -> dict:
    """A hold whose hold id, run id and file id are all ``hostile_id``."""
    file = {
        "id": hostile_id,
        "name": "note.txt",
        "content_type": "text/plain",
        "content_base64": base64.b64encode(b"hi").decode(),
    }
    return platform_state.add_hold("default", {"hold_id": hostile_id, "run_id": hostile_id, "files": [file]})


@pytest.mark.parametrize(("hostile_id", "segment"), HOSTILE_IDS)
def test_every_id_travels_as_exactly_one_path_segment(platform_client, platform_state, hostile_id, segment):
    hold_named(platform_state, hostile_id)

    hold = platform_client.get_hold("default", hostile_id)
    run = platform_client.get_run("default", hostile_id)
    with platform_client.stream_file("default", hostile_id, hostile_id) as download:
        content = b"".join(download.chunks)
    decided = platform_client.post_decision(
        "default", hostile_id, [platform.DecisionItem(id=hold.items[0].id, action="approve")], "alice", "key-1"
    )

    assert (hold.hold_id, run.run_id, content, decided.status) == (hostile_id, hostile_id, b"hi", "decided")
    assert [(request["method"], request["path"], request["query"]) for request in platform_state.requests] == [
        ("GET", f"{ENV_PATH}/holds/{segment}", {}),
        ("GET", f"{ENV_PATH}/runs/{segment}", {}),
        ("GET", f"{ENV_PATH}/holds/{segment}/files/{segment}", {}),
        ("POST", f"{ENV_PATH}/holds/{segment}/decision", {}),
    ]


@pytest.mark.parametrize("dot_id", ["..", ".", ""])
def test_an_id_a_path_cannot_carry_is_never_requested(platform_client, platform_state, dot_id):
    platform_state.load_samples()
    approve = [platform.DecisionItem(id="A-1001", action="approve")]
    requests = [
        lambda: platform_client.get_hold("default", dot_id),
        lambda: platform_client.get_run("default", dot_id),
        lambda: platform_client.post_decision("default", dot_id, approve, "alice", "key-1"),
        lambda: platform_client.stream_file("default", "h_14", dot_id).__enter__(),
        lambda: platform_client.stream_file("default", dot_id, "f_1").__enter__(),
    ]

    for request in requests:
        with pytest.raises(platform.UnaddressableId, match="would name another path"):
            request()

    assert platform_state.requests == []


@pytest.mark.parametrize("dot_id", ["..", "."])
@pytest.mark.parametrize("field", ["hold_id", "run_id", "file id"])
def test_a_hold_naming_a_dot_id_breaks_the_contract(field, dot_id):
    payload = {"hold_id": "h_1", "run_id": "r_1", "items": [{"id": "A-1", "data": {}}], "files": [{"id": "f_1"}]}
    if field == "file id":
        payload["files"][0]["id"] = dot_id
    else:
        payload[field] = dot_id

    with pytest.raises(platform.MalformedHold, match=f"is '{dot_id}', which a request path cannot carry"):
        platform.parse_hold(payload)


@pytest.mark.django_db
def test_a_mirrored_file_id_of_dot_dot_fetches_nothing_from_the_platform(alice_client, samples, platform_state):
    """The finding: ``/holds/<pk>/files/%2e%2e`` once answered the hold's own JSON from ``GET /holds/<id>``."""
    hold = samples["h_12"]
    Hold.objects.filter(pk=hold.pk).update(
        files=[{"id": "..", "name": "photo.jpg", "content_type": "image/jpeg", "size": 3}]
    )
    platform_state.clear_requests()

    as_the_finding_sent_it = reverse("hold-file", args=[hold.pk, "f"]).removesuffix("f") + "%2e%2e"

    response = alice_client.get(as_the_finding_sent_it)

    assert response.status_code == 404
    assert b"hold_id" not in response.content
    assert platform_state.requests == []


@pytest.mark.django_db
def test_a_mirrored_run_id_of_dot_dot_fetches_nothing_from_the_platform(alice_client, samples, platform_state):
    hold = samples["h_12"]
    Hold.objects.filter(pk=hold.pk).update(run_id="..", run_snapshot=None)
    platform_state.clear_requests()

    response = alice_client.get(reverse("run-context", args=[hold.pk]))

    assert response.status_code == 200
    assert "would name another path" in response.content.decode()
    assert platform_state.requests == []
