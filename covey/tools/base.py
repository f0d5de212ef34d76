"""What every tool is: a name, a description, a pydantic input model and an async run.

A tool never raises into the agent loop: the loop turns validation failures and
exceptions into ``is_error`` results; tools themselves return
``ToolResult.error(...)`` for failures they foresee.
"""

from __future__ import annotations

import asyncio
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from covey.common.bounded import cut_text
from covey.tools.processes import ProcessTracker
from covey.tools.services import CacheSafe, LaunchNotes, OwnSpec, ToolRuntime

if TYPE_CHECKING:
    from covey.definitions.skill import Skill
    from covey.hooks.runner import HookRegistry
    from covey.model.base import Model
    from covey.permissions.decisions import Ask, Decision
    from covey.teams.context import TeamContext

MAX_RESULT_CHARS = 100_000
"""The most text one tool result brings into the context: about 25,000 tokens, Claude Code's
cap on a Read or an MCP tool's result. Tools cut earlier where they can say how to see the
rest (Bash and Grep at 30,000); the executor cuts any result still longer."""


class ToolInput(BaseModel):
    """Base of every tool's input model: unknown fields are refused, like Claude Code."""

    model_config = ConfigDict(extra="forbid")


class ToolResult(BaseModel):
    """What a tool call returns to the model: text content and an error flag.

    ``data`` carries a structured payload for the runtime (e.g. the Agent tool's
    discriminated output); the model only sees ``content``.
    """

    content: str
    is_error: bool = False
    data: Any = None
    blocks: list[dict[str, Any]] = Field(default_factory=list)
    """Content blocks after the text (Read's and MCP tools' images): Messages API ``image`` blocks."""

    @classmethod
    def error(cls, message: str) -> "ToolResult":
        return cls(content=message, is_error=True)

    def capped(self, limit: int = MAX_RESULT_CHARS, hint: str = "") -> "ToolResult":
        """This result with its text cut to ``limit`` characters and a note saying so."""
        if len(self.content) <= limit:
            return self
        return self.model_copy(update={"content": cut_text(self.content, limit, what="tool output", hint=hint)})


Confirm = Callable[["Tool", Any, "ToolContext", "Ask"], Awaitable["Decision"]]
"""``(tool, input, ctx, ask) -> decision``: an ``Ask`` a tool raised itself, put to the agent's approvers."""


@dataclass
class ToolServices:
    """What the runtime gives the tools that coordinate agents: none outside a session."""

    runtime: ToolRuntime | None = None
    """The session's actors and definitions (a ``SessionRuntime``): the Agent tool launches through it."""
    spec: OwnSpec | None = None
    """The running agent's own ``AgentSpec`` (a child's spec is built from it)."""
    session_id: str | None = None
    skills: dict[str, Skill] = field(default_factory=dict)
    """The session's skills by name (the Skill tool)."""
    team: TeamContext | None = None
    """This agent's place in a team, for the team tools."""
    inbox: LaunchNotes | None = None
    """This agent's inbox: the Agent tool tells it a background child will notify it."""
    cache_safe: Callable[[], CacheSafe] | None = None
    """This agent's last request as sent, and its read-file cache: what a fork copies."""
    model: Model | None = None
    """The session's model: WebFetch asks a small model about a page through it."""
    hooks: HookRegistry | None = None
    """This agent's hooks: TaskCreate and TaskUpdate fire TaskCreated and TaskCompleted through it."""
    confirm: Confirm | None = None
    """Puts an ``Ask`` the tool itself raised to this agent's approvers (PermissionRequest hooks, then the
    person); None: nobody can approve, so it is denied."""


@dataclass
class ToolContext:
    """Everything a tool may touch, passed explicitly (never global).

    One context per agent run. ``cwd`` is the agent's working directory: relative
    paths in tool inputs resolve against it.
    """

    agent_id: str
    cwd: Path
    abort: asyncio.Event = field(default_factory=asyncio.Event)
    read_files: dict[str, float] = field(default_factory=dict)
    """Read-file cache: absolute path -> mtime when the agent last read it."""
    todos: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """TodoWrite store: agent id -> its current todo list."""
    processes: ProcessTracker = field(default_factory=ProcessTracker)
    """Shell process groups this agent started (killed at cleanup)."""
    env: dict[str, str] | None = None
    """The run's environment: Bash and ``rg`` run with it, and ``~`` is its ``HOME``. None: this process's."""
    services: ToolServices = field(default_factory=ToolServices)
    emit: Callable[[Any], None] | None = None
    """Where a long tool reports progress events (optional)."""
    tool_use_id: str | None = None
    """Id of the tool_use being executed (set per call by the loop)."""

    def resolve(self, path: str) -> Path:
        """An input path made absolute against the agent's cwd (``~`` expanded: the run's ``HOME``)."""
        p = _expand_home(Path(path), self.env)
        return p if p.is_absolute() else (self.cwd / p)

    def for_call(self, tool_use_id: str) -> "ToolContext":
        """A shallow copy carrying one call's tool_use id (shared state stays shared)."""
        return ToolContext(**{**self.__dict__, "tool_use_id": tool_use_id})


def _expand_home(path: Path, env: dict[str, str] | None) -> Path:
    """``~`` and ``~/x`` against ``env``'s ``HOME`` when it has one; else as ``expanduser`` does
    (``~user`` always so: the account database knows it, not the environment)."""
    home = env.get("HOME") if env is not None else None
    if home and path.parts and path.parts[0] == "~":
        return Path(home, *path.parts[1:])
    return path.expanduser()


class Tool:
    """A tool the model can call. Subclasses set the attributes and ``run``.

    ``name``, ``description``, ``input_model`` and ``read_only`` are set on the class by most
    tools, and per instance by a tool built per configuration (the Agent tool's schema, an
    MCP server's tools), so they are not class variables."""

    name: str
    description: str
    input_model: type[BaseModel]
    """The call's input: a ``ToolInput`` (unknown fields refused), or a model that lets a
    server judge its own arguments (MCP)."""
    read_only: bool = False
    read_only_hint: bool = False
    """What a tool says of itself (an MCP server's ``readOnlyHint``): it may run beside the other
    calls of its message; it never spares a person's approval, as ``read_only`` does."""
    coordination: ClassVar[bool] = False
    """Changes only coordination state (todos, tasks, messages, teams): it never needs a
    person's approval, as in Claude Code; deny rules still apply."""
    concurrent: ClassVar[bool] = False
    """Runs alongside the other calls of its message although it is not read-only
    (the Agent tool: twenty spawns in one message all launch at once)."""
    heartbeat_s: ClassVar[float | None] = None
    """While a call runs, a ``tool_progress`` heartbeat every this many seconds (the Agent tool: 30)."""

    # Traits: what the rest of covey knows of a tool by its name. The name sets that used to list
    # them (which tools a Read(...) rule covers, which need the working tree's node...) are derived
    # from the built-in tools' classes (``covey.definitions.tool_catalog``). A tool that says nothing gets the
    # cautious answer: its own rules only, no memory or background use, kept beside the files.
    path_rules: ClassVar[Literal["Read", "Edit"] | None] = None
    """The permission-rule family whose ``Read(path)`` / ``Edit(path)`` rules cover the path this tool
    reads or changes (Claude Code: ``Read`` covers Read, Glob, Grep; ``Edit`` Edit, Write, NotebookEdit)."""
    primary_field: ClassVar[str | None] = None
    """The input field a rule's parentheses match (``file_path``, ``command``, ``url``): a parameter rule
    (``Read(file_path:x)``) cannot name it."""
    touches_files: ClassVar[bool] = True
    """Reads or changes the working tree: an agent that has it runs on the node holding the files."""
    memory: ClassVar[bool] = False
    """Given to every agent that has a memory folder (Read, Write, Edit), as in Claude Code."""
    background: ClassVar[bool] = False
    """Offered to a background agent: it needs no terminal (a person's prompt, the lead's own work)."""
    asked_in_plan_mode: ClassVar[bool] = False
    """Not read-only, yet it changes nothing here (WebFetch, WebSearch; ExitPlanMode, whose approval ends
    plan mode): in plan mode it is asked, not refused."""
    lead_only: ClassVar[bool] = False
    """No sub-agent may have it (waiting on or stopping background tasks, leaving plan mode)."""
    activity: ClassVar[tuple[str, str] | None] = None
    """What a call is doing, for a ``task_progress``: a verb and the input field it names
    (``("Reading", "file_path")`` gives ``Reading src/app.py``)."""

    async def run(self, input: Any, ctx: ToolContext) -> ToolResult:
        raise NotImplementedError

    def permission_subject(self, input: Any, ctx: "ToolContext | None" = None) -> str | None:
        """The text a permission rule's parentheses match: a command, a path, an agent type."""
        return None

    def schema(self) -> dict[str, Any]:
        """The tool as the Messages API's ``tools`` array lists it (built once per input model:
        it is sent with every request, and its bytes must not change between requests)."""
        return {"name": self.name, "description": self.description, "input_schema": _input_schema(self.input_model)}


@functools.lru_cache(maxsize=None)
def _input_schema(model: type[BaseModel]) -> dict[str, Any]:
    return _clean_schema(model.model_json_schema())


def _clean_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema the model sees: nested models inlined, pydantic's noise dropped.

    ``title`` keys and ``default: null`` change no meaning (``required`` already
    says what is optional) but cost prompt tokens; ``$defs``/``$ref`` are inlined
    so a tool's schema reads as one self-contained object, like Claude Code's.
    """
    defs = schema.get("$defs", {})

    def clean(node: Any) -> Any:
        if isinstance(node, list):
            return [clean(item) for item in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return clean(defs[node["$ref"].rsplit("/", 1)[-1]])
        out = {}
        for key, value in node.items():
            if key in ("title", "$defs") or (key == "default" and value is None):
                continue
            # Under "properties" the keys are field names (one may be "title"), not keywords.
            is_props = key == "properties"
            out[key] = {n: clean(v) for n, v in value.items()} if is_props else clean(value)
        return out

    cleaned: dict[str, Any] = clean(schema)
    return cleaned
