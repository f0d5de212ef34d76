"""What a run can be told before any service or Ray starts for it.

A cold first run would otherwise start the covey service and its Ray (seconds, and a
gigabyte of processes) only to hear that the person's settings file does not parse or
that no API key is set. The thin client calls :func:`check_run` when no service answers
(a warm service reports the same errors at once) and an in-process run calls it before
Ray starts. It reads the settings files with the session's own loader, so the error is
the one a session would give, word for word.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

from covey.errors import UserError

KEY_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
SCRIPTED_PREFIX = "scripted:"


class MissingKey(UserError):
    """The run would call the Messages API and its environment holds no credential."""


def check_run(options: Mapping[str, Any], env: Mapping[str, str]) -> None:
    """Raise the :class:`UserError` the session would raise for its settings files or its
    missing API key; return quietly when neither would stop it."""
    from covey.settings import Settings  # pydantic: imported only on a cold start or in-process

    cwd = Path(options.get("cwd") or os.getcwd())
    extra = options.get("settings")
    settings = Settings.load(cwd, home=env.get("HOME") or None, extra=extra if isinstance(extra, dict) else None,
                             sources=options.get("setting_sources"), project=options.get("project_config_root"))
    model = options.get("model") or settings.model
    if isinstance(model, str) and model.startswith(SCRIPTED_PREFIX):
        return
    if not any(env.get(name) or settings.env.get(name) for name in KEY_VARIABLES):
        raise MissingKey("no Anthropic API key in the run's environment: set ANTHROPIC_API_KEY (or "
                         "ANTHROPIC_AUTH_TOKEN), or use --model scripted:PATH to run without the API")
