"""Shared fixtures: an isolated HOME, no real model calls, and one local Ray per test session."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

# Before anything imports Ray or reads settings: a private HOME (Ray writes
# ~/.ray/auth_token; covey reads ~/.claude and ~/.covey) and a short RAY_TMPDIR
# (Ray's socket paths must stay under the kernel's length limit).
_SANDBOX = Path(tempfile.mkdtemp(prefix="covey-tests-"))
os.environ["HOME"] = str(_SANDBOX / "home")
os.environ["RAY_TMPDIR"] = str(_SANDBOX / "ray")
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
# Keeps a local Ray on 127.0.0.1 rather than the machine's network address.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
# No test may reach a real Messages API: an unknown key and a closed loopback port.
os.environ["ANTHROPIC_API_KEY"] = "test-key-not-real"
os.environ["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"
os.environ.pop("RAY_ADDRESS", None)
for path in (_SANDBOX / "home", _SANDBOX / "ray"):
    path.mkdir(parents=True, exist_ok=True)

pytest_plugins = ["tests.fake_messages_api"]

RAY_CPUS = 2


@pytest.fixture(scope="session")
def ray_session():
    """One local Ray for every test that needs it, stopped at the end of the session."""
    import ray

    from covey.ray_runtime import NAMESPACE

    if not ray.is_initialized():
        ray.init(
            num_cpus=RAY_CPUS,
            include_dashboard=False,
            namespace=NAMESPACE,
            log_to_driver=False,
        )
    # All test traffic stays on loopback.
    assert all(node["NodeManagerAddress"] == "127.0.0.1" for node in ray.nodes())
    yield ray
    ray.shutdown()


@pytest.fixture
def sandbox_home() -> Path:
    return _SANDBOX / "home"
