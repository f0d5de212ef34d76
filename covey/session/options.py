"""``SessionOptions``: the one list of a session's run options.

Every way into a run reads this model and nothing else: the ``covey`` command's flags
name its fields (``covey/cli/flags.py``), the thin client sends them as JSON under
those names, the covey service validates them with ``SessionOptions.model_validate``
(``covey/service/session_options.py``), and ``Session`` takes the validated model. A new
run option is one field here (and its flag, if it has one).
"""

from __future__ import annotations

from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field

from covey.definitions.definition import AgentDefinition
from covey.errors import UserError
from covey.permissions.modes import RUN_MODES
from covey.runtime.limits import Limits


class SessionOptions(BaseModel):
    """A session's run options; unset ones keep these defaults (some are then read from the run's env)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    cwd: str = "."
    env: dict[str, str] | None = None
    """The run's environment; None: this process's. The session reads its API key, base URL, model
    aliases, ``COVEY_*`` switches and limits, and ``HOME`` (user settings, agents, skills, transcripts)
    from it, and every agent's Bash, Grep and command hooks run with it."""
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
    agents: list[AgentDefinition] | str | dict[str, Any] | None = None
    """Extra agent definitions: objects, or Claude Code's ``--agents`` JSON."""
    limits: Limits | None = None
    pool_size: int | None = None
    """Warm agent actors kept ready (default ``COVEY_POOL_SIZE`` or 4 per CPU, 4..16)."""
    transcript_dir: str | None = None
    """Where sessions go in place of Claude Code's config dir: ``<transcript_dir>/projects/<project>/<session>.jsonl``
    (default ``CLAUDE_CONFIG_DIR`` or ``~/.claude``, ``~`` being the env's ``HOME`` when ``env`` is given:
    docs/resume.md)."""
    shared_fs: bool | None = None
    """The working tree is on a filesystem every node mounts: file-touching agents may run anywhere
    (default ``COVEY_SHARED_FS=1``)."""
    teams: bool | None = None
    """Team tools (TeamCreate, SendMessage, Task*) and named teammates (default ``COVEY_ENABLE_TEAMS=1``)."""
    coordinator: bool | None = None
    """Coordinator mode (docs/coordinator.md): the main agent directs ``worker`` agents, every spawn
    is async, and it continues a worker with SendMessage (default ``COVEY_COORDINATOR_MODE=1`` or
    Claude Code's ``CLAUDE_CODE_COORDINATOR_MODE=1``)."""
    system_prompt: str | None = None
    """The main agent's system prompt in place of covey's (``--system-prompt``; "" for none)."""
    append_system_prompt: str | None = None
    """Text added after the main agent's system prompt (``--append-system-prompt``)."""
    tools: list[str] | None = None
    """The main agent's base tool set by name (``--tools``); None: every tool, []: none."""
    additional_directories: list[str] = Field(default_factory=list)
    """Directories besides the project that file tools may use without asking (``--add-dir``)."""
    plugin_dirs: list[str] = Field(default_factory=list)
    """Plugin folders loaded for this session (``--plugin-dir``, ``--plugin-dir-no-mcp``: covey starts
    no plugin's MCP servers), besides those settings enable."""
    project_config_root: str | None = None
    """The checkout ``cwd`` is a worktree of (``--project-config-root``): the project's settings,
    ``.claude`` agents, skills, commands and output styles, ``.mcp.json`` and ``CLAUDE_PROJECT_DIR``
    come from there instead of ``cwd``; the files the agents work on, and ``CLAUDE.md``, stay ``cwd``'s."""
    managed_settings: dict[str, Any] | None = None
    """Policy-tier settings from the program that starts covey (``--managed-settings``, the SDK's
    ``managedSettings``): only their restrictive keys apply, and only where the machine's managed
    settings are absent or say ``parentSettingsBehavior: "merge"`` (covey/settings/managed.py)."""
    permission_prompts: Literal["host", "none"] = "host"
    """Who answers permission prompts (``--permission-prompts``): ``host``, the session's asker;
    ``none``, nobody: what would be asked is denied at once, whatever asker was given."""
    permission_prompt_tool: str | None = None
    """An MCP tool of the session's servers that answers its permission prompts instead
    (``--permission-prompt-tool mcp__SERVER__TOOL``: covey/mcp/permission_tool.py)."""
    session_persistence: bool = True
    """False (``--no-session-persistence``): the session's transcripts and files go to a private
    temporary folder removed when the session ends; it cannot be resumed later."""
    debug: str | None = None
    """The session's debug log (covey's log records and each event's step line, timestamped): a
    file (``--debug-file``), or "" for Claude Code's ``<config>/debug/<session id>.txt`` (``--debug``)."""
    mcp_servers: list[Any] | dict[str, Any] | None = None
    """MCP servers (docs/mcp.md): ``{name: config}``, ``{"mcpServers": {...}}``, or a list of these and
    ``--mcp-config`` values (JSON text or a file); over the user, project and local configs."""
    strict_mcp_config: bool = False
    """Only ``mcp_servers``' servers, none from the config files (``--strict-mcp-config``)."""
    setting_sources: list[str] | None = None
    trust: bool | None = None
    """Trust the project folder for this run (``--trust``): its files' allow rules, hooks, plugins and
    agent settings apply as if the person had run ``covey trust`` (docs/permissions.md#trust)."""
    """Which settings files to read: ``user``, ``project``, ``local`` (``--setting-sources``); None: all."""
    session_id: str | None = None
    """The session's id (a UUID, ``--session-id``); default a new one."""
    resume: str | None = None
    """Continue the session with this id from its transcript (``--resume``)."""
    continue_conversation: bool = False
    """Continue the most recent session of this directory (``--continue``)."""
    resume_session_at: str | None = None
    """With ``resume`` and ``fork_session``: continue the conversation only up to and including the
    record with this uuid (``--resume-session-at``; docs/resume.md#truncating-resume)."""
    resume_drops_turn: str | None = None
    """With ``resume_session_at``: the uuid of the prompt whose turn the cut discards; the resume is
    refused unless everything after the cut is that turn (``--resume-drops-turn``)."""
    fork_session: bool = False
    """With ``resume`` / ``continue_conversation``: continue under a new session id (``--fork-session``)."""
    start_source: str | None = None
    """The first turn's SessionStart source when not ``startup``: ``clear`` for the session a
    conversation's ``/clear`` starts (set by the service, not a client)."""
    sdk_hooks: dict[str, Any] | None = None
    """Hooks a claude-agent-sdk client registered (its ``initialize``): ``{event: [{matcher,
    hookCallbackIds, timeout}]}``; ``on_hook_callback`` runs them."""
    on_mcp_message: Callable[..., Any] | None = None
    """``async (server_name, json_rpc_message) -> json_rpc_response``: reaches an SDK MCP server
    (``type: "sdk"``) in the claude-agent-sdk program (docs/mcp.md#sdk-servers)."""
    on_hook_callback: Callable[..., Any] | None = None
    """``async (callback_id, payload, tool_use_id) -> output``: runs an SDK hook callback."""
    child_events: bool = True
    """Whether the session's events include its sub-agents' (their messages, their own children's
    launches and ends, their waits): ``covey -p`` with text or json output and no ``--verbose``
    prints none of them, and turns them off so that no sync child ships them to its parent and
    on (docs/benchmarks.md). Prompts and every report still come."""
    agent_progress_summaries: bool | None = None
    """Sub-agents' progress summaries (``task_progress`` events with a ``summary``, docs/subagents.md#progress-summaries):
    a claude-agent-sdk program's ``agentProgressSummaries`` (its ``initialize``); None: settings'
    ``agentProgressSummaries``, else ``COVEY_AGENT_PROGRESS_SUMMARIES`` decides (off by default)."""
    forward_subagent_text: bool = True
    """Whether sub-agents' text and thinking reach the output: Claude Code's CLI prints them; a
    claude-agent-sdk program gets them only with ``forward_subagent_text`` (its ``initialize``
    says ``forwardSubagentText``), else only their tool_use / tool_result blocks."""
    session_mirror: bool = False
    """Every transcript record also streamed as a ``transcript_mirror`` line, for a claude-agent-sdk
    program's ``session_store`` (``--session-mirror``; docs/sdk.md)."""
    include_hook_events: bool = False
    """Also stream the main agent's hook runs: ``system`` lines ``hook_started`` and
    ``hook_response`` (``--include-hook-events``; docs/definitions.md#hooks)."""
    include_partial_messages: bool = False
    """Also stream the main agent's replies as they arrive: Claude Code's ``stream_event`` lines
    (``--include-partial-messages``). Only a streaming model (the Messages API) has them."""
    fallback_model: str | None = None
    """Where the Messages API requests of every agent go once their model is overloaded past its
    retries (``--fallback-model``; alias or id). A scripted model has no use for it."""
    effort: str | None = None
    """The main agent's reasoning effort (``--effort``: low, medium, high, xhigh, max); default
    ``CLAUDE_CODE_EFFORT_LEVEL``, then settings' ``effortLevel`` (docs/definitions.md#effort)."""
    thinking: str | None = None
    """Extended thinking for the main agent (``--thinking``: adaptive, enabled, disabled);
    default settings' ``alwaysThinkingEnabled`` (docs/cli.md#thinking-effort-and-betas)."""
    max_thinking_tokens: int | None = None
    """The main agent's thinking budget (``--max-thinking-tokens``; 0: no thinking). On a model
    that thinks adaptively, any other value turns adaptive thinking on."""
    thinking_display: str | None = None
    """How thinking comes back (``--thinking-display``: summarized, omitted), on models that take it."""
    betas: list[str] = Field(default_factory=list)
    """Beta headers every Messages API request carries (``--betas``)."""
    task_budget: int | None = None
    """The main agent's task budget in tokens (``--task-budget``): sent as the API's
    ``output_config.task_budget`` to the models that take it."""
    json_schema: dict[str, Any] | None = None
    """The final answer's JSON Schema (``--json-schema``): the main agent answers through the
    ``StructuredOutput`` tool and the result carries ``structured_output`` (docs/cli.md#structured-output)."""
    max_budget_usd: float | None = None
    """The session's dollar budget (``--max-budget-usd``): spawns past it are refused."""
    verbose: bool = False
    """Ray's own logs on stderr (``--verbose``)."""
    service: bool | None = None
    """Borrow the session's actors from the covey service (``COVEY_SERVICE=1``): its warm
    pool and ready session actors, on its Ray; a service is started if none runs."""


SERVICE_OWNED = frozenset({
    "cwd", "env", "asker", "on_permission", "on_hook_callback", "on_mcp_message", "service", "pool_size", "limits",
    "transcript_dir", "shared_fs", "model_id", "start_source",
})
"""SessionOptions fields the covey service sets itself for a run it serves (the client's cwd and
environment travel apart): a client (``covey -p``, ``Session(detach=True)``) cannot send them."""


def check_mode(mode: str) -> None:
    """``bubble`` is a run mode too: the main agent's prompts go to the session's asker, as in ``default``."""
    if mode not in RUN_MODES:
        raise UserError(f"permission mode {mode!r} is not one a session runs in: use one of {', '.join(RUN_MODES)}")
