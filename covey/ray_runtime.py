"""Starting or joining Ray the way covey's users expect.

A local Ray is started on demand (no dashboard, quiet logs, loopback only) and
shut down at exit only if covey started it; ``--address`` / ``RAY_ADDRESS``
joins an existing cluster instead.
"""

from __future__ import annotations

import logging
import os

import ray

NAMESPACE = "covey"


def ensure_ray(address: str | None = None, *, num_cpus: int | None = None, verbose: bool = False) -> bool:
    """Connect to Ray; True if this call started a local Ray (the caller then owns it)."""
    if ray.is_initialized():
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    address = address or os.environ.get("RAY_ADDRESS")
    common = dict(
        namespace=NAMESPACE,
        logging_level=logging.INFO if verbose else logging.ERROR,
        log_to_driver=verbose,
        configure_logging=True,
    )
    if address:
        ray.init(address=address, **common)
        return False
    # A local Ray stays on loopback: with this set, Ray binds 127.0.0.1 instead
    # of the machine's network address (``_node_ip_address`` alone is not enough).
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
    ray.init(include_dashboard=False, num_cpus=num_cpus, **common)
    return True


def shutdown_if_started(started: bool) -> None:
    if started and ray.is_initialized():
        ray.shutdown()
