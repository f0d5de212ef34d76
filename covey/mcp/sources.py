"""Where a session's MCP servers come from, in Claude Code's scopes.

Lowest to highest precedence (a name in a higher scope replaces the lower one):
user (``~/.claude.json``'s ``mcpServers``), project (``.mcp.json`` in the project
directory: only the servers the person approved, in a folder they trust, covey/mcp/approval.py), local (``~/.claude.json``'s ``projects[<project dir>].mcpServers``), then
what the caller passes (``--mcp-config``, ``Session(mcp_servers=...)``).
``--strict-mcp-config`` keeps only the caller's; a managed
``strictPluginOnlyCustomization`` locking ``mcp`` drops user, project and local.
``--setting-sources`` without ``project`` drops ``.mcp.json``; ``~/.claude.json`` is Claude Code's
global config, which it reads whatever the setting sources say, so its user and local servers stay.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from covey.common.safe_files import READ_ERRORS, read_json, reason
from covey.errors import UserError
from covey.mcp.approval import Approval, project_servers
from covey.mcp.config import McpServerConfig, parse_servers
from covey.settings.files import Sources, reads
from covey.trust import SetAside


@dataclass
class McpSources:
    """The servers found, by name, and what was skipped (each a warning naming file and why)."""

    servers: dict[str, McpServerConfig] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    set_aside: SetAside = field(default_factory=SetAside)
    """An untrusted folder's ``.mcp.json`` servers, which it did not load."""
    program: dict[str, dict[str, Any]] | None = None
    """The servers as they answered at the session's first turn (the program's in-process ones
    through its relay): name → status entry, tools listed (``covey.session.main_agent.ask_program_servers``);
    None until asked."""
    disabled: dict[str, McpServerConfig] = field(default_factory=dict)
    """Servers the program turned off (the SDK's ``mcp_toggle``): out of ``servers``, so no agent
    started from then on connects them, until turned back on."""

    def add(self, servers: dict[str, McpServerConfig], warnings: list[str]) -> None:
        self.servers.update(servers)
        self.warnings.extend(warnings)

    def toggle(self, name: str, enabled: bool) -> bool:
        """Turn one server off or back on; False if the session has no server of that name."""
        if not enabled and name in self.servers:
            self.disabled[name] = self.servers.pop(name)
        elif enabled and name in self.disabled:
            self.servers[name] = self.disabled.pop(name)
        return name in self.servers or name in self.disabled


def session_servers(cwd: Path, *, home: Path | None = None, env: Mapping[str, str],
                    given: Sequence[Any] = (), strict: bool = False, locked: bool = False,
                    sources: Sources = None, approval: Approval | None = None) -> McpSources:
    """Every server the session may use. ``given``: ``--mcp-config`` values and API dicts, in order;
    ``sources``: the kinds of file read (``--setting-sources``; None: all); ``approval``: which of
    ``.mcp.json``'s servers may start (covey/mcp/approval.py; None: none is approved)."""
    found = McpSources()
    approval = approval or Approval(cwd.resolve())
    if not strict and not locked:
        user_file = (home or Path.home()) / ".claude.json"
        user = _read_json(user_file, found.warnings)
        found.add(*parse_servers(user.get("mcpServers"), env, source=f"user config {str(user_file)!r}"))
        project = cwd / ".mcp.json"
        if reads(sources, "project"):
            raw, refused = project_servers(project_config(cwd, found.warnings), approval, str(project), found.set_aside)
            found.add(*parse_servers(raw or None, env, source=f"project config {str(project)!r}"))
            found.warnings.extend(refused)
        projects = user.get("projects")
        local = projects.get(str(cwd.resolve())) if isinstance(projects, dict) else None
        local = local if isinstance(local, dict) else {}
        found.add(*parse_servers(local.get("mcpServers"), env, source=f"local config {str(user_file)!r}"))
    elif locked:
        found.warnings.append("MCP servers of user, project and local configs not loaded: the managed "
                              "strictPluginOnlyCustomization locks mcp")
    for index, item in enumerate(given):
        found.add(*_given(item, env, index))
    return found


def project_config(folder: Path, warnings: list[str]) -> dict[str, Any]:
    """The ``mcpServers`` object of the project's ``.mcp.json``, as written (empty if none)."""
    servers = _read_json(folder / ".mcp.json", warnings).get("mcpServers")
    if servers is not None and not isinstance(servers, dict):
        warnings.append(f"project config {str(folder / '.mcp.json')!r}: 'mcpServers' must be an object of servers "
                        "by name; ignored")
    return servers if isinstance(servers, dict) else {}


def _given(item: Any, env: Mapping[str, str], index: int) -> tuple[dict[str, McpServerConfig], list[str]]:
    """One ``--mcp-config`` (a JSON string or a file, holding ``{"mcpServers": ...}``) or API dict
    (``{name: config}``, or the same ``{"mcpServers": ...}`` shape)."""
    if isinstance(item, (str, Path)):
        text, source = str(item), f"--mcp-config #{index + 1}"
        if not text.lstrip().startswith("{"):
            path = Path(text).expanduser()
            if not path.is_file():
                raise UserError(f"--mcp-config: {text!r} is neither a JSON object nor a file")
            text, source = path.read_text(encoding="utf-8"), f"--mcp-config file {str(path)!r}"
        try:
            item = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UserError(f"{source} is not valid JSON: {exc.msg} at line {exc.lineno}") from exc
    else:
        source = "mcp_servers passed to the Python API"
    if not isinstance(item, dict):
        raise UserError(f"{source} must hold a JSON object")
    servers, warnings = parse_servers(item.get("mcpServers", item), env, source=source)
    return servers, warnings


def _read_json(path: Path, warnings: list[str]) -> dict[str, Any]:
    """A config file's object; missing is empty; unreadable or malformed is skipped with a warning
    (one bad file never stops the session)."""
    if not path.exists():
        return {}
    try:
        data = read_json(path, what="an MCP config")
    except READ_ERRORS as exc:
        warnings.append(f"MCP config {str(path)!r} cannot be read ({reason(exc)}); its servers not loaded")
        return {}
    if not isinstance(data, dict):
        warnings.append(f"MCP config {str(path)!r} holds a JSON {type(data).__name__}, not an object; "
                        "its servers not loaded")
        return {}
    return data
