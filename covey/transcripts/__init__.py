"""covey/transcripts."""
