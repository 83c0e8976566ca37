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
METRIC_NAME = re.compile(r"\breviewqueue_[a-z0-9_]+")
TOKEN = "alert-rules-scrape-token"


def rules() -> list[dict]:
    return [rule for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]]


def served_names(client, settings) -> set[str]:
    """Every sample name of a real scrape, with data in every family (so histograms show their series)."""
    settings.METRICS_TOKEN = TOKEN
    response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert response.status_code == 200
    return {sample.name for family in text_string_to_metric_families(response.content.decode()) for sample in family.samples}


def test_the_rules_cover_what_operators_must_hear_about():
    names = {rule["alert"] for rule in rules()}

    assert {
        "ReviewQueueSyncFailing", "ReviewQueueDeliveryRetrying", "ReviewQueueOldestHoldOverAnHour", "ReviewQueueAuditChainBroken",
    } <= names
    assert all(rule["annotations"]["summary"] for rule in rules())


def test_every_metric_an_alert_names_is_served_by_metrics(client, settings, samples, platform_client, platform_state):
    from holds import sync

    platform_state.push_faults([{"status": 503}])
    sync.sync_env(platform_client, "default")  # a failing env
    auditcheck.verify_and_record()
    served = served_names(client, settings)

    for rule in rules():
        named = set(METRIC_NAME.findall(rule["expr"])) | set(METRIC_NAME.findall(str(rule.get("annotations", {}))))
        assert named, rule["alert"]
        assert named <= served, (rule["alert"], named - served)


@pytest.mark.skipif(not shutil.which("promtool"), reason="promtool (Debian package prometheus) is not installed")
def test_promtool_accepts_the_rules():
    checked = subprocess.run(["promtool", "check", "rules", str(RULES)], capture_output=True, text=True)

    assert checked.returncode == 0, checked.stdout + checked.stderr
