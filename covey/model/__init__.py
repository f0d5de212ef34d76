"""What a model is: its request, reply and usage, aliases, prices, and the scripted model.

The real Messages API is reached through ``covey.gateway`` (``make_model``, ``AnthropicModel``).
"""

from covey.model.aliases import DEFAULT_MODEL, DEFAULT_SUBAGENT_MODEL, default_aliases, resolve_model
from covey.model.base import Model, ModelRequest, TokenUsage
from covey.model.pricing import ModelPrice, PriceTable
from covey.model.scripted import Reply, Rule, ScriptedModel, ToolCall, When
from covey.model.usage import ModelUsage

__all__ = [
    "DEFAULT_MODEL",
    "DEFAULT_SUBAGENT_MODEL",
    "Model",
    "ModelPrice",
    "ModelUsage",
    "ModelRequest",
    "PriceTable",
    "Reply",
    "Rule",
    "ScriptedModel",
    "TokenUsage",
    "ToolCall",
    "When",
    "default_aliases",
    "resolve_model",
]

