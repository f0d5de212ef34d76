"""Fixtures for tests that start their own Ray nodes with ``ray start`` (never the session's shared Ray)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests.cluster._cluster import LocalCluster


def _skip_if_disabled() -> None:
    if os.environ.get("COVEY_SKIP_CLUSTER_TESTS", "").lower() in ("1", "true", "yes"):
        pytest.skip("COVEY_SKIP_CLUSTER_TESTS is set")


@pytest.fixture
def cluster_base():
    base = Path(tempfile.mkdtemp(prefix="covey-cluster-"))
    yield base
    shutil.rmtree(base, ignore_errors=True)


def stop_and_check(cluster: LocalCluster) -> None:
    """Stop every node by pid; fail if any process of ours (raylet, gcs_server, worker) survived."""
    left = cluster.stop()
    assert not left, f"processes of the test cluster still alive: {left}"


@pytest.fixture(scope="module")
def two_nodes():
    """A head (``head_node`` resource) and a worker (``worker_node``), both on 127.0.0.1; stopped even on failure."""
    _skip_if_disabled()
    base = Path(tempfile.mkdtemp(prefix="covey-cluster-"))
    cluster = LocalCluster(base)
    try:
        cluster.head()
        cluster.worker()
        yield cluster
    finally:
        stop_and_check(cluster)
        shutil.rmtree(base, ignore_errors=True)
