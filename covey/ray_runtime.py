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
    stay_on_loopback()
    ray.init(include_dashboard=False, num_cpus=num_cpus, **common)
    return True


def stay_on_loopback() -> None:
    """A local Ray binds 127.0.0.1, not the machine's network address (and a driver
    joining one started that way looks for it there).

    Ray takes its node address from ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER``, read
    once when ``ray`` is imported: the variable reaches the processes
    ``ray.init`` starts, and the already imported constant is set to match
    (``_node_ip_address`` alone still leaves Ray's servers on every interface).
    A user who set the variable keeps their choice.
    """
    from ray._private import ray_constants

    if os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0") == "0":
        ray_constants.ENABLE_RAY_CLUSTER = False


def shutdown_if_started(started: bool) -> None:
    if started and ray.is_initialized():
        ray.shutdown()
