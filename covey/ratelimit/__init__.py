"""covey/ratelimit."""
