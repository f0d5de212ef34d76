"""covey/common."""
