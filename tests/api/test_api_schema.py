"""The OpenAPI document is valid, and the live server keeps to it: schemathesis over every operation finds no server
error and no answer (status, content type, body, headers) that breaks the document."""

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from openapi_spec_validator import validate
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from holds.deciding import decisions
from holds.deciding.decisions import ItemChoice
from holds.models import Decision, Hold
from reviewqueue import roles
from tests.helpers.api import token_of
from tests.helpers.duplicates import every_duplicate
from tests.helpers.users import make_user

EXAMPLES = 10  # per operation: enough to reach each answer the operation has, within the suite's time
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]


@pytest.fixture
def served(live_server, samples, settings):
    """The live server with the sample holds, and a token of someone who reviews and audits, with every scope."""
    settings.API_RATE_PER_MINUTE = 100_000
    settings.UNDO_SECONDS = 30
    user = make_user("tester", roles.REVIEWERS, roles.AUDITORS)
    hold = samples["h_13"]
    approve = [ItemChoice(item.item_id, "approve") for item in hold.items.all()]
    decisions.submit(hold, user, approve, duplicates_checked=every_duplicate(hold))  # an A-1001 refund: checked
    return live_server.url, token_of(user)


def on_real_objects(operation):
    """The operation's cases, half of them with a path id that names a real hold or decision: random ids alone would
    hardly ever get past the 404."""
    cases = operation.as_strategy()
    if "{pk}" not in operation.path:
        return cases
    model = Decision if operation.path.startswith("/api/v1/decisions") else Hold
    real = st.sampled_from(list(model.objects.values_list("pk", flat=True)))

    def aimed(case, pk):
        case.path_parameters = {**case.path_parameters, "pk": pk}
        return case

    return st.one_of(cases, st.builds(aimed, cases, real))


@pytest.mark.django_db(transaction=True)
def test_the_openapi_document_is_valid_openapi_3(client):
    document = client.get("/api/v1/openapi.json").json()

    validate(document)
    assert document["openapi"].startswith("3.")
    assert document["components"]["securitySchemes"]["TokenAuth"]["scheme"] == "bearer"


@pytest.mark.long
@pytest.mark.timeout(300)  # a live server and 110 generated requests: far more than the usual test's 120 s
@pytest.mark.django_db(transaction=True)
def test_every_operation_keeps_to_the_document(served):
    url, secret = served
    schema = schemathesis.openapi.from_dict(httpx.get(f"{url}/api/v1/openapi.json", timeout=60).json())
    operations = [result.ok() for result in schema.get_all_operations()]
    tried = {}

    for operation in operations:

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=True,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
            database=None,
        )
        @given(case=on_real_objects(operation))
        def keeps_to_it(case):
            response = case.call_and_validate(
                base_url=url, headers={"Authorization": f"Bearer {secret}"}, checks=CHECKS
            )
            tried.setdefault(case.operation.label, []).append(response.status_code)

        keeps_to_it()

    assert sorted(tried) == sorted(operation.label for operation in operations)
    print({label: (len(statuses), sorted(set(statuses))) for label, statuses in tried.items()})  # -s: the tally
