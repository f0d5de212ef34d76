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

UNASKED_POWER: dict[str, int] = {"acceptEdits": 1, "bypassPermissions": 2}
"""What a mode lets run without anyone asked, beyond rules: file edits, then everything. The other
modes ask a person (or deny) for what no rule allows, so a child in them gains nothing unasked."""


def more_permissive(mode: str, than: str) -> bool:
    """Whether an agent in ``mode`` could run unasked what one in ``than`` could not."""
    return UNASKED_POWER.get(mode, 0) > UNASKED_POWER.get(than, 0)
