"""``SessionRuntime``: the session-wide actors an agent needs, as picklable handles.

It travels inside every ``AgentSpec``, so an agent on any node can reach the
registry (which owns the warm pool), the mailbox and the root agent without a name lookup.
"""

from __future__ import annotations

import asyncio
import pickle
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

from covey.definitions.definition import AgentDefinition
from covey.runtime.limits import Limits
from covey.tools.options import ToolOptions

if TYPE_CHECKING:
    from covey.agent.handle import AgentHandle
    from covey.teams.mailbox_actor import MailboxHandle
    from covey.registry.actor import RegistryHandle
    from covey.settings.files import Sources


class Sealed:
    """A pickled object that stays pickled until someone needs it. The session's model
    travels in the runtime through the registry, which never calls it: unpickling it there
    would import the model's SDK (the Anthropic SDK: ~0.75 s of CPU) on a spawn's path."""

    def __init__(self, blob: bytes) -> None:
        self.blob = blob

    @classmethod
    def of(cls, value: Any) -> Any:
        """Pickled as Ray pickles a call's arguments (cloudpickle: a model class defined in a
        driver's ``__main__`` travels by value)."""
        from ray import cloudpickle

        return value if value is None or isinstance(value, Sealed) else cls(cloudpickle.dumps(value))  # type: ignore[no-untyped-call]

    def open(self) -> Any:
        return pickle.loads(self.blob)


@dataclass
class SessionRuntime:
    session_id: str
    registry: "RegistryHandle"
    mailbox: "MailboxHandle"
    root: "AgentHandle | None" = None
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

    def set_root(self, root: "AgentHandle | None", model: Any = None) -> None:
        """A new main agent (each ``Session.run``) and its model: the content changed, so does the key."""
        self.root = root
        self.model = model
        self.key = uuid.uuid4().hex

    def __getstate__(self) -> dict[str, Any]:
        """The root agent travels by name (``AgentHandle.by_name``): a child looks it up only
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
