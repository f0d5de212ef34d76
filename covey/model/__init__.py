"""The model layer: the Messages API adapter, the scripted model, aliases and prices.

``AnthropicModel`` (and with it the ``anthropic`` SDK) loads on first use: an agent
actor running the scripted model never pays for the SDK.
"""

from typing import Any

from covey.model.aliases import DEFAULT_MODEL, DEFAULT_SUBAGENT_MODEL, default_aliases, resolve_model
from covey.model.base import Model, ModelRequest, TokenUsage
from covey.model.factory import make_model, model_id_for
from covey.model.pricing import ModelPrice, PriceTable
from covey.model.scripted import Reply, Rule, ScriptedModel, ToolCall, When
from covey.model.usage import ModelUsage

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_SUBAGENT_MODEL",
    "AnthropicModel",
    "Model",
    "ModelPrice",
    "ModelUsage",
    "ModelRequest",
    "PriceTable",
    "Reply",
    "RequestRecord",
    "Rule",
    "ScriptedModel",
    "TokenUsage",
    "ToolCall",
    "When",
    "default_aliases",
    "make_model",
    "model_id_for",
    "resolve_model",
]


def __getattr__(name: str) -> Any:
    if name in ("AnthropicModel", "RequestRecord"):
        from covey.model import anthropic

        return getattr(anthropic, name)
    raise AttributeError(f"module 'covey.model' has no attribute {name!r}")
