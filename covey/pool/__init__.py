"""covey/pool."""
