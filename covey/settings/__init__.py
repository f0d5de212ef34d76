"""covey/settings."""
