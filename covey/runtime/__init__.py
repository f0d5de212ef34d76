"""covey/runtime."""
