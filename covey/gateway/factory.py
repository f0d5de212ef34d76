"""Build the Model a ``--model`` value (or a settings ``model``) asks for.

``--model`` takes either ``scripted:PATH`` (a rule file, no network) or an alias
or model id (``sonnet``, ``claude-opus-4-1``, ``my-local-model``), which selects
the Anthropic adapter. The model *id* sent with each request is separate: the
caller gets it from ``model_id_for`` (the same value, resolved), because one
Model instance serves agents that use different ids.
"""

from __future__ import annotations

import os
from typing import Mapping

from covey.model.aliases import DEFAULT_MODEL, resolve_model
from covey.model.anthropic_config import AnthropicConfig
from covey.model.base import Model
from covey.model.scripted import ScriptedModel

SCRIPTED_PREFIX = "scripted:"


def make_model(
    spec: str | None, *, aliases: Mapping[str, str] | None = None, env: Mapping[str, str] | None = None,
    sdk: bool = True,
) -> Model | AnthropicConfig:
    """``scripted:PATH`` → ScriptedModel; ``None``, ``anthropic``, an alias or an id → AnthropicModel
    (``sdk=False``: its ``AnthropicConfig``, which imports no SDK; an agent actor's, sent through
    its node's gateway).

    An alias or id is checked here (a typo is a ``UserError`` before any request).
    ``env`` is the run's environment: the alias overrides, and an Anthropic model's key
    and base URL, come from it alone (None: from this process's environment; with ``sdk``,
    as the SDK finds them, profiles included).
    """
    if spec and spec.startswith(SCRIPTED_PREFIX):
        return ScriptedModel.from_file(spec[len(SCRIPTED_PREFIX):])
    if spec and spec != "anthropic":
        resolve_model(spec, aliases, env=env)
    if not sdk:
        return AnthropicConfig.from_env(os.environ if env is None else env)
    from covey.gateway.anthropic import AnthropicModel  # the SDK loads only where the API is called

    return AnthropicModel() if env is None else AnthropicModel.from_env(env)


def model_id_for(
    spec: str | None, *, aliases: Mapping[str, str] | None = None, default: str = DEFAULT_MODEL,
    env: Mapping[str, str] | None = None,
) -> str:
    """The model id requests carry: the resolved alias/id, else ``default``.

    A scripted spec names no id, so requests carry ``default`` (rules may match on it).
    """
    if not spec or spec == "anthropic" or spec.startswith(SCRIPTED_PREFIX):
        return default
    return resolve_model(spec, aliases, env=env)
