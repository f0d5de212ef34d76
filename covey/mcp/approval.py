"""Which of a project's ``.mcp.json`` servers a session may start: none in an untrusted folder, and
in a trusted one only those the person approved outside the repository (``covey mcp approve``,
``enabledMcpjsonServers`` / ``enableAllProjectMcpServers`` in user or local settings, or Claude
Code's approvals in ``~/.claude.json``); never one whose config names a credential covey keeps."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection

from covey.common.subprocess_env import SCRUBBED
from covey.trust import ALL, SetAside, Trust
from covey.trust.decision import printable

CREDENTIALS = SCRUBBED | {"RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_AUTH_MODE"}
"""Variables a project's config may not have expanded into it: the API's and Ray's credentials and
the cloud secrets covey keeps from commands."""
_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class Approval:
    """A session's answer for its project's ``.mcp.json``."""

    folder: Path
    trusted: bool = True
    approved: frozenset[str] = frozenset()
    disabled: frozenset[str] = frozenset()

    @classmethod
    def of(cls, trust: Trust, approved: Collection[str] = (), disabled: Collection[str] = ()) -> Approval:
        """From the run's trust and the approvals its settings (outside the repository) hold."""
        return cls(trust.folder, trust.trusted, frozenset({*trust.approved, *approved}), frozenset(disabled))

    def admits(self, name: str) -> bool:
        return self.trusted and name not in self.disabled and (name in self.approved or ALL in self.approved)


def credential_named(body: Any) -> str | None:
    """The first credential a server's config would expand (``${ANTHROPIC_API_KEY}``), or None."""
    text = json.dumps(body, default=str)
    return next((name for name in _REFERENCE.findall(text) if name in CREDENTIALS), None)


def project_servers(raw: Any, approval: Approval, where: str, aside: SetAside) -> tuple[dict[str, Any], list[str]]:
    """The ``mcpServers`` entries of a project's ``.mcp.json`` the session may load, and a warning
    for what it left out (servers waiting for approval, a config naming a credential)."""
    if not isinstance(raw, dict):
        return {}, []
    if not approval.trusted:
        if raw:
            aside.add(f"MCP servers ({', '.join(raw)})", where)  # (``add`` escapes control characters)
        return {}, []
    kept: dict[str, Any] = {}
    pending: list[str] = []
    warnings: list[str] = []
    for name, body in raw.items():
        if (credential := credential_named(body)) is not None:
            warnings.append(f"{where}: mcpServers.{printable(name)} names the credential {credential}, which covey never "
                            "expands into a project's config; MCP server not loaded")
        elif approval.admits(name):
            kept[name] = body
        elif name not in approval.disabled:
            pending.append(name)
    if pending:
        pending = [printable(name) for name in pending]
        names = " ".join(pending)
        warnings.append(f"{where}: MCP servers not approved, so not started: {', '.join(pending)}; "
                        f"approve them with `covey mcp approve {names}` (in {approval.folder})")
    return kept, warnings
