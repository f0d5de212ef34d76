"""The SDK compatibility suite's covey: the real ``covey`` executable, reached through the
session's one covey service, as a claude-agent-sdk program meets it with ``cli_path``.

Every run talks to the test's own fake Messages API (``fake_api``, tests/fake_messages_api.py):
the SDK's child, the ``covey`` client, forwards its whole environment to the service,
so ``ANTHROPIC_BASE_URL`` reaches the run's model. tests/conftest.py sets
``COVEY_NO_SERVICE=1`` for every test and the SDK starts its child with this process's
environment under ``options.env``, so the child gets ``COVEY_NO_SERVICE=0`` here.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
from claude_agent_sdk import ClaudeAgentOptions

from tests.fake_messages_api import FakeMessagesAPI
from tests.service.served import Served

REFERENCE_CLI = "COVEY_SDK_SUITE_CLI"
"""Set to a real Claude Code executable (the SDK's ``_bundled/claude``) to check the suite's
own expectations against Claude Code instead of covey (the fake API still answers)."""


@pytest.fixture
def served(shared_service: Served) -> Served:
    """The session's covey service (``shared_service``, tests/conftest.py): started before the
    first test that needs it (Ray's start is the slow part), stopped after the last."""
    return shared_service


@pytest.fixture(scope="session")
def covey_cli(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The ``covey`` console script of this venv; else a wrapper running ``python -m covey``."""
    if os.environ.get(REFERENCE_CLI):
        return os.environ[REFERENCE_CLI]
    found = shutil.which("covey", path=str(Path(sys.executable).parent)) or shutil.which("covey")
    if found:
        return found
    wrapper = tmp_path_factory.mktemp("bin") / "covey"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m covey "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return str(wrapper)


SdkOptions = Callable[..., ClaudeAgentOptions]


@pytest.fixture
def sdk_options(served: Served, covey_cli: str, fake_api: FakeMessagesAPI, tmp_path: Path) -> SdkOptions:
    """``ClaudeAgentOptions`` for a program run against covey: cwd ``tmp_path``, the served
    environment, this test's fake API; keyword arguments are passed on."""

    def make(**options: Any) -> ClaudeAgentOptions:
        env = {**served.env, "COVEY_NO_SERVICE": "0", "ANTHROPIC_BASE_URL": fake_api.url}
        if os.environ.get(REFERENCE_CLI):
            env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
        # covey's stderr, line by line, into the test's captured output (shown on failure).
        relay = lambda line: print(f"[covey] {line}", file=sys.stderr)  # noqa: E731
        return ClaudeAgentOptions(cli_path=covey_cli, cwd=str(tmp_path), env=env, stderr=relay, **options)

    return make
