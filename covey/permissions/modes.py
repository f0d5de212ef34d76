"""Permission modes: Claude Code's names, written here once."""

from __future__ import annotations

from typing import Literal, get_args

PermissionMode = Literal["default", "acceptEdits", "bypassPermissions", "dontAsk", "plan", "bubble", "auto"]
"""Every mode a run, a settings file (``defaultMode``) or a definition (``permissionMode``) may name.
``bubble``: a child asks its parent's asker; ``auto``: read as ``default`` (it keeps a
parent's mode for its children, as Claude Code's does)."""

MODES: tuple[str, ...] = get_args(PermissionMode)

AgentToolMode = Literal["acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"]
"""What the Agent tool's ``mode`` field offers the model (Claude Code's schema): ``bubble`` is
for forks, which the runtime sets itself."""

RUN_MODES: tuple[str, ...] = tuple(mode for mode in MODES if mode != "bubble")
"""What ``covey --permission-mode`` and ``set_permission_mode`` take: every mode but ``bubble``,
which is a sub-agent's (it asks its parent)."""

STICKY_MODES: tuple[str, ...] = ("bypassPermissions", "acceptEdits", "auto")
"""A parent in these modes keeps them for its children, whatever the definition says."""
