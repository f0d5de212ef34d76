"""Fixtures for tests that start their own Ray nodes with ``ray start`` (never the session's shared Ray)."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import shared_services
from tests.cluster._cluster import LocalCluster


def _skip_if_disabled() -> None:
    if os.environ.get("COVEY_SKIP_CLUSTER_TESTS", "").lower() in ("1", "true", "yes"):
        pytest.skip("COVEY_SKIP_CLUSTER_TESTS is set")


def stop_and_check(cluster: LocalCluster) -> None:
    """Stop every node by pid; fail if any process of ours (raylet, gcs_server, worker) survived."""
    left = cluster.stop()
    assert not left, f"processes of the test cluster still alive: {left}"


def job_server_missing() -> str | None:
    """Why a head here could not run Ray's job server (the dashboard needs ``ray[default]``), or None."""
    try:
        import aiohttp  # noqa: F401
        from ray.dashboard.modules.job.sdk import JobSubmissionClient  # noqa: F401
    except ImportError as exc:
        return f"the Ray job server needs ray[default] ({exc})"
    return None


@contextlib.contextmanager
def _two_node_cluster() -> Iterator[LocalCluster]:
    _skip_if_disabled()
    base = Path(tempfile.mkdtemp(prefix="covey-cluster-"))
    cluster = LocalCluster(base)
    try:
        cluster.no_dashboard = job_server_missing()
        try:
            cluster.head(dashboard=cluster.no_dashboard is None)
        except RuntimeError as exc:
            if cluster.no_dashboard is not None or "dashboard" not in str(exc).lower():
                raise
            stop_and_check(cluster)
            cluster = LocalCluster(base / "again")
            cluster.no_dashboard = f"the head could not start its dashboard here: {str(exc)[-500:]}"
            cluster.head()
        cluster.worker()
        yield cluster
    finally:
        stop_and_check(cluster)
        shutil.rmtree(base, ignore_errors=True)


shared_services.register("two_nodes", _two_node_cluster)


@pytest.fixture(scope="session")
def two_nodes():
    """A head (``head_node`` resource, with its dashboard and so Ray's job server when it can
    run here) and a worker (``worker_node``), both on 127.0.0.1, shared by the cluster tests
    (a ``ray start`` is the slow part: started in the background when the run begins, stopped
    after the last cluster test, tests/shared_services.py); stopped even on failure.
    ``no_dashboard`` says why the head has none. The node-loss test kills the worker: a test
    after it has the head only."""
    yield from shared_services.fixture_of("two_nodes")
