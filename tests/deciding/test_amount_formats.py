"""However the agent writes an amount, four eyes and "not above what the agent asked" hold (issue 21, High).

Hypothesis writes refunds in every form agents use, on both sides of an "amount > 100" two-approver
policy's threshold, under each amount key, and a reviewer acts on them through the real review pages
and the simulated platform: a refund over the threshold never reaches the platform on one approval,
and an edit above what the agent asked is never accepted. Each example tries every form; the
examples are derandomized and few, as each form mirrors a hold and sends real forms.
"""

import itertools
import json
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from approvals.models import Approval, ApprovalPolicy
from holds.deciding import delivery, review
from holds.models import Decision
from reviewqueue.agent_numbers import read_number
from tests.helpers.approval_history import mirrored
from tests.helpers.approvals_setup import decision_posts, signed_in
from tests.helpers.reviewing import review_form, through_summary

pytestmark = pytest.mark.django_db

THRESHOLD = Decimal(100)
EXAMPLES = settings(
    max_examples=2, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
FULL_WIDTH = str.maketrans("0123456789.,", "０１２３４５６７８９．，")
ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")

# Each form writes an amount of two places and says what its writer meant by it.
FORMS = {
    "plain": lambda amount: (f"{amount:.2f}", amount),
    "grouped": lambda amount: (f"{amount:,.2f}", amount),
    "decimal comma": lambda amount: (f"{amount:.2f}".replace(".", ","), amount),
    "grouped with points": lambda amount: (f"{amount:,.2f}".translate(str.maketrans(",.", ".,")), amount),
    "currency sign": lambda amount: (f"${amount:,.2f}", amount),
    "code after": lambda amount: (f"{amount:.2f} USD", amount),
    "code before": lambda amount: (f"EUR {amount:.2f}", amount),
    "spaces": lambda amount: (f"  {amount:.2f} ", amount),
    "plus": lambda amount: (f"+{amount:.2f}", amount),
    "exponent": lambda amount: (f"{amount:E}", amount),
    "full-width": lambda amount: (f"{amount:,.2f}".translate(FULL_WIDTH), amount),
    "arabic-indic": lambda amount: (f"{amount:.2f}".translate(ARABIC_INDIC), amount),
    "json number": lambda amount: (float(amount), amount),
    "value object": lambda amount: ({"value": f"{amount:,.2f}"}, amount),
    "amount object": lambda amount: ({"amount": f"{amount:.2f}", "currency": "USD"}, amount),
    "one-element list": lambda amount: ([f"{amount:.2f}"], amount),
    "thousands alone": lambda amount: (f"{int(amount):,}", Decimal(int(amount))),  # "1,500": 1.5 or 1500
    "letter O for zero": lambda amount: (f"{amount:,.2f}".replace("0", "O"), amount),  # "1,5OO.OO": unreadable
}
amounts = st.one_of(
    st.sampled_from([Decimal("99.99"), Decimal("100.00"), Decimal("100.01")]),
    st.integers(1, 1_000_000).map(lambda cents: Decimal(cents).scaleb(-2)),
)
forms = st.sampled_from(sorted(FORMS))
keys = st.sampled_from(["amount", "refund_amount", "total"])
numbered = itertools.count()


@pytest.fixture
def over_100(db):
    return ApprovalPolicy.objects.create(
        name="Over 100",
        condition_key="amount",
        condition_operator="gt",
        condition_threshold=THRESHOLD,
        approvals_required=2,
    )


def set_aside(platform_state, hold) -> None:
    """Cancel the hold at the platform if it is still open, so that the next syncs mirror the next holds alone."""
    if platform_state.get_hold("default", hold.hold_id)["status"] == "open":
        platform_state.cancel("default", hold.hold_id)


@EXAMPLES
@example(amount=Decimal("100.00"), key="amount")
@example(amount=Decimal("100.01"), key="total")
@given(amount=amounts, key=keys)
def test_a_refund_over_the_threshold_never_reaches_the_platform_on_one_approval(
    alice, over_100, platform_state, platform_client, immediate_delivery, amount, key
):
    for form, write in FORMS.items():
        written, meant = write(amount)
        hold = mirrored(platform_state, platform_client, f"h_{next(numbered)}", **{key: written})

        through_summary(signed_in(alice), hold, review_form(hold))
        for decision in Decision.objects.filter(hold=hold):
            delivery.deliver(decision.pk, platform_client)
        reached = [post for post in decision_posts(platform_state) if f"/{hold.hold_id}/" in post["path"]]

        if meant > THRESHOLD:
            assert reached == [] and Approval.objects.filter(hold=hold).count() == 1, (form, written)
        elif read_number(written).exact is not None:
            assert len(reached) == 1, (form, written)  # under the threshold one approval is enough: it was read
        set_aside(platform_state, hold)


@EXAMPLES
@example(amount=Decimal("100.00"), key="refund_amount", raised_by=1, raised_form="grouped")
@given(amount=amounts, key=keys, raised_by=st.integers(1, 10**8), raised_form=forms)
def test_an_edit_above_what_the_agent_asked_is_never_accepted(
    alice, platform_state, platform_client, immediate_delivery, amount, key, raised_by, raised_form
):
    for form, write in FORMS.items():
        written, meant = write(amount)
        raised, raised_meant = FORMS[raised_form](meant + Decimal(raised_by).scaleb(-2))
        if raised_meant <= meant:  # "1,500" for 1500.40: not above what the agent asked
            continue
        hold = mirrored(platform_state, platform_client, f"h_{next(numbered)}", **{key: written})
        field = next(field for field in review.blank(hold)[0].fields if field.key == key)
        typed = raised if isinstance(raised, str) and field.kind != "json" else json.dumps(raised)

        response = through_summary(signed_in(alice), hold, review_form(hold, **{field.name: typed}))

        assert response.status_code == 422, (form, written, typed)  # the form again, with the field's error
        assert not Approval.objects.filter(hold=hold).exists() and not Decision.objects.filter(hold=hold).exists()
        set_aside(platform_state, hold)
