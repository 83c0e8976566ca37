"""compose.yaml, .env.example and the Kubernetes example describe the same processes as the image's entrypoint."""

from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from tests.helpers.processes import ROOT

ENTRYPOINT_COMMANDS = {"web", "events", "worker", "beat", "migrate", "manage"}
KUBERNETES = sorted((ROOT / "deploy" / "kubernetes").glob("*.yaml"))
SECRETS = {"SECRET_KEY", "POSTGRES_PASSWORD", "AGENTOS_API_KEY", "EMAIL_HOST_PASSWORD", "METRICS_TOKEN"}


def manifests() -> list[dict]:
    return [resource for path in KUBERNETES for resource in yaml.safe_load_all(path.read_text()) if resource]


def pod_specs() -> dict[str, dict]:
    return {
        resource["metadata"]["name"]: resource["spec"]["template"]["spec"]
        for resource in manifests()
        if resource["kind"] in ("Deployment", "Job")
    }


@pytest.mark.parametrize("path", KUBERNETES, ids=lambda path: path.name)
def test_every_kubernetes_manifest_is_valid_against_the_schemas_strictly(path: Path):
    for resource in yaml.safe_load_all(path.read_text()):
        kubernetes_validate.validate(resource, kubernetes_validate.latest_version(), strict=True)


def test_the_kubernetes_example_runs_web_and_worker_scaled_one_beat_and_a_migrate_job():
    resources = {(resource["kind"], resource["metadata"]["name"]): resource for resource in manifests()}
    commands = {name: spec["containers"][0]["args"][0] for name, spec in pod_specs().items()}
    assert commands == {
        "review-queue-web": "web",
        "review-queue-worker": "worker",
        "review-queue-beat": "beat",
        "review-queue-migrate": "migrate",
    }
    assert resources["Deployment", "review-queue-web"]["spec"]["replicas"] > 1
    beat = resources["Deployment", "review-queue-beat"]["spec"]
    assert beat["replicas"] == 1 and beat["strategy"]["type"] == "Recreate"  # never two at once, even in a rollout
    web = pod_specs()["review-queue-web"]["containers"][0]
    assert web["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert web["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert ("Service", "review-queue-web") in resources


def test_every_kubernetes_container_runs_as_the_images_user_on_a_read_only_root():
    for name, spec in pod_specs().items():
        assert spec["securityContext"]["runAsNonRoot"] and spec["securityContext"]["runAsUser"] == 10001, name
        (container,) = spec["containers"]
        assert container["securityContext"]["readOnlyRootFilesystem"], name
        assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"], name


def test_compose_names_the_same_services_each_read_only_after_migrate():
    services = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]
    assert {"postgres", "redis", "migrate", "web", "worker", "beat"} <= services.keys()
    for name in ("web", "worker", "beat"):
        service = services[name]
        assert service["command"] == [name]
        assert service["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
        assert service["read_only"] and service["tmpfs"] == ["/tmp"]
        assert service["env_file"] == ".env"
    assert services["migrate"]["command"] == ["migrate"] and services["migrate"]["restart"] == "no"
    assert {service["command"][0] for name, service in services.items() if "build" in service} <= ENTRYPOINT_COMMANDS


def test_the_example_environment_holds_no_secret():
    pairs = [
        line.split("=", 1)
        for line in (ROOT / ".env.example").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    given = dict(pairs)
    assert SECRETS & given.keys() >= {"SECRET_KEY", "POSTGRES_PASSWORD", "AGENTOS_API_KEY"}
    assert all(not given[name] for name in SECRETS & given.keys()), "a secret in .env.example"
