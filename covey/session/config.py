"""``SessionConfig``: everything a session loaded before Ray starts, built once (``configure``)
and never written to afterwards."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from covey.definitions.output_style import OutputStyle
from covey.permissions.policy import PermissionPolicy
from covey.ray.address import check_run_address
from covey.runtime.limits import Limits
from covey.session import ephemeral
from covey.session.debug_log import DebugLog, open_debug_log
from covey.session.options import SessionOptions
from covey.session.setup import config_root, load, place, run_env, with_env_defaults
from covey.settings.merged import Settings
from covey.transcripts.session_files import SessionRoots


@dataclass(frozen=True)
class SessionConfig:
    """What a session read from its options, environment and files at its start (``covey/session/setup.py``)."""

    options: SessionOptions
    """The run's options, with the environment's defaults and the main model built."""
    env: dict[str, str]
    """The run's environment (a copy: the session reads it, never ``os.environ``)."""
    home: Path | None
    """The user's home ``env`` names (None: this process's)."""
    cwd: Path
    config_root: Path
    """Where the project's settings and definitions are read: ``project_config_root``, else ``cwd``."""
    private: Path | None
    """A session that is not kept: the private folder its files go to, removed at its close."""
    kept: SessionRoots
    roots: SessionRoots
    resumed: Any
    """Where a resumed session continues, else None."""
    transcript_folder: Path
    settings: Settings
    plugins: Any
    policy: PermissionPolicy
    """The base permission policy: the main agent's each turn is a copy in the slot's mode."""
    asker: Any
    limits: Limits
    definitions: dict[str, Any]
    definition_errors: list[Any]
    skills: dict[str, Any]
    skill_errors: list[Any]
    mcp: Any
    output_style: OutputStyle
    warnings: list[str]
    """What was skipped while loading (hooks, plugins, definition and skill files): said once, up front."""
    model_id: str
    """The main agent's model id as loaded (``set_model`` changes the slot's, not this)."""


def configure(given: SessionOptions) -> tuple[SessionConfig, str, DebugLog | None]:
    """The session's config, its id and its debug log; on a failure, what was made so far is removed."""
    check_run_address(given.address, os.environ, "address=")  # before any file or Ray is made
    env, home = run_env(given)
    options = with_env_defaults(given, env, home)
    cwd = Path(options.cwd).resolve()
    private, debug = ephemeral.private_folder(options), None
    try:
        placed = place(options, cwd, env, home, private)
        debug = open_debug_log(placed.options.debug, placed.kept.root, placed.session_id, cwd)
        loaded = load(placed.options, cwd, env, home, placed.resumed, placed.session_id)
    except BaseException:
        if debug is not None:
            debug.close()
        ephemeral.remove(private)
        raise
    config = SessionConfig(
        options=placed.options, env=env, home=home, cwd=cwd, config_root=config_root(placed.options, cwd),
        private=private, kept=placed.kept, roots=placed.roots, resumed=placed.resumed,
        transcript_folder=placed.transcript_folder, settings=loaded.settings, plugins=loaded.plugins,
        policy=loaded.policy, asker=loaded.asker, limits=loaded.limits, definitions=loaded.definitions,
        definition_errors=loaded.definition_errors, skills=loaded.skills, skill_errors=loaded.skill_errors,
        mcp=loaded.mcp, output_style=loaded.output_style, warnings=loaded.warnings, model_id=loaded.model_id,
    )
    return config, placed.session_id, debug
