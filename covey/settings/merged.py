"""Settings merged from Claude Code's (and covey's) settings files, then the CLI / API.

Lowest to highest: ``~/.claude/settings.json`` (``$CLAUDE_CONFIG_DIR/settings.json`` when set), ``~/.covey/settings.json``,
``.claude/settings.json``, ``.covey/settings.json``, ``.claude/settings.local.json``,
``.covey/settings.local.json``, then ``extra``, then the managed (policy) files, which
nothing overrides (covey/settings/managed.py). Rule lists concatenate (each rule
remembers its file); scalars are overridden; ``env``, ``modelPrices`` and
``enabledPlugins`` merge by key; ``hooks`` concatenate per event. A managed
``strictPluginOnlyCustomization`` locking ``hooks`` drops the hooks of the user,
project and local files.

What settings may not do against the person: see the fields ``refused_bypass``,
``bypass_disabled``, ``managed_rules_only`` and ``managed_hooks_only`` (docs/definitions.md).

Each file's hooks are validated as it is read, so a malformed hook fails the
session before Ray starts, naming the file; what covey skips (an event or hook
type it lacks) lands in ``Settings.warnings``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel, ConfigDict, Field

from covey.hooks.read import HookWarning, read_hooks
from covey.permissions.decisions import PermissionMode
from covey.permissions.rule_checks import rule_warnings
from covey.permissions.rules import Rule, RuleError, parse_rule
from covey.settings.files import SETTING_FILES, SETTING_SOURCES, Wire, read_file, rule_root, setting_labels, validate_wire
from covey.settings.grants import PROJECT_LABELS, restrictive_part
from covey.settings.managed import PARENT, locked_surfaces, managed_files, parent_applies, restrictive_only
from covey.trust.decision import SetAside


class PermissionSettings(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    allow: list[Rule] = []
    """Rules that allow a call without asking."""
    deny: list[Rule] = []
    """Rules that refuse a call; they beat allow rules."""
    ask: list[Rule] = []
    """Rules that always ask a person first."""
    default_mode: PermissionMode | None = Field(default=None, alias="defaultMode")
    """The mode a session starts in unless the CLI / API says otherwise."""
    block_reads_outside_working_directories: bool = False
    """Reads outside the working directories are refused instead of asked (stricter from any file)."""


class Settings(BaseModel):
    """The merged settings of one session."""

    model_config = ConfigDict(populate_by_name=True)

    permissions: PermissionSettings = Field(default_factory=PermissionSettings)
    env: dict[str, str] = {}
    """Environment variables set for the session's tools."""
    model: str | None = None
    """The main agent's model (alias or full id)."""
    model_prices: dict[str, dict[str, float]] = Field(default={}, alias="modelPrices")
    """Per-model prices (USD per million tokens) that override the built-in table."""
    model_limits: dict[str, dict[str, int]] = Field(default={}, alias="modelLimits")
    """Per-model token limits (``contextWindow``, ``maxOutputTokens``) over the built-in table (docs/compaction.md)."""
    rate_limits: dict[str, float] = Field(default={}, alias="rateLimits")
    """covey's ``rateLimits``: requests and tokens per minute set by hand, for gateways that send no
    rate-limit headers, and the patience of a waiting request (docs/rate-limits.md); a later file
    overrides a key an earlier one set."""
    auto_compact_enabled: bool | None = Field(default=None, alias="autoCompactEnabled")
    """``false`` turns automatic compaction off (docs/compaction.md); None: on."""
    always_thinking: bool | None = Field(default=None, alias="alwaysThinkingEnabled")
    """``true``: the main agent thinks unless a flag says otherwise (docs/cli.md#thinking-effort-and-betas)."""
    effort_level: str | None = Field(default=None, alias="effortLevel")
    """The main agent's reasoning effort unless ``--effort`` or ``CLAUDE_CODE_EFFORT_LEVEL`` says otherwise."""
    hooks: dict[str, list[Any]] = {}
    """Hook matchers per event, as written minus what covey skips (validated when read)."""
    sources: list[str] = []
    """Labels of the files read, lowest precedence first (plus ``cliArg``)."""
    warnings: list[HookWarning] = []
    """What the files hold that covey does not support and skipped, e.g. a ``PreCompact`` hook,
    an invalid permission rule, or one that never matches (``Write(path)``)."""
    enabled_plugins: dict[str, str] = {}
    """Plugins ``enabledPlugins`` turns on (``name@marketplace``), each with the file that did."""
    strict_plugin_only: list[str] = []
    """The surfaces a managed ``strictPluginOnlyCustomization`` locks (skills, agents, hooks, mcp)."""
    managed_dir: str | None = None
    """The managed settings folder read (its ``.claude/agents`` and ``.claude/skills`` are managed too)."""
    fork_subagent: bool | None = Field(default=None, alias="forkSubagent")
    """covey's ``forkSubagent`` key: forking on or off, over the env switches (None: they decide)."""
    queue_spawns: bool | None = Field(default=None, alias="queueSpawns")
    """covey's ``queueSpawns`` key: queued spawns past the concurrency limit on or off, over
    ``COVEY_QUEUE_SPAWNS`` (None: it decides; docs/subagents.md#queued-spawns)."""
    agent_progress_summaries: bool | None = Field(default=None, alias="agentProgressSummaries")
    """Sub-agents' progress summaries on or off (docs/subagents.md#progress-summaries)."""
    output_style: str | None = Field(default=None, alias="outputStyle")
    """The main agent's output style by name (docs/definitions.md#output-styles); None: the default."""
    output_style_from: str | None = None
    """The file (or ``--settings``) whose ``outputStyle`` applies: an unknown name's warning names it."""
    refused_bypass: str | None = None
    """A project or local file whose ``defaultMode: bypassPermissions`` was not applied: a cloned
    repository must not switch off the person's permission checks."""
    bypass_disabled: str | None = None
    """The file whose ``disableBypassPermissionsMode: "disable"`` makes bypass unavailable (None: available)."""
    managed_rules_only: bool = False
    """Managed ``allowManagedPermissionRulesOnly``: only the managed files' allow / deny / ask rules apply."""
    managed_hooks_only: bool = False
    """Managed ``allowManagedHooksOnly``: only the managed files' hooks (and an SDK client's) run."""
    mcp_approved: set[str] = set()
    """``.mcp.json`` servers approved by ``enabledMcpjsonServers`` (``*``: ``enableAllProjectMcpServers``)
    of a file outside the repository: user, local (of a trusted folder), managed or ``--settings``."""
    mcp_disabled: set[str] = set()
    """``.mcp.json`` servers ``disabledMcpjsonServers`` turns off, from any file."""
    sandbox_enabled_by: str | None = None
    """The file whose ``sandbox.enabled: true`` asks for a command sandbox covey does not have."""
    sandbox_required: bool = False
    """``sandbox.failIfUnavailable: true``: no session without a sandbox."""
    trusted: bool = True
    """Whether the project folder is trusted (covey/trust/): False, its files' grants were set aside."""
    set_aside: SetAside = Field(default_factory=SetAside)
    """What an untrusted folder's project and local files would have granted (covey/trust/)."""

    @classmethod
    def load(cls, cwd: Path | str, *, home: Path | str | None = None, extra: dict[str, Any] | None = None,
             sources: Iterable[str] | None = None, managed_dir: Path | str | None = None,
             parent_managed: dict[str, Any] | None = None, project: Path | str | None = None,
             trusted: bool = True, config: Path | str | None = None) -> Settings:
        """Read and merge every settings file that exists; a bad file is a :class:`UserError`.
        ``sources``: only these kinds of file (Claude Code's ``--setting-sources``:
        ``user``, ``project``, ``local``); None: all of them. ``managed_dir``: the managed
        settings folder, always read (None: none); ``parent_managed``: the program's managed tier
        (``--managed-settings``); ``project``: where the project and local files are (default ``cwd``);
        ``trusted``: False keeps only what the project and local files restrict (covey/settings/grants.py);
        ``config``: Claude Code's config folder, the run's ``CLAUDE_CONFIG_DIR`` (None: ``<home>/.claude``)."""
        wanted = setting_labels(sources)
        bases = {"home": Path(home or Path.home()).resolve(), "project": Path(project or cwd).resolve()}
        bases["config"] = Path(config).expanduser().resolve() if config else bases["home"] / ".claude"
        settings, seen = cls(trusted=trusted), set()
        managed: list[tuple[Any, Wire]] = [(path, read_file(path)) for path in managed_files(Path(managed_dir))] \
            if managed_dir else []
        managed += settings._parent_tier(parent_managed, managed)
        settings._lock(managed)
        for label, base, relative in SETTING_FILES:
            path = bases[base] / relative
            if label in wanted and path.exists() and path not in seen:  # home == cwd must not load a file twice
                seen.add(path)
                wire = read_file(path)
                if not trusted and label in PROJECT_LABELS:
                    wire = restrictive_part(wire, str(path), settings.set_aside)
                settings._merge(wire, f"{label}:{path}", root=rule_root(label, path, bases), where=str(path))
        here = Path(cwd).resolve()
        if extra:
            where = "settings passed by the CLI / API"
            settings._merge(validate_wire(extra, where), "cliArg", root=here, where=where)
        for path, wire in managed:
            settings._merge(wire, f"policySettings:{path}", root=here, where=str(path))
        settings.managed_dir = str(managed_dir) if managed_dir else None
        return settings

    def _parent_tier(self, parent: dict[str, Any] | None, admin: list[tuple[Any, Wire]]) -> list[tuple[Any, Wire]]:
        """The program's managed tier (as Claude Code's parent tier), restrictive keys only, beside the
        machine's managed files only where they say ``parentSettingsBehavior: "merge"``."""
        if not parent:
            return []
        if not parent_applies(admin):
            self.warnings.append(HookWarning(PARENT, "managedSettings", "not applied: this machine's managed "
                                             "settings apply alone (none says parentSettingsBehavior: \"merge\")"))
            return []
        rules_only = any(wire.managed_rules_only is True for _, wire in admin)
        return [(PARENT, validate_wire(restrictive_only(parent, admin_rules_only=rules_only), PARENT))]

    def _lock(self, managed: list[tuple[Path, Wire]]) -> None:
        """The surfaces the managed files lock (the last file that sets the key decides), and
        whether only their rules and hooks apply (any managed file that says ``true``)."""
        for path, wire in managed:
            self.managed_rules_only = self.managed_rules_only or wire.managed_rules_only is True
            self.managed_hooks_only = self.managed_hooks_only or wire.managed_hooks_only is True
            if wire.strict_plugin_only is not None:
                locked, problem = locked_surfaces(wire.strict_plugin_only)
                self.strict_plugin_only = sorted(locked)
                if problem:
                    self.warnings.append(HookWarning(str(path), "strictPluginOnlyCustomization", problem))

    def add_hooks(self, hooks: dict[str, Any], where: str) -> None:
        """Hooks from elsewhere than a file (a claude-agent-sdk client's), after the files'."""
        parsed = read_hooks(hooks, where)
        for event, matchers in parsed.kept.items():
            self.hooks.setdefault(event, []).extend(matchers)
        self.warnings.extend(parsed.warnings)

    def _merge(self, wire: Wire, source: str, *, root: Path, where: str) -> None:
        self._merge_rules(wire, source, root=root, where=where)
        self._merge_mode(wire, source, where)
        self.model = wire.model or self.model
        self.fork_subagent = wire.fork_subagent if wire.fork_subagent is not None else self.fork_subagent
        self.queue_spawns = wire.queue_spawns if wire.queue_spawns is not None else self.queue_spawns
        if wire.agent_progress_summaries is not None:
            self.agent_progress_summaries = wire.agent_progress_summaries
        self.env.update(wire.env)
        self.model_prices.update(wire.model_prices)
        self.model_limits.update(wire.model_limits)
        if wire.rate_limits is not None:
            self.rate_limits.update(wire.rate_limits.model_dump(by_alias=True, exclude_unset=True))
        if wire.auto_compact_enabled is not None:
            self.auto_compact_enabled = wire.auto_compact_enabled
        self.always_thinking = wire.always_thinking if wire.always_thinking is not None else self.always_thinking
        self.effort_level = wire.effort_level or self.effort_level
        if wire.output_style is not None:
            self.output_style, self.output_style_from = wire.output_style, where
        if isinstance(sandbox := wire.sandbox, dict):  # a later file's key wins, as settings merge
            self.sandbox_enabled_by = (where if sandbox["enabled"] is True else None) if "enabled" in sandbox \
                else self.sandbox_enabled_by
            self.sandbox_required = sandbox.get("failIfUnavailable", self.sandbox_required) is True
        self._merge_hooks(wire, source, where)
        self._merge_plugins(wire, source, where)
        self._merge_mcp(wire, source, where)
        self.sources.append(source)

    def _merge_mcp(self, wire: Wire, source: str, where: str) -> None:
        """Approvals of ``.mcp.json`` servers count from files outside the repository only."""
        self.mcp_disabled.update(wire.mcp_disabled)
        approves = [*wire.mcp_enabled, *(["*"] if wire.mcp_enable_all else [])]
        key = "enabledMcpjsonServers" if wire.mcp_enabled else "enableAllProjectMcpServers"
        if approves and source.startswith("projectSettings"):  # (an untrusted folder's were set aside already)
            self.warnings.append(HookWarning(where, key, "not applied: a repository cannot approve its own MCP servers; "
                                             "approve them with `covey mcp approve`"))
        elif approves:
            self.mcp_approved.update(approves)

    def _merge_rules(self, wire: Wire, source: str, *, root: Path, where: str) -> None:
        written = wire.permissions.allow or wire.permissions.deny or wire.permissions.ask
        if written and self.managed_rules_only and not source.startswith("policySettings"):
            self.warnings.append(HookWarning(where, "permissions", "allow / deny / ask rules not applied: the managed "
                                                                   "allowManagedPermissionRulesOnly lets only managed rules apply"))
            return
        for behavior in ("allow", "deny", "ask"):
            for index, text in enumerate(getattr(wire.permissions, behavior)):
                if rule := self._rule(text, behavior, source, root, f"permissions.{behavior}[{index}]", where):
                    getattr(self.permissions, behavior).append(rule)

    def _merge_mode(self, wire: Wire, source: str, where: str) -> None:
        label = source.partition(":")[0]
        mode = wire.permissions.default_mode
        if mode == "bypassPermissions" and label in _UNTRUSTED_FOR_BYPASS:
            self.refused_bypass = where  # the session warns, unless the caller chose a mode itself
        elif mode is not None:  # a later file's mode would have replaced the refused one anyway
            self.permissions.default_mode, self.refused_bypass = mode, None
        if wire.permissions.block_outside_reads is not None:
            self.permissions.block_reads_outside_working_directories = wire.permissions.block_outside_reads
        disable = wire.permissions.disable_bypass
        if disable == "disable":
            self.bypass_disabled = where
        elif disable is not None:
            self.warnings.append(HookWarning(where, "permissions.disableBypassPermissionsMode",
                                             f"expected \"disable\", got {disable!r}; ignored"))

    def _merge_hooks(self, wire: Wire, source: str, where: str) -> None:
        if wire.hooks and self.managed_hooks_only and not source.startswith("policySettings"):
            self.warnings.append(HookWarning(where, "hooks", "not loaded: the managed allowManagedHooksOnly "
                                                             "lets only managed hooks run"))
            return
        if wire.hooks and "hooks" in self.strict_plugin_only and source.split(":")[0] in _LOCKABLE:
            self.warnings.append(HookWarning(where, "hooks", "not loaded: the managed strictPluginOnlyCustomization "
                                                             "locks hooks to plugins and managed settings"))
            return
        hooks = read_hooks(wire.hooks, where, short_form=False)
        for event, matchers in hooks.kept.items():
            self.hooks.setdefault(event, []).extend(matchers)
        self.warnings.extend(hooks.warnings)

    def _merge_plugins(self, wire: Wire, source: str, where: str) -> None:
        for plugin_id, value in wire.enabled_plugins.items():
            if value is True or (isinstance(value, list) and value):
                self.enabled_plugins[plugin_id] = where
            else:
                self.enabled_plugins.pop(plugin_id, None)
        managed_only = {"strictPluginOnlyCustomization": wire.strict_plugin_only,
                        "allowManagedPermissionRulesOnly": wire.managed_rules_only, "allowManagedHooksOnly": wire.managed_hooks_only}
        for key in (k for k, value in managed_only.items() if value is not None and not source.startswith("policySettings")):
            self.warnings.append(HookWarning(where, key, "only managed settings can set it; ignored"))

    def _rule(self, text: str, behavior: str, source: str, root: Path, field: str, where: str) -> Rule | None:
        """One rule of a file; as Claude Code, an invalid one is skipped with a warning, not fatal."""
        try:
            rule = parse_rule(text, source=source, root=root, behavior=behavior)
        except RuleError as exc:
            self.warnings.append(HookWarning(where, field, f"invalid permission rule {text!r} skipped: {exc.reason}"))
            return None
        label = source.partition(":")[0]
        for message in rule_warnings(rule.tool, rule.content, behavior, label):
            self.warnings.append(HookWarning(where, field, f"permission {behavior} rule {message}"))
        return rule


_LOCKABLE = set(SETTING_SOURCES.values())
"""The files a hooks lock applies to: user, project and local settings."""
_UNTRUSTED_FOR_BYPASS = {"projectSettings", "localSettings"}
"""Files a cloned repository can bring (a committed ``settings.local.json`` too): their ``defaultMode:
bypassPermissions`` is not applied. User, managed and caller-passed settings may set it."""
