"""The model layer: the Messages API adapter, the scripted model, aliases and prices."""

from covey.model.aliases import DEFAULT_MODEL, DEFAULT_SUBAGENT_MODEL, default_aliases, resolve_model
from covey.model.anthropic import AnthropicModel, RequestRecord
from covey.model.base import Model, ModelRequest, TokenUsage
from covey.model.factory import make_model, model_id_for
from covey.model.pricing import ModelPrice, PriceTable
from covey.model.scripted import Reply, Rule, ScriptedModel, ToolCall, When

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_SUBAGENT_MODEL",
    "AnthropicModel",
    "Model",
    "ModelPrice",
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
