"""What the user's files define: agent types, skills, output styles, memory, system prompts, the tool catalog."""

from covey.definitions.definition import AgentDefinition

__all__ = ["AgentDefinition"]
