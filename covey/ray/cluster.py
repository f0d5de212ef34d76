"""Starting or joining Ray the way covey's users expect.

Without an address covey starts a private Ray (Ray's ``address="local"``: never one found
through ``<tmp>/ray/ray_current_cluster``, which names whatever Ray was last started with
``ray start`` on the machine, or a dead one), in a folder of this user's own
(``covey.ray.start.ray_temp_dir``), with no dashboard, quiet logs, on loopback, its auth
token readable by this user only (``covey.ray.token``); it is recorded under
``~/.covey/run`` for ``covey ps`` and friends, and shut down at exit. ``--address`` /
``RAY_ADDRESS`` (``auto`` included, as Ray reads it) joins an existing Ray instead, once it
answers (``covey.ray.start.check_answers``); a process already in Ray keeps its Ray.
"""

from __future__ import annotations

import contextlib
import logging
import os
from typing import Any

import ray
from ray._private.worker import RayContext

from covey.common.subprocess_env import api_credentials_hidden, bytecode_kept, forget_api_credentials_in_proc
from covey.ray import local as local_rays
from covey.ray import start as ray_start
from covey.ray import token as ray_token
from covey.ray.address import check_run_address, ray_client_refused
from covey.ray.local import NAMESPACE

RAY_JOB_ENV = "RAY_JOB_CONFIG_JSON_ENV_VAR"
"""Set by Ray's job supervisor in the environment of a job's driver."""


def ensure_ray(address: str | None = None, *, num_cpus: int | None = None, verbose: bool = False) -> bool:
    """Connect to Ray; True if this call started a local Ray (the caller then owns it). A SIGINT
    or SIGTERM meanwhile ends it once ``ray.init`` returns (``KeyboardInterrupt``, ``Interrupted``),
    leaving no Ray started here."""
    if ray.is_initialized():
        _refuse_client_connection()
        return False
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    check_run_address(address, os.environ)
    address = address or os.environ.get("RAY_ADDRESS") or _job_address()
    common: dict[str, Any] = dict(
        namespace=NAMESPACE,
        logging_level=logging.INFO if verbose else logging.ERROR,
        log_to_driver=verbose,
        configure_logging=True,
    )
    try:
        with ray_start.interruptible():
            if address and address != "local":  # Ray's word for a new local Ray, as none
                join(address, **common)
                return False
            _start_private(num_cpus, common)
    except BaseException:
        _undo_start()
        raise
    return True


def _job_address() -> str | None:
    """A Ray job's driver joins its job's Ray as Ray finds it (the job supervisor also sets ``RAY_ADDRESS``)."""
    return "auto" if RAY_JOB_ENV in os.environ else None


def _start_private(num_cpus: int | None, common: dict[str, Any]) -> None:
    stay_on_loopback()
    temp_dir = ray_start.ray_temp_dir()
    if ray_token.prepare_token() is not None:
        _reload_token()  # Ray may have cached "no token" earlier in this process, and would write its own
    with api_credentials_hidden(), bytecode_kept():  # the raylet and so every worker inherit this environment
        context = ray.init(address="local", include_dashboard=False, num_cpus=num_cpus, _temp_dir=temp_dir, **common)
    forget_api_credentials_in_proc()  # the raylet's parent: a worker's command would read them in its environ
    ray_token.tighten_token()  # a token an older Ray (or covey) wrote world-readable
    info = context.address_info if isinstance(context, RayContext) else {}  # a local start answers a RayContext
    if (gcs := info.get("gcs_address")) and (session_dir := info.get("session_dir")):
        local_rays.record(gcs, session_dir)


def _undo_start() -> None:
    """A start or join cut short (a signal, a failure) leaves no Ray: what ``ray.init`` started
    is shut down, a Ray joined only disconnected from (processes a failed start began before it
    knew them die with this process: Ray's reaper)."""
    with contextlib.suppress(Exception):
        ray.shutdown()
    local_rays.forget()


def _refuse_client_connection() -> None:
    """A program that ran ``ray.init("ray://...")`` itself: refused as the address would be."""
    from ray.util.client import ray as client

    if client.is_connected():
        raise ray_client_refused("this program joined Ray through Ray Client (ray.init(\"ray://...\"))")


def _reload_token() -> None:
    try:
        # ray/_raylet.pyi leaves out names the compiled module has.
        from ray._raylet import AuthenticationTokenLoader  # type: ignore[attr-defined]
    except ImportError:  # a Ray without token auth
        return
    AuthenticationTokenLoader.instance().reset_cache()


def join(address: str, token_path: str | None = None, **init_options: Any) -> None:
    """``ray.init`` an existing Ray at ``address`` once it answers (``RayUnreachable`` within
    seconds if not), on loopback if it listens there, with the auth token. ``auto`` is Ray's:
    the Ray last started with ``ray start`` here, else any running one."""
    if address == "auto":
        address = _resolve_auto()
    if address.rsplit(":", 1)[0] in ("127.0.0.1", "localhost"):
        stay_on_loopback()  # else Ray swaps 127.0.0.1 for this machine's network address and misses it
    send_token_if_any(token_path)
    ray_start.check_answers(address)
    ray.init(address=address, **init_options)


def _resolve_auto() -> str:
    from ray._private import services

    try:
        return str(services.canonicalize_bootstrap_address_or_die("auto"))
    except ConnectionError as exc:
        raise ray_start.RayUnreachable(f"address auto: {exc}") from None


def send_token_if_any(token_path: str | None = None) -> None:
    """Make the next ``ray.init(address=...)`` send Ray's auth token.

    Ray 2.60 sends its token only to a Ray it found itself (address ``auto``);
    with an explicit address it sends none unless ``RAY_AUTH_MODE=token``, and a
    Ray started with token auth (the default) refuses with ``InvalidAuthToken``.
    A user's own ``RAY_AUTH_MODE`` is kept. Ray reads the mode and the token once
    and caches them, so both caches are refreshed here.
    """
    # ray/_raylet.pyi leaves out names the compiled module has.
    from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined]

    if token_path:
        os.environ["RAY_AUTH_TOKEN_PATH"] = token_path
    loader = AuthenticationTokenLoader.instance()
    loader.reset_cache()
    if "RAY_AUTH_MODE" not in os.environ and loader.has_token(ignore_auth_mode=True):
        os.environ["RAY_AUTH_MODE"] = "token"
        Config.initialize("")


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
    if started:
        local_rays.forget()
