"""covey/subagents."""
