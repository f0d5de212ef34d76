"""What a run can be told before any service or Ray starts for it.

A cold first run would otherwise start the covey service and its Ray (seconds, and a
gigabyte of processes) only to hear that the person's settings file does not parse or
that no API key is set. The thin client calls :func:`check_run` when no service answers
(a warm service reports the same errors at once) and an in-process run calls it before
Ray starts. It reads the settings files with the session's own loader, so the error is
the one a session would give, word for word.
"""

from __future__ import annotations

import json
import os
import sys
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
    from covey.settings.merged import Settings  # pydantic: imported only on a cold start or in-process

    cwd = Path(options.get("cwd") or os.getcwd())
    extra = options.get("settings")
    settings = Settings.load(cwd, home=env.get("HOME") or None, extra=extra if isinstance(extra, dict) else None,
                             sources=options.get("setting_sources"), project=options.get("project_config_root"),
                             config=env.get("CLAUDE_CONFIG_DIR"))
    model = options.get("model") or settings.model
    if isinstance(model, str) and model.startswith(SCRIPTED_PREFIX):
        return
    if not any(env.get(name) or settings.env.get(name) for name in KEY_VARIABLES):
        raise MissingKey("no Anthropic API key in the run's environment: set ANTHROPIC_API_KEY (or "
                         "ANTHROPIC_AUTH_TOKEN), or use --model scripted:PATH to run without the API")


def check_or_report(options: Mapping[str, Any], env: Mapping[str, str], output_format: str) -> None:
    """:func:`check_run`; a refusal is also the failure ``result`` line a script reading ``json``
    or ``stream-json`` parses, as a run that failed later prints it."""
    try:
        check_run(options, env)
    except UserError as exc:
        if output_format != "text":
            from covey.client.ports import failure_result

            print(json.dumps(failure_result(str(exc))), flush=True)
        raise
