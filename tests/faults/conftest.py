"""The fault suite's covey service: the session's one (``shared_service``, tests/conftest.py),
started before the first test that needs it and stopped (with everything it started) after the
last, as a user's service serves run after run. A test that needs a pristine service makes its
own (tests/service)."""

from __future__ import annotations

import pytest

from tests.service.served import Served


@pytest.fixture
def served(shared_service: Served) -> Served:
    return shared_service
