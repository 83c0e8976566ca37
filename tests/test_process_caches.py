"""What a process keeps for itself is forgotten in one call, which the tests make before each test."""

from approvals import policies
from approvals.models import ApprovalPolicy
from holds.queue import listing as queue
from reviewqueue import processcache


def test_forgetting_all_reads_the_policies_and_the_queues_columns_afresh(db):
    assert policies.all_policies() == []
    listing = queue._listing_columns()
    ApprovalPolicy.objects.bulk_create([ApprovalPolicy(name="Two for all", approvals_required=2)])  # no signal

    assert policies.all_policies() == [] and queue._listing_columns() is listing  # kept by the process

    processcache.forget_all()

    assert [policy.name for policy in policies.all_policies()] == ["Two for all"]
    assert queue._listing_columns() is not listing
