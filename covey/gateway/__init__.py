"""covey/gateway."""
