"""The example alert rules watch metrics that /metrics really serves, so none silently never fires."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from operations import auditcheck

pytestmark = pytest.mark.django_db

RULES = Path(__file__).resolve().parents[2] / "deploy" / "prometheus" / "alerts.yml"
RULE_TESTS = Path(__file__).resolve().parents[1] / "prometheus" / "alerts_test.yml"
METRIC_NAME = re.compile(r"\breviewqueue_[a-z0-9_]+")
TOKEN = "alert-rules-scrape-token"


def rules() -> list[dict]:
    return [rule for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]]


def served_names(client, settings) -> set[str]:
    """Every sample name of a real scrape, with data in every family (so histograms show their series)."""
    settings.METRICS_TOKEN = TOKEN
    response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200
    return {
        sample.name for family in text_string_to_metric_families(response.content.decode()) for sample in family.samples
    }


def test_the_rules_cover_what_operators_must_hear_about():
    names = {rule["alert"] for rule in rules()}

    assert {
        "ReviewQueueSyncFailing",
        "ReviewQueueDeliveryRetrying",
        "ReviewQueueOldestHoldOverAnHour",
        "ReviewQueueAuditChainBroken",
    } <= names
    assert all(rule["annotations"]["summary"] for rule in rules())


def test_every_metric_an_alert_names_is_served_by_metrics(client, settings, samples, platform_client, platform_state):
    from holds.mirror import sync

    platform_state.push_faults([{"status": 503}])
    sync.sync_env(platform_client, "default")  # a failing env
    auditcheck.verify_and_record()
    served = served_names(client, settings)

    for rule in rules():
        named = set(METRIC_NAME.findall(rule["expr"])) | set(METRIC_NAME.findall(str(rule.get("annotations", {}))))
        assert named, rule["alert"]
        assert named <= served, (rule["alert"], named - served)


def promtool(*arguments: str) -> subprocess.CompletedProcess:
    """Prometheus' own rule checker (Debian's prometheus package; bin/test installs it)."""
    assert shutil.which("promtool"), "promtool is missing: apt-get install prometheus (bin/test does)"
    return subprocess.run(["promtool", *arguments], capture_output=True, text=True)


def test_promtool_accepts_the_rules():
    checked = promtool("check", "rules", str(RULES))

    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_audit_chain_alerts_fire_when_the_chain_breaks_goes_unverified_or_its_metric_is_missing():
    """Series for each case in tests/prometheus/alerts_test.yml: intact, broken, verified long ago, absent for 3
    hours."""
    tested = promtool("test", "rules", str(RULE_TESTS))

    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "SUCCESS" in tested.stdout
