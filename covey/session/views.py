"""What a ``Session`` shows of its three owners, read-only: each property a line over its config
(what it loaded), its main agent's slot (what changes turn to turn) or its kit (what it started)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from covey.definitions.output_style import OutputStyle
from covey.permissions.policy import PermissionPolicy
from covey.runtime.limits import Limits
from covey.session.config import SessionConfig
from covey.session.debug_log import DebugLog
from covey.session.kit import Kit
from covey.session.main_agent import main_policy
from covey.session.main_slot import MainAgentSlot
from covey.session.options import SessionOptions
from covey.session.runtime import SessionRuntime
from covey.settings.merged import Settings
from covey.transcripts.session_files import SessionRoots

if TYPE_CHECKING:
    from covey.agent.handle import AgentHandle


class SessionViews:
    """The session's state by its former names; ``Session`` writes none of it itself."""

    config: SessionConfig
    slot: MainAgentSlot
    kit: Kit

    # -- the config: what the session loaded before Ray started ---------------------------
    @property
    def options(self) -> SessionOptions: return self.config.options
    @property
    def env(self) -> dict[str, str]: return self.config.env
    @property
    def home(self) -> Path | None: return self.config.home
    @property
    def cwd(self) -> Path: return self.config.cwd
    @property
    def config_root(self) -> Path: return self.config.config_root
    @property
    def private(self) -> Path | None: return self.config.private
    @property
    def kept(self) -> SessionRoots: return self.config.kept
    @property
    def roots(self) -> SessionRoots: return self.config.roots
    @property
    def resumed(self) -> Any: return self.config.resumed
    @property
    def transcript_folder(self) -> Path: return self.config.transcript_folder
    @property
    def settings(self) -> Settings: return self.config.settings
    @property
    def plugins(self) -> Any: return self.config.plugins
    @property
    def asker(self) -> Any: return self.config.asker
    @property
    def limits(self) -> Limits: return self.config.limits
    @property
    def definitions(self) -> dict[str, Any]: return self.config.definitions
    @property
    def definition_errors(self) -> list[Any]: return self.config.definition_errors
    @property
    def skills(self) -> dict[str, Any]: return self.config.skills
    @property
    def skill_errors(self) -> list[Any]: return self.config.skill_errors
    @property
    def mcp(self) -> Any: return self.config.mcp
    @property
    def output_style(self) -> OutputStyle: return self.config.output_style
    @property
    def warnings(self) -> list[str]: return self.config.warnings

    # -- the main agent's slot: what changes from turn to turn ----------------------------
    @property
    def main_agent_id(self) -> str: return self.slot.agent_id
    @property
    def turns(self) -> int: return self.slot.turns
    @property
    def model_id(self) -> str: return self.slot.model_id
    @property
    def current_main(self) -> AgentHandle | None: return self.slot.current
    @property
    def held_main(self) -> AgentHandle | None: return self.slot.held
    @property
    def interrupting(self) -> bool: return self.slot.interrupting
    @property
    def conversation(self) -> bool: return self.slot.holds
    @property
    def verbatim_prompt(self) -> bool: return self.slot.verbatim

    @property
    def policy(self) -> PermissionPolicy:
        """The main agent's policy as its next turn gets it (a copy: in the slot's mode)."""
        return main_policy(self.config, self.slot.mode, self.kit.session_id)

    # -- the kit: what the session started ------------------------------------------------
    @property
    def session_id(self) -> str: return self.kit.session_id
    @property
    def debug(self) -> DebugLog | None: return self.kit.debug
    @property
    def kept_worktrees(self) -> list[dict[str, Any]]: return self.kit.kept_worktrees
    @property
    def ended(self) -> bool: return self.kit.ended

    @property
    def runtime(self) -> SessionRuntime | None:
        """What every agent of the session shares, once ``start`` has run (None after ``close``)."""
        return self.kit.runtime
