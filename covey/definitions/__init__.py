"""Agent definitions, the built-in types, and the lifecycle every agent runs through."""

from covey.definitions.definition import AgentDefinition

__all__ = ["AgentDefinition"]
