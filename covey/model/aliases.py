"""Model aliases (``haiku``, ``sonnet``, ``opus``) and how a ``model`` value becomes a model id.

The env var names are Claude Code's, so a shell set up for Claude Code points
covey at the same models.
"""

from __future__ import annotations

import os
import re
from typing import Mapping

from covey.errors import UserError

_DEFAULT_IDS = {
    "haiku": "claude-haiku-4-5",
    "sonnet": "claude-sonnet-4-6",
    "opus": "claude-opus-4-8",
}
_ENV_VARS = {
    "haiku": "ANTHROPIC_DEFAULT_HAIKU_MODEL",
    "sonnet": "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "opus": "ANTHROPIC_DEFAULT_OPUS_MODEL",
}
# A value with one of these characters cannot be a bare alias, so it is taken as
# an id as is: "claude-…", "my-local-model", "org/model", "gpt-4.1", "model:tag".
_ID_CHARS = re.compile(r"[-/.:]")

DEFAULT_MODEL = _DEFAULT_IDS["sonnet"]
"""The main agent's model when nothing else is configured."""
DEFAULT_SUBAGENT_MODEL = _DEFAULT_IDS["sonnet"]
"""A sub-agent's model when its definition names none and there is no parent model to inherit."""


def default_aliases(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The built-in aliases, with Claude Code's overrides read now (not at import) from
    ``env`` (default: this process's environment)."""
    env = os.environ if env is None else env
    aliases = {name: env.get(_ENV_VARS[name]) or model_id for name, model_id in _DEFAULT_IDS.items()}
    aliases["fable"] = aliases["opus"]
    return aliases


def resolve_model(name: str, aliases: Mapping[str, str] | None = None, *, env: Mapping[str, str] | None = None) -> str:
    """Turn an alias or a model id into a model id.

    ``aliases`` (e.g. from settings) add to and override the built-in ones, whose
    env overrides are read from ``env`` (default: this process's environment).
    A bare word that is no known alias is a ``UserError``: a typo such as
    ``sonet`` must not reach the API as a model id.
    """
    known = {**default_aliases(env), **(aliases or {})}
    key = name.strip()
    if key.lower() in known:
        return known[key.lower()]
    if key.startswith("claude-") or _ID_CHARS.search(key):
        return key
    raise UserError(
        f"unknown model {name!r}: use an alias ({', '.join(sorted(known))}) "
        "or a full model id such as 'claude-sonnet-4-5'"
    )
