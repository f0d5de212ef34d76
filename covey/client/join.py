"""A Python session on the covey service (``Session(service=True)``, ``COVEY_SERVICE=1``):
find this user's service (start one if none runs) and join its Ray, so the session
borrows the service's ready session actors and warm pool from this process."""

from __future__ import annotations

import logging
from typing import Any

from covey.client.paths import service_paths
from covey.client.process import ensure_service
from covey.ray.cluster import join
from covey.ray.local import NAMESPACE


def join_service(verbose: bool = False) -> dict[str, Any]:
    """Join the running service's Ray (starting the service first if none answers); its ping answer."""
    answer, _started = ensure_service(service_paths())
    join(answer["ray_address"], namespace=NAMESPACE, logging_level=logging.INFO if verbose else logging.ERROR,
         log_to_driver=verbose)
    return answer
