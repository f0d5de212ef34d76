"""covey/ray."""
