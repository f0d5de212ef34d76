"""What a pooled agent actor loads before it is handed out.

A fresh Ray worker imports covey lazily: unpickling the first spec pulls in the
runtime, registry and mailbox handle classes, and the first request builds every
tool's JSON schema. Measured on 2 cores, that first run cost about 0.3 s of CPU
per actor (0.07 s on a reused one), which is what a warm pool exists to avoid.
``warm_up`` pays it when the pool starts the actor, off the spawn path.
"""

from __future__ import annotations

import importlib
import logging
from typing import Iterable

from covey.tools.options import ToolOptions

log = logging.getLogger(__name__)

AGENT_RUN_MODULES = (
    "covey.runtime.ports",  # the session runtime and its ports
    "covey.registry.handle",
    "covey.teams.mailbox_actor",
    "covey.agent.handle",
    "covey.subagents.children",
    "covey.subagents.reports",
    "covey.teams.render",
    "covey.teams.board",
    "covey.teams.roster",
    "covey.model.scripted",
    "covey.agent.catalog",
    "covey.permissions.policy",  # its package loads names on first use
    "covey.permissions.askers",
    "concurrent.futures.thread",  # asyncio.to_thread: file tools, transcripts
)
"""Entry points of what one agent run touches; their own imports bring the rest."""

_TOOL_OPTIONS = tuple(ToolOptions(teams=teams, background_disabled=off) for teams in (False, True) for off in (False, True))


def warm_up(modules: Iterable[str] = ()) -> list[str]:
    """Import the agent-run modules (plus ``modules``, e.g. the session's model adapter)
    and build every tool schema once; returns what could not be imported."""
    missing = preload_modules((*AGENT_RUN_MODULES, *modules))
    from covey.agent.catalog import tool_catalog

    for options in _TOOL_OPTIONS:
        for tool in tool_catalog(options):
            tool.schema()
    return missing


def preload_modules(modules: Iterable[str]) -> list[str]:
    """Import ``modules`` and run each one's ``warm_up_offline`` if it has one (a model
    adapter's canned exchange); returns those that could not be imported."""
    missing = []
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ImportError:  # an optional adapter: its agents pay the import when they run
            missing.append(name)
            continue
        if callable(warm := getattr(module, "warm_up_offline", None)):
            try:
                warm()
            except Exception:  # a warm-up that fails costs its agents the first-use time only
                log.warning("warming up %s failed", name, exc_info=True)
    return missing


def model_modules(model: object) -> tuple[str, ...]:
    """The module an agent needs for the session's model: its class's, or, for the real model
    (named by alias or id, or its object), the gateway model, whose warm-up starts the node's
    gateway (the agent itself never loads the SDK); ``scripted:PATH`` needs nothing more."""
    if model is None or isinstance(model, str):
        from covey.gateway.factory import SCRIPTED_PREFIX

        return () if isinstance(model, str) and model.startswith(SCRIPTED_PREFIX) else (GATEWAY_MODEL,)
    module = type(model).__module__
    return (GATEWAY_MODEL,) if module in _SENT_THROUGH_THE_GATEWAY else (module,)


GATEWAY_MODEL = "covey.gateway.remote_model"
_SENT_THROUGH_THE_GATEWAY = ("covey.gateway.anthropic", "covey.model.anthropic_config")
