"""``Session``: one covey run from a script, a notebook, a Ray job or the CLI.

The driver side of covey: it joins or starts Ray, builds the main agent's spec
from settings and options, runs the main agent in an ``AgentActor``, answers
permission prompts that come up from the agents, and cleans up what it started.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, AsyncIterator, Callable

from pydantic import BaseModel, ConfigDict, Field

from covey.actors.agent import agent_actor_class
from covey.actors.handle import AgentHandle
from covey.agents.definition import AgentDefinition
from covey.agents.prompts import MAIN_PROMPT, system_blocks
from covey.agents.spec import AgentSpec
from covey.events import Event, PermissionPrompt, ResultEvent, SystemInit
from covey.ids import AgentId, new_session_id
from covey.model.aliases import DEFAULT_MODEL, resolve_model
from covey.model.factory import SCRIPTED_PREFIX, make_model
from covey.permissions.askers import CallbackAsker
from covey.permissions.policy import PermissionPolicy
from covey.ray_runtime import ensure_ray, shutdown_if_started
from covey.settings import Settings
from covey.tools import core_tools

MAIN_DEFINITION = AgentDefinition(name="main", description="The session's main agent.", prompt=MAIN_PROMPT)


class SessionOptions(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    cwd: str = "."
    model: Any = None
    """Where replies come from: ``scripted:PATH``, a Model object, or an alias/id (Anthropic)."""
    model_id: str | None = None
    """The main agent's model alias or id; default: settings' ``model``, else sonnet."""
    permission_mode: str | None = None
    allowed_tools: list[str] = Field(default_factory=list)
    disallowed_tools: list[str] = Field(default_factory=list)
    max_turns: int = 100
    address: str | None = None
    """A Ray cluster to join; default ``RAY_ADDRESS`` or a local Ray started on demand."""
    settings: dict[str, Any] | None = None
    """Extra settings, as in a settings.json (highest precedence, source ``cliArg``)."""
    on_permission: Callable[..., Any] | None = None
    """Asked when a tool call needs a person's approval: ``fn(request) -> bool``."""
    asker: Any = None
    """An Asker object (e.g. TerminalAsker); ``on_permission`` wraps into one."""
    verbose: bool = False


class Session:
    """One covey session: ``await Session(...).run(prompt)`` or ``async for e in session.stream(prompt)``."""

    def __init__(self, **options: Any) -> None:
        self.options = SessionOptions(**options)
        self.session_id = new_session_id()
        self.cwd = Path(self.options.cwd).resolve()
        self.settings = Settings.load(self.cwd, extra=self.options.settings)
        self.model_id = resolve_model(self.options.model_id or _model_name(self.options.model) or self.settings.model or DEFAULT_MODEL)
        if not hasattr(self.options.model, "create"):
            make_model(self.options.model)  # a missing API key or bad rule file fails here, before Ray starts
        self.policy = PermissionPolicy.from_settings(
            self.settings,
            mode=self.options.permission_mode,
            cli_allow=self.options.allowed_tools,
            cli_deny=self.options.disallowed_tools,
            project_root=self.cwd,
        )
        self.asker = self.options.asker or (CallbackAsker(self.options.on_permission) if self.options.on_permission else None)
        self._started_ray = False
        self._actors: list[AgentHandle] = []

    def main_spec(self, prompt: str) -> AgentSpec:
        return AgentSpec(
            session_id=self.session_id,
            agent_id=AgentId.new(),
            definition=MAIN_DEFINITION,
            prompt=prompt,
            model=self.options.model,
            model_id=self.model_id,
            cwd=str(self.cwd),
            system=system_blocks(MAIN_PROMPT, str(self.cwd), self.model_id),
            tool_names=self.tool_names(),
            permissions=self.policy,
            max_turns=self.options.max_turns,
            settings={"modelPrices": self.settings.model_prices, "can_ask": self.asker is not None},
        )

    def tool_names(self) -> list[str]:
        """Core tools minus those removed whole by a bare ``--disallowed-tools`` name."""
        removed = {name for name in self.options.disallowed_tools if "(" not in name}
        return [tool.name for tool in core_tools() if tool.name not in removed]

    def init_event(self) -> SystemInit:
        return SystemInit(
            session_id=self.session_id, cwd=str(self.cwd), model=self.model_id,
            tools=self.tool_names(), permissionMode=self.policy.mode,
        )

    async def stream(self, prompt: str) -> AsyncIterator[Event]:
        """The main agent's events, as they happen (``system/init`` first, like Claude Code)."""
        self.start()
        yield self.init_event()
        handle = self._new_agent_actor("main")
        try:
            async for event in handle.events(self.main_spec(prompt)):
                if isinstance(event, PermissionPrompt):
                    await handle.answer(event.request_id, await self._ask(event))
                    continue
                yield event
        finally:
            handle.kill()

    async def run(self, prompt: str) -> "RunResult":
        events = [event async for event in self.stream(prompt)]
        return RunResult.from_events(events)

    def start(self) -> None:
        if not self._started_ray:
            self._started_ray = ensure_ray(self.options.address, verbose=self.options.verbose)

    def close(self) -> None:
        for handle in self._actors:
            handle.kill()
        self._actors.clear()
        shutdown_if_started(self._started_ray)
        self._started_ray = False

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> "Session":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()

    def _new_agent_actor(self, role: str) -> AgentHandle:
        name = f"covey:{self.session_id[:8]}:{role}"
        actor = agent_actor_class().options(name=name).remote()
        handle = AgentHandle(actor, name)
        self._actors.append(handle)
        return handle

    async def _ask(self, prompt: PermissionPrompt) -> Any:
        if self.asker is None:
            return False
        from covey.permissions.decisions import PermissionRequest

        request = PermissionRequest(
            tool_name=prompt.tool_name, subject=prompt.subject, input=prompt.input,
            message=prompt.message, reason="bubbled", suggested_rule="", agent_id=prompt.agent_id,
        )
        return await self.asker(request)


def _model_name(model: Any) -> str | None:
    """``--model sonnet`` names the model id; ``scripted:PATH`` and objects do not."""
    if isinstance(model, str) and not model.startswith(SCRIPTED_PREFIX) and model != "anthropic":
        return model
    return None


class RunResult(BaseModel):
    """What a finished run returns: the final answer with usage, cost and every event."""

    result: str
    is_error: bool
    num_turns: int
    total_cost_usd: float
    usage: dict[str, int]
    session_id: str
    events: list[Any] = Field(default_factory=list, repr=False)

    @classmethod
    def from_events(cls, events: list[Event]) -> "RunResult":
        results = [e for e in events if isinstance(e, ResultEvent)]
        if not results:
            return cls(result="the run ended without a result", is_error=True, num_turns=0,
                       total_cost_usd=0.0, usage={}, session_id="", events=events)
        last = results[-1]
        return cls(result=last.result, is_error=last.is_error, num_turns=last.num_turns,
                   total_cost_usd=last.total_cost_usd, usage=last.usage, session_id=last.session_id, events=events)


def run(prompt: str, **options: Any) -> RunResult:
    """Run one prompt to its end, synchronously (scripts, Ray jobs); see ``Session`` for options."""
    with Session(**options) as session:
        return asyncio.run(session.run(prompt))
