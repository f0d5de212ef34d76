"""The fault suite's covey service: one per module, started before its first test and
stopped (with everything it started) after its last, as a user's service serves run
after run. A test that needs a pristine service makes its own (tests/service)."""

from __future__ import annotations

from typing import Iterator

import pytest

from tests.service.served import Served, served_service


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with served_service(start=True, ANTHROPIC_API_KEY="x") as served:
        yield served
