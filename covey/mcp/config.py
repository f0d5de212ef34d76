"""MCP server configurations: the shapes Claude Code reads, and ``${VAR}`` expansion.

A server is ``stdio`` (``command``, ``args``, ``env``; the default when ``type`` is
absent) or ``http`` (``url``, ``headers``; Claude Code's streamable HTTP). ``sse`` is
accepted as a type and refused when connecting: the SDK's SSE transport is
deprecated and covey does not run it.
"""

from __future__ import annotations

import re
from typing import Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from covey.errors import UserError


class McpServerConfig(BaseModel):
    """One server, as ``.mcp.json``'s ``mcpServers`` entries write it (unknown keys ignored)."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    type: Literal["stdio", "http", "sse", "sdk"] = "stdio"
    """``sdk``: a server in the claude-agent-sdk program's process (``covey/mcp/relay.py``)."""
    command: str | None = None
    """stdio: the executable (looked up on ``PATH``)."""
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    """stdio: set over the run's environment for the server process."""
    cwd: str | None = None
    """stdio: the server's working directory (None: the agent's)."""
    url: str | None = None
    """http: the streamable-HTTP endpoint."""
    headers: dict[str, str] = Field(default_factory=dict)
    source: str = ""
    """Where it was configured (a file, ``--mcp-config``, an agent definition): errors name it."""

    def check(self, name: str) -> None:
        """A clear error for a config that cannot run (no command, no URL)."""
        if self.type == "sdk":
            return  # the program that started the session serves it: nothing to run here
        if self.type == "stdio" and not self.command:
            raise UserError(f"MCP server {name!r} ({self.source or 'config'}): a stdio server needs a 'command'")
        if self.type != "stdio" and not self.url:
            raise UserError(f"MCP server {name!r} ({self.source or 'config'}): an {self.type} server needs a 'url'")


_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand(text: str, env: Mapping[str, str], *, where: str) -> str:
    """``${VAR}`` and ``${VAR:-default}`` as Claude Code expands them; a bare ``$VAR`` stays as
    written. A variable that is unset and has no default is an error, as Claude Code's
    "missing environment variables" failure of the whole config."""

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise UserError(f"{where}: environment variable {name!r} is not set and has no default")

    return _VAR.sub(one, text)


def expanded(raw: Mapping[str, Any], env: Mapping[str, str], *, where: str) -> dict[str, Any]:
    """The fields Claude Code expands (command, args, env, url, headers), expanded."""
    out = dict(raw)
    for key in ("command", "url"):
        if isinstance(out.get(key), str):
            out[key] = expand(out[key], env, where=f"{where}.{key}")
    if isinstance(out.get("args"), list):
        out["args"] = [expand(a, env, where=f"{where}.args") if isinstance(a, str) else a for a in out["args"]]
    for key in ("env", "headers"):
        if isinstance(out.get(key), dict):
            out[key] = {k: expand(v, env, where=f"{where}.{key}.{k}") if isinstance(v, str) else v
                        for k, v in out[key].items()}
    return out


def parse_servers(raw: Any, env: Mapping[str, str], *, source: str) -> tuple[dict[str, McpServerConfig], list[str]]:
    """An ``mcpServers`` object: the servers that parse, and a warning per one that does not
    (a bad server never stops the others, nor the session)."""
    if raw is None:
        return {}, []
    if not isinstance(raw, dict):
        return {}, [f"{source}: 'mcpServers' must be an object of servers by name; ignored"]
    servers: dict[str, McpServerConfig] = {}
    warnings: list[str] = []
    for name, body in raw.items():
        try:
            servers[name] = parse_server(name, body, env, source=source)
        except UserError as exc:
            warnings.append(f"{exc}; MCP server not loaded")
    return servers, warnings


def parse_server(name: str, body: Any, env: Mapping[str, str], *, source: str) -> McpServerConfig:
    where = f"{source}: mcpServers.{name}"
    if not isinstance(body, dict):
        raise UserError(f"{where} must be an object, not {type(body).__name__}")
    try:
        config = McpServerConfig.model_validate({**expanded(body, env, where=where), "source": source})
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise UserError(f"{where}: field {field!r}: {first['msg']}") from exc
    config.check(name)
    return config
