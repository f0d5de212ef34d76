"""The Ray addresses covey can join, checked before anything starts.

Ray Client (``ray://HOST:PORT``) is refused: covey's sessions stream through Ray's streaming
generators and async actor calls, which Ray Client does not carry (a run failed deep inside with
``'async for' requires an object with __aiter__ method, got ClientObjectRef``, and a service
started on one failed every run). Standard library only: the thin client checks it too.
"""

from __future__ import annotations

from typing import Mapping

from covey.errors import UserError

RAY_CLIENT = "ray://"
INSTEAD = ("use the cluster's GCS address HOST:6379 from a machine inside the cluster (or `covey start --address auto` "
           "on the head), or from outside it `ray job submit --address http://HEAD:8265 -- covey -p ...`")


def check_address(address: str | None, given_as: str = "--address ") -> None:
    """Refuse a Ray Client address in one line naming how it was given and what to use instead."""
    if address and address.strip().lower().startswith(RAY_CLIENT):
        raise ray_client_refused(f"{given_as}{address}")


def ray_client_refused(what: str) -> UserError:
    return UserError(f"{what}: covey does not run through Ray Client (its sessions stream through Ray's streaming "
                     f"generators and async actor calls, which Ray Client does not carry); {INSTEAD}")


def check_run_address(address: str | None, env: Mapping[str, str], given_as: str = "--address ") -> None:
    """The address a run joins: the one given, else ``RAY_ADDRESS``."""
    if address:
        check_address(address, given_as)
    else:
        check_address(env.get("RAY_ADDRESS"), "RAY_ADDRESS=")
