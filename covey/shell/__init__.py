"""covey/shell."""
