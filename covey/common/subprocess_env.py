"""The environment a run's child processes get: its Bash commands, command hooks and stdio MCP
servers. Covey's own credentials are never in it: the API's (``ANTHROPIC_API_KEY`` and the
rest of ``CREDENTIALS``), which covey keeps for its own requests (the driver and the node's
model gateway: docs/architecture.md, "Model requests"), and Ray's auth token (``RAY_AUTH_TOKEN``,
``RAY_AUTH_TOKEN_PATH``), which would let a command run code anywhere in covey's Ray. So a
command a model writes (``echo $ANTHROPIC_API_KEY``, a prompt injection's ``curl``) has nothing
of covey's to send. What the person's own configuration sets for that child (an MCP server's
``env``) is put back on top. ``CLAUDE_CODE_SUBPROCESS_ENV_SCRUB`` (Claude Code's flag) leaves
out more: the cloud providers', telemetry's and CI's secrets in ``SCRUBBED``. GitHub tokens and
proxy settings stay: wrapper scripts need them.
"""

from __future__ import annotations

import ctypes
import os
import sys
from contextlib import contextmanager
from typing import Iterator, Mapping, MutableMapping

from covey.common.flags import env_flag
from covey.common.private_dirs import PrivateDirError, private_dir

SCRUB_FLAG = "CLAUDE_CODE_SUBPROCESS_ENV_SCRUB"

API_CREDENTIALS = frozenset({
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_FOUNDRY_API_KEY",
    "ANTHROPIC_CUSTOM_HEADERS",
})
"""The API's credentials: covey reads them, its child processes and Ray workers never need them
(a Ray node covey starts is started without them: ``without_api_credentials``)."""

CREDENTIALS = API_CREDENTIALS | frozenset({
    # Ray's auth token, or where to read it: with it a process may run code in covey's Ray.
    "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH",
})
"""Covey's own credentials: never in a child process's environment."""

SCRUBBED = CREDENTIALS | frozenset({
    # Telemetry exporters' headers carry bearer tokens.
    "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_LOGS_HEADERS", "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    # Cloud providers' secrets (Bedrock, Vertex, Foundry credentials).
    "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "GOOGLE_APPLICATION_CREDENTIALS",
    "AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH",
    # A CI job's token-minting endpoint.
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL", "ACTIONS_RUNTIME_TOKEN",
})
"""What ``CLAUDE_CODE_SUBPROCESS_ENV_SCRUB`` leaves out."""


KEPT_BYTECODE = "COVEY_PYCACHE_PREFIX"
"""Set beside the ``PYTHONPYCACHEPREFIX`` covey chose (``with_kept_bytecode``), so a child process
is given the person's own ``PYTHONDONTWRITEBYTECODE`` back."""


def with_kept_bytecode(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` for the processes covey starts for Ray (the service, ``ray start``, so every worker).
    Where ``PYTHONDONTWRITEBYTECODE`` is set, each of them would compile covey's modules from source:
    0.16 s of CPU per agent actor on 2 cores, a quarter of what starting one costs. They keep compiled
    modules in a folder of covey's own instead (``~/.covey/pycache``, Python's ``PYTHONPYCACHEPREFIX``),
    so the source tree stays free of ``__pycache__`` as asked. A prefix the person set is theirs."""
    if not env.get("PYTHONDONTWRITEBYTECODE") or env.get("PYTHONPYCACHEPREFIX"):
        return dict(env)
    try:
        prefix = str(private_dir(os.path.join(env.get("HOME") or os.path.expanduser("~"), ".covey", "pycache")))
    except (PrivateDirError, OSError):  # no folder of covey's own here: compiled anew, as before
        return dict(env)
    kept = {name: value for name, value in env.items() if name != "PYTHONDONTWRITEBYTECODE"}
    return {**kept, "PYTHONPYCACHEPREFIX": prefix, KEPT_BYTECODE: prefix}


@contextmanager
def bytecode_kept() -> Iterator[None]:
    """``with_kept_bytecode`` on this process's environment meanwhile: a local Ray that ``ray.init``
    starts copies it into its raylet, and so into every worker."""
    names = ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", KEPT_BYTECODE)
    before = {name: os.environ.get(name) for name in names}
    kept = with_kept_bytecode(os.environ)
    try:
        _set(os.environ, {name: kept.get(name) for name in names})
        yield
    finally:
        _set(os.environ, before)


def _set(environ: MutableMapping[str, str], values: Mapping[str, str | None]) -> None:
    for name, value in values.items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value


def as_the_person_set(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without what ``with_kept_bytecode`` changed: the person's own setting back."""
    prefix = env.get(KEPT_BYTECODE)
    if not prefix or env.get("PYTHONPYCACHEPREFIX") != prefix:
        return {name: value for name, value in env.items() if name != KEPT_BYTECODE}
    left = {name: value for name, value in env.items() if name not in (KEPT_BYTECODE, "PYTHONPYCACHEPREFIX")}
    return {**left, "PYTHONDONTWRITEBYTECODE": "1"}


def without_api_credentials(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without the API's credentials: what a Ray node covey starts (its raylet, so every
    worker) is given. Ray's token stays: it needs it to join. (The covey service keeps the
    environment it was started with and zeroes the credentials in what ``/proc`` shows.)"""
    return {name: value for name, value in env.items() if name not in API_CREDENTIALS}


def travelling_env(env: Mapping[str, str] | None) -> dict[str, str] | None:
    """The run's environment as agent actors get it (``RunSettings.env``, ``SessionRuntime.env``):
    without the API's credentials, which the driver has read (the model is built there, and the
    node's gateway sends with its credential); None stays None (an actor's own environment)."""
    return None if env is None else without_api_credentials(env)


@contextmanager
def api_credentials_hidden() -> Iterator[None]:
    """This process's environment without the API's credentials meanwhile: a local Ray that
    ``ray.init`` starts copies it into its raylet, and so into every worker."""
    hidden = {name: os.environ.pop(name) for name in API_CREDENTIALS if name in os.environ}
    try:
        yield
    finally:
        os.environ.update(hidden)


def forget_api_credentials_in_proc() -> int:
    """Zero the values of the API's credentials in this process's original environment block,
    which ``/proc/<pid>/environ`` shows to every process of the user (a command reading its
    ancestors' environments); how many were zeroed. Python's ``os.environ`` is a copy made at
    start, so the process keeps them.

    Linux only, and a no-op elsewhere: Linux alone says where the block lies (``/proc/self/stat``'s
    ``env_start`` and ``env_end``). macOS shows it too (``sysctl`` ``KERN_PROCARGS2``, psutil's
    ``environ()``), but names no bounds, and the C ``environ`` array cannot stand in for them: a
    ``setenv`` points its entry elsewhere, and the value shown would stay while covey said it was gone."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        start, end = int(fields[47]), int(fields[48])  # env_start and env_end: fields 50 and 51
        block = ctypes.string_at(start, end - start)
    except (OSError, ValueError, IndexError):
        return 0
    zeroed, offset = 0, 0
    for entry in block.split(b"\0"):
        name, _, value = entry.partition(b"=")
        if value and (variable := name.decode(errors="replace")) in API_CREDENTIALS:
            ctypes.memset(start + offset + len(name) + 1, 0, len(value))
            if variable in os.environ:  # the C environment too, for a child that inherits it
                os.putenv(variable, os.environ[variable])
            zeroed += 1
        offset += len(entry) + 1
    return zeroed


def scrubbed(env: Mapping[str, str], own: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment to start a child process with, from the run's ``env``; ``own`` is what
    the person's configuration sets for this child, kept whatever it names."""
    left_out = SCRUBBED if env_flag(env, SCRUB_FLAG) else CREDENTIALS
    env = as_the_person_set(env)
    return {**{name: value for name, value in env.items() if name not in left_out}, **(own or {})}


def for_subprocess(env: Mapping[str, str] | None) -> dict[str, str]:
    """``scrubbed``, where ``None`` is this process's environment."""
    return scrubbed(os.environ if env is None else env)
