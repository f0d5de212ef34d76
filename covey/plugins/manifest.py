"""A plugin's ``.claude-plugin/plugin.json``: its name and where its parts are (docs/definitions.md#plugins).

The manifest is optional, as in Claude Code: without one the plugin is named
after its folder and its parts are found in the default places. Unknown keys
(``author``, ``keywords``, ``lspServers``...) are Claude Code's and are ignored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from covey.common.safe_files import READ_ERRORS, read_json, reason

MANIFEST = Path(".claude-plugin") / "plugin.json"

PathField = str | list[str] | None


class ManifestError(Exception):
    """A plugin.json that cannot be used: names the file and the field."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(path, message)
        self.path, self.message = path, message

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class PluginManifest(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    name: str = Field(min_length=1)
    """The plugin's name: the namespace of its agents, skills and commands (``name:part``)."""
    version: str | None = None
    description: str | None = None
    commands: PathField = None
    """Command files or folders; given, they replace the default ``commands/``."""
    agents: PathField = None
    """Agent files or folders; given, they replace the default ``agents/``."""
    skills: PathField = None
    """Skill folders, in addition to the default ``skills/`` (always scanned)."""
    hooks: str | list[str] | dict[str, Any] | None = None
    """Hook files, or hooks inline, in addition to ``hooks/hooks.json``."""
    mcp_servers: Any = Field(default=None, alias="mcpServers")
    """MCP servers (covey does not run MCP servers yet: reported, not used)."""


def read_manifest(root: Path, default_name: str | None = None) -> PluginManifest:
    """``root``'s manifest, or one naming the plugin ``default_name`` (else its folder) when it has none."""
    path = root / MANIFEST
    if not path.exists() and not path.is_symlink():
        return PluginManifest(name=default_name or root.name)
    try:
        data = read_json(path, what="a plugin manifest")
    except json.JSONDecodeError as exc:
        raise ManifestError(str(path), reason(exc)) from None
    except READ_ERRORS as exc:
        raise ManifestError(str(path), f"cannot read: {reason(exc)}") from None
    if not isinstance(data, dict):
        raise ManifestError(str(path), f"must hold a JSON object, not {type(data).__name__}")
    try:
        return PluginManifest.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = str(problem["loc"][0]) if problem["loc"] else "manifest"  # not the union member's name
        raise ManifestError(str(path), f"field {where!r}: {' '.join(problem['msg'].split())}") from None


def as_list(value: PathField) -> list[str]:
    """A path field as a list (a string is one path)."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)
