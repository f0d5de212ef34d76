"""Coordinator mode (docs/coordinator.md): the switch, the coordinator's prompt and tools, and
what it is told about its workers.

The rest of the mode lives where each concern does: ``builtin_agents(coordinator=True)`` (the
``worker`` type replaces the built-ins), the Agent tool (every spawn async, no
``run_in_background`` in its schema) and ``SessionRuntime.messaging`` (SendMessage reaches and
resumes a finished worker without teams).
"""

from __future__ import annotations

import os
from importlib import resources
from typing import Any, Iterable, Mapping

from covey.common.flags import truthy
from covey.definitions.definition import AgentDefinition
from covey.definitions.resolve import resolve_tools

COORDINATOR_ENV = ("COVEY_COORDINATOR_MODE", "CLAUDE_CODE_COORDINATOR_MODE")
"""Variables that turn coordinator mode on; the first one set decides (covey's beats Claude Code's)."""

COORDINATOR_TOOLS = frozenset({"Agent", "SendMessage", "TaskStop"})
"""The coordinator's own tools: it starts, continues and stops workers, the workers do the work.
(Claude Code's coordinator also has SyntheticOutput, a tool covey does not have.)"""

COORDINATOR_NAME = "coordinator"
"""Who a worker's follow-up messages say they are from."""

WORKER_TYPE = "worker"
"""The Agent tool's type when a call names none, in coordinator mode."""

def coordinator_mode(env: Mapping[str, str] | None = None) -> bool:
    """Whether the run's environment (None: this process's) turns coordinator mode on."""
    env = os.environ if env is None else env
    value = next((env[name] for name in COORDINATOR_ENV if (env.get(name) or "").strip()), "")
    return truthy(value)


def coordinator_prompt() -> str:
    """The coordinator's system prompt (``prompts/coordinator.md``), in place of the main agent's."""
    return resources.files("covey.definitions").joinpath("prompts/coordinator.md").read_text(encoding="utf-8").strip()


def coordinator_tools(names: Iterable[str]) -> list[str]:
    """``names`` (the main agent's tool set) cut down to the coordinator's, in their order."""
    return [name for name in names if name in COORDINATOR_TOOLS]


def worker_tools(definitions: Mapping[str, AgentDefinition], available: list[str], *, max_depth: int) -> list[str]:
    """The tools a worker gets: its definition's, within the async-allowed set (every worker runs
    in the background), at depth 1. None if no ``worker`` type is defined."""
    worker = definitions.get(WORKER_TYPE)
    if worker is None:
        return []
    return resolve_tools(worker, available, depth=1, max_depth=max_depth, background=True)


def workers_message(tools: list[str]) -> dict[str, Any]:
    """The coordinator's context about its workers (as Claude Code gives its coordinator): what a
    worker can use, so that it writes tasks a worker can carry out."""
    listed = ", ".join(tools) if tools else "none"
    text = (
        "<system-reminder>\nCoordinator mode. Workers you start with the Agent tool "
        f'(subagent_type "{WORKER_TYPE}") have these tools: {listed}. '
        "Every worker runs in the background and reports through a <task-notification>; "
        "continue one with SendMessage to its agentId.\n</system-reminder>"
    )
    return {"role": "user", "content": [{"type": "text", "text": text}]}
