"""What the approval tests share beyond tests/conftest.py: the issue's approval chain and its people."""

import pytest

from tests.helpers.chains import desk


@pytest.fixture
def chain(db):
    """The chain on refunds over 1,000: Support leads 1, then Finance 2 alongside Legal 1 (``tests.helpers.chains``)."""
    return desk()
