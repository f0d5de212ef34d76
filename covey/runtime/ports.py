"""The ports of a session: what crosses between the session, the registry, a parent and the
agent, registry and mailbox actors, typed once here, below both sides. A port names no
concrete class; each class that serves one checks its conformance beside its definition.

- ``AgentPort``: one agent actor as the session, the registry, the pools and its session's
  other agents hold it (``AgentHandle``, or a test's fake).
- ``RegistryPort``: the registry as an agent and its tools call it (``RegistryHandle``).
- ``MailboxPort``: the session's mailbox (``MailboxHandle``, ``Mailbox``).
- ``Pool``: where the registry takes agents from and gives them back to (``WarmPool``,
  ``BorrowedPool``, a test's fake); ``Lender``: the service's shared pool, which a served
  session's ``BorrowedPool`` borrows from (``SharedPoolHandle``).
- ``Question``: what an agent asks the root of its session (``AgentPort.ask``), and ``Reply``.
- ``SessionRuntime``: the bundle of ports (and definitions, limits, model) every agent carries.
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from typing import (TYPE_CHECKING, Any, Awaitable, Generic, Hashable, Mapping, Protocol, TypeAlias,
                    TypeVar, Unpack)

from typing_extensions import TypeVar as DefaultTypeVar

from covey.definitions.definition import AgentDefinition
from covey.runtime.limits import Limits
from covey.runtime.travel import Sealed
from covey.tools.options import ToolOptions

if TYPE_CHECKING:
    from ray import ObjectRef

    from covey.events import Event
    from covey.hooks.callback import HookCall
    from covey.mcp.relay import McpCall
    from covey.permissions.askers import Answer
    from covey.permissions.decisions import PermissionRequest
    from covey.runtime.answers import Finished, Launched
    from covey.runtime.payloads import PoolStats, ProgressFields
    from covey.runtime.records import FinalReport, LaunchRequest, RunRecord, Status
    from covey.runtime.spec import AgentSpec
    from covey.settings.files import Sources
    from covey.teams.messages import Mail

    Question: TypeAlias = "PermissionRequest | HookCall | McpCall"
    """A permission prompt for the person, or a call for the claude-agent-sdk program (a hook
    callback, an SDK MCP server's message): each goes up to the root of the session."""
    Reply: TypeAlias = "Answer | dict[str, Any] | None"
    """The person's answer (``True``/``False``, ``Allow``/``Deny``), the hook's output or the MCP
    server's response; ``False`` when nobody follows the root's run any more."""
    Runtime: TypeAlias = "SessionRuntime | ObjectRef[SessionRuntime] | None"
    """A session runtime as it is sent: itself, or its object ref (Ray hands the actor the value)."""


class AgentPort(Hashable, Protocol):
    """One agent actor: its runs, and the prompts of the agents whose root it is."""

    @property
    def node(self) -> str | None: ...
    async def start(self, spec: AgentSpec, *, follow: bool = False, runtime: SessionRuntime | None = None,
                    runtime_ref: ObjectRef[SessionRuntime] | None = None) -> str: ...
    def run_detached(self, spec: AgentSpec, *, runtime: SessionRuntime | None = None,
                     runtime_ref: ObjectRef[SessionRuntime] | None = None) -> Awaitable[Finished]: ...
    async def finish(self) -> Finished: ...
    async def report_for(self, agent_id: str) -> Finished: ...
    async def cancel(self, status: Status = "killed", reason: str = "", agent_id: str | None = None) -> bool: ...
    async def reset(self) -> bool: ...
    async def ping(self) -> str: ...
    def kill(self) -> None: ...
    async def ask(self, question: Question) -> Reply: ...
    def tell_relay(self, event: Event) -> None: ...
    def by_name(self) -> AgentPort:
        """This agent as it travels in a runtime: by its actor's name, looked up on first use."""
        ...


class RegistryPort(Protocol):
    """The registry calls an agent run and its tools make."""

    async def launch(self, request: LaunchRequest, spec: AgentSpec | None, *, follow: bool = False,
                     lane: str = "home", output_file: str | None = None) -> Launched: ...
    async def resume(self, agent_id: str) -> str | None: ...
    async def progress(self, agent_id: str, **fields: Unpack[ProgressFields]) -> str | None: ...
    def tell_progress(self, agent_id: str, **fields: Unpack[ProgressFields]) -> None: ...
    def tell_parked(self, agent_id: str, parked: bool, seq: int) -> None: ...
    async def to_background(self, agent_id: str) -> bool: ...
    async def find(self, name_or_id: str) -> RunRecord | None: ...
    async def record(self, agent_id: str) -> RunRecord | None: ...
    async def outstanding(self, owner_agent_id: str) -> list[str]: ...
    async def report_of(self, agent_id: str) -> FinalReport | None: ...
    async def kill_agent(self, agent_id: str, reason: str = "killed on request") -> bool: ...


class MailboxPort(Protocol):
    """The session's mailbox: a queue of mail per recipient."""

    async def put(self, recipient: str, mail: Mail) -> str: ...
    async def drain(self, recipient: str) -> list[Mail]: ...
    async def wait(self, recipient: str, timeout_s: float | None = None) -> list[Mail]: ...
    async def pending(self, recipient: str) -> int: ...
    async def close(self, recipient: str, forward_to: str) -> None: ...
    async def reopen(self, recipient: str) -> None: ...


H = TypeVar("H", bound=AgentPort)


class Pool(Protocol[H]):
    """Agents to take and give back, by lane ("home": on the session's node; "any")."""

    async def take(self, lane: str = "home") -> H: ...
    async def give_back(self, actor: H, clean: bool | None = None) -> bool: ...
    async def warm(self, n: int, lane: str = "home") -> int: ...
    def stats(self) -> PoolStats: ...


class Lender(Protocol[H]):
    """The service's shared pool, lending agent actors to the session ``session_id``."""

    async def take(self, lane: str, session_id: str) -> H: ...
    async def take_ready(self, lane: str, session_id: str, n: int) -> list[H]: ...
    async def give_back(self, actor: H, clean: bool) -> bool: ...
    async def warm(self, n: int, lane: str = "home") -> int: ...


Registry_co = DefaultTypeVar("Registry_co", bound=RegistryPort, default=RegistryPort, covariant=True)
Mailbox_co = DefaultTypeVar("Mailbox_co", bound=MailboxPort, default=MailboxPort, covariant=True)
Agent_co = DefaultTypeVar("Agent_co", bound=AgentPort, default=AgentPort, covariant=True)


@dataclass
class SessionRuntime(Generic[Registry_co, Mailbox_co, Agent_co]):
    """What every agent of a session shares: the session's actors (as ports), its definitions,
    limits and model. It travels inside every ``AgentSpec``, so an agent on any node reaches
    the registry (which owns the warm pool), the mailbox and the root agent without a name lookup.
    The driver, which made the actors, holds it with their handle classes as parameters."""

    session_id: str
    registry: Registry_co
    mailbox: Mailbox_co
    root: Agent_co | None = None
    """The main agent's actor: bubbled permission prompts go through it to the person."""
    definitions: dict[str, AgentDefinition] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)
    transcript_dir: str | None = None
    skills: dict[str, Any] = field(default_factory=dict)
    """Skills found for the session, by name (the Skill tool and definitions' ``skills``)."""
    can_ask: bool = False
    """Whether a person can answer prompts (a terminal or a callback at the root)."""
    child_events: bool = True
    """Whether the session's reader reads its sub-agents' events (``SessionOptions.child_events``):
    without, a sync child sends its follower its report alone."""
    tools: ToolOptions = field(default_factory=ToolOptions)
    """The switches that shape every agent's tool catalog (background disabled, teams)."""
    tool_names: list[str] = field(default_factory=list)
    """The session's whole tool catalog, by name: a child's pool is resolved within it."""
    spread: bool = False
    """The cluster has more than one node: agents without file tools may run on any."""
    shared_fs: bool = False
    """The working tree is on a filesystem every node mounts (``COVEY_SHARED_FS``)."""
    project_context: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Instructions + git snapshot by cwd, taken once when the session starts (like Claude Code's
    session-start git status): a child in the session's directory reuses it instead of running git."""
    setting_sources: Sources = None
    """The kinds of file the session reads (``--setting-sources``): a child in another directory
    reads that directory's instruction files only when ``project`` is among them."""
    model: Any = None
    """The session's model object (a run's own): a spec that uses it travels without it."""
    env: dict[str, str] | None = None
    """The run's environment (``Session(env=...)``): a spec whose settings carry it travels without it."""
    key: str = field(default_factory=lambda: uuid.uuid4().hex)
    """Names this content. The registry and each agent actor keep the runtime they were sent
    last, so a spec travels without it (its ~10 KB and three actor handles cost more to
    pickle than the rest of the spec) whenever the receiver already holds this key."""

    def set_root(self, root: Agent_co | None, model: Any = None) -> None:
        """A new main agent (each ``Session.run``) and its model: the content changed, so does the key."""
        self.root = root
        self.model = model
        self.key = uuid.uuid4().hex

    def __getstate__(self) -> dict[str, Any]:
        """The root agent travels by name (``AgentPort.by_name``): a child looks it up only
        if it relays a permission prompt, instead of every child paying to unpickle it. The
        model travels sealed (``Sealed``): the registry forwards it without unpickling it."""
        root = self.root.by_name() if self.root is not None else None
        return {**self.__dict__, "root": root, "model": Sealed.of(self.model)}

    def open_model(self) -> Any:
        """The session's model, unsealed once here (an agent actor keeps its runtime)."""
        if isinstance(self.model, Sealed):
            self.model = self.model.open()
        return self.model

    @property
    def teams(self) -> bool:
        """Whether the session has teams (rosters, task boards, named teammates)."""
        return self.tools.teams

    @property
    def messaging(self) -> bool:
        """Whether SendMessage reaches any agent, even a finished one (resumed): with teams, and in
        coordinator mode (the coordinator continues its workers)."""
        return self.tools.messaging

    @property
    def coordinator(self) -> bool:
        return self.tools.coordinator

    async def context_for(self, cwd: str, *, omit: bool, env: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
        """The project context for an agent starting in ``cwd`` (``run_agent``'s step 4);
        ``env`` is the run's environment (its kill switch), None for this process's."""
        from covey.definitions.context import omitted, project_context

        if omitted(omit, env):
            return []
        if cwd in self.project_context:
            return self.project_context[cwd]
        # another directory: a worktree, a cwd
        return await asyncio.to_thread(project_context, cwd, omit=False, sources=self.setting_sources)


if TYPE_CHECKING:
    from covey.tools.services import ToolRuntime

    def _reaches_tools(runtime: SessionRuntime) -> ToolRuntime:
        """Never called: the type checker holds the runtime to what the plain tools read of it."""
        return runtime
