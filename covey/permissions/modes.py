"""Permission modes: Claude Code's names, written here once."""

from __future__ import annotations

from typing import Literal, get_args

PermissionMode = Literal["default", "acceptEdits", "bypassPermissions", "dontAsk", "plan", "bubble", "auto"]
"""Every mode a run, a settings file (``defaultMode``) or a definition (``permissionMode``) may name.
``bubble``: prompts go up to the root's asker (the person); for the main agent, which has no
parent, that is ``default``. ``auto``: read as ``default``, since covey has no safety classifier:
where Claude Code's classifier would decide, covey asks (it keeps a parent's mode for its
children, as Claude Code's does)."""

MODES: tuple[str, ...] = get_args(PermissionMode)

AgentToolMode = Literal["acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan"]
"""What the Agent tool's ``mode`` field offers the model (Claude Code's schema): ``bubble`` is
for forks, which the runtime sets itself."""

RUN_MODES: tuple[str, ...] = MODES
"""What ``covey --permission-mode``, ``Session(permission_mode=...)`` and ``set_permission_mode``
take: every mode. ``bubble`` on the main agent asks the session's asker, as ``default`` does."""

STICKY_MODES: tuple[str, ...] = ("bypassPermissions", "acceptEdits", "auto")
"""A parent in these modes keeps them for its children, whatever the definition says."""

PERMISSIVENESS: dict[str, int] = {
    "plan": 0, "dontAsk": 1, "default": 2, "bubble": 2, "auto": 2, "acceptEdits": 3, "bypassPermissions": 4,
}
"""How much a mode lets run unasked; a child may not rank above its parent unless a person approves
(``auto`` runs as ``default`` here)."""


def more_permissive(mode: str, than: str) -> bool:
    return PERMISSIVENESS.get(mode, 4) > PERMISSIVENESS.get(than, 4)
