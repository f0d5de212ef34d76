"""covey/cli."""
