"""compose.yaml, .env.example and the Kubernetes example describe the same processes as the image's entrypoint."""

import ipaddress
import re
from pathlib import Path

import kubernetes_validate
import pytest
import yaml
from django.conf import settings

from tests.helpers.processes import ROOT

ENTRYPOINT_COMMANDS = {"web", "events", "worker", "beat", "migrate", "manage"}
KUBERNETES = sorted((ROOT / "deploy" / "kubernetes").glob("*.yaml"))
SECRETS = {
    "SECRET_KEY",
    "POSTGRES_PASSWORD",
    "REDIS_PASSWORD",
    "AGENTOS_API_KEY",
    "EMAIL_HOST_PASSWORD",
    "METRICS_TOKEN",
}
APP_SERVICES = ("migrate", "web", "events", "worker", "beat")


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
    for probe in (web["livenessProbe"]["httpGet"], web["readinessProbe"]["httpGet"]):
        # The kubelet is no proxy: a forwarded header from it would be ignored, so the probes must not need one.
        assert [header["name"] for header in probe["httpHeaders"]] == ["Host"]
        assert any(re.fullmatch(exempt, probe["path"].lstrip("/")) for exempt in settings.SECURE_REDIRECT_EXEMPT)
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


def test_compose_publishes_the_app_on_loopback_only_without_privileges_and_redis_with_a_password():
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    published = {name: service.get("ports", []) for name, service in services.items()}
    assert published.pop("web") and published.pop("events")
    assert not any(published.values()), "only web and events publish a port"
    for name in ("web", "events"):
        assert all(port.startswith("127.0.0.1:") for port in services[name]["ports"]), name
    for name in APP_SERVICES:
        assert services[name]["cap_drop"] == ["ALL"], name
        assert services[name]["security_opt"] == ["no-new-privileges:true"], name
    password = "${REDIS_PASSWORD:?set REDIS_PASSWORD in .env}"
    assert services["redis"]["command"][-2:] == ["--requirepass", password]
    assert services["web"]["environment"]["REDIS_URL"] == f"redis://:{password}@redis:6379/0"


def test_the_example_environment_trusts_exactly_the_compose_networks_gateway_as_its_proxy():
    """Published on 127.0.0.1, the app is reached from the gateway alone: the proxy on the host, nobody else."""
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    (network,) = compose["networks"]["default"]["ipam"]["config"]
    given = example_environment()

    assert "TRUSTED_PROXY_COUNT" not in given
    assert [ipaddress.ip_network(item) for item in given["TRUSTED_PROXIES"].split(",")] == [
        ipaddress.ip_network(network["gateway"])
    ]
    assert ipaddress.ip_address(network["gateway"]) in ipaddress.ip_network(network["subnet"])


def example_environment() -> dict[str, str]:
    pairs = [
        line.split("=", 1)
        for line in (ROOT / ".env.example").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    return dict(pairs)


def test_the_example_environment_holds_no_secret():
    given = example_environment()
    assert SECRETS & given.keys() >= {"SECRET_KEY", "POSTGRES_PASSWORD", "REDIS_PASSWORD", "AGENTOS_API_KEY"}
    assert all(not given[name] for name in SECRETS & given.keys()), "a secret in .env.example"
