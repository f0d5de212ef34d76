"""``covey mcp list`` and the SDK's ``mcp_status``: connect each configured server, list its
tools, and say how it went (as ``claude mcp list``'s health check does)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any, Mapping

from covey.mcp.approval import Approval
from covey.mcp.config import McpServerConfig
from covey.mcp.sources import session_servers
from covey.trust import decide


async def probe(servers: Mapping[str, McpServerConfig], *, cwd: str, env: Mapping[str, str] | None = None,
                timeout_s: float | None = None, relay: Any = None) -> list[dict[str, Any]]:
    """Each server's status entry (``name``, ``status``, ``error``, ``serverInfo``, ``tools``),
    connected side by side, then stopped."""
    from covey.mcp.client import McpConnection
    from covey.mcp.manager import wait_s

    timeout_s = wait_s(env) if timeout_s is None else timeout_s
    connections = [McpConnection(name, config, cwd=cwd, env=env, relay=relay).start() for name, config in servers.items()]
    try:
        await asyncio.gather(*(c.wait(timeout_s) for c in connections))
        return [_entry(c, timeout_s) for c in connections]
    finally:
        await asyncio.gather(*(c.close() for c in connections))


def _entry(connection: Any, timeout_s: float) -> dict[str, Any]:
    if connection.state == "pending":
        connection.state, connection.error = "failed", f"it did not connect within {timeout_s:g} s"
    entry = connection.status()
    if connection.state == "failed" and (tail := connection.stderr_tail()):
        entry["stderr"] = tail
    entry["tools"] = [{"name": tool.name, **({"description": tool.description} if tool.description else {})}
                      for tool in connection.tools]
    entry["config"] = _config(connection.config)
    return entry


def disabled_entry(name: str, config: McpServerConfig) -> dict[str, Any]:
    """A server turned off (``mcp_toggle``): Claude Code lists it, not connected, with no tools."""
    return {"name": name, "status": "disabled", "config": _config(config)}


def _config(config: McpServerConfig) -> dict[str, Any]:
    return {"type": config.type, **({"url": config.url} if config.url else {} if config.type == "sdk"
            else {"command": config.command, "args": list(config.args)})}


def project_server_names(folder: Path) -> list[str]:
    """The servers a project's ``.mcp.json`` names (read, never expanded nor started)."""
    from covey.mcp.sources import project_config

    return list(project_config(folder, []))


def mcp_list(cwd: str, given: list[Any], *, strict: bool, env: dict[str, str]) -> int:
    """Print every configured server and its state; 1 if one failed."""
    from covey.settings.managed import managed_dir
    from covey.settings.merged import Settings

    root = Path(cwd).resolve()
    trust = decide(root, home=Path(env.get("HOME") or Path.home()), env=env)
    settings = Settings.load(root, managed_dir=managed_dir(), trusted=trust.trusted,
                             config=env.get("CLAUDE_CONFIG_DIR"))
    found = session_servers(root, env=env, given=given, strict=strict, locked="mcp" in settings.strict_plugin_only,
                            approval=Approval.of(trust, settings.mcp_approved, settings.mcp_disabled))
    if line := found.set_aside.line(root):
        print(f"covey: {line}", file=sys.stderr)
    for warning in found.warnings:
        print(f"covey: {warning}", file=sys.stderr)
    if not found.servers:
        print("No MCP servers configured (.mcp.json, ~/.claude.json, --mcp-config).")
        return 0
    print("Checking MCP server health...\n")
    entries = asyncio.run(probe(found.servers, cwd=str(root), env=env))
    for entry, config in zip(entries, found.servers.values()):
        print(_line(entry, config))
    return 1 if any(entry["status"] != "connected" for entry in entries) else 0


def _line(entry: dict[str, Any], config: McpServerConfig) -> str:
    where = (config.url or "") if config.type != "stdio" else " ".join([config.command or "", *config.args])
    where += f" ({config.type})" if config.type != "stdio" else ""
    if entry["status"] == "connected":
        names = ", ".join(tool["name"] for tool in entry["tools"])
        return f"{entry['name']}: {where} - ✓ Connected ({len(entry['tools'])} tools: {names})"
    text = f"{entry['name']}: {where} - ✗ Failed: {entry.get('error')}"
    if entry.get("stderr"):
        text += "\n    stderr: " + entry["stderr"].replace("\n", "\n    ")
    return text
