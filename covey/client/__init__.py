"""Finding, starting and joining the covey service: its files, its process, its Ray (no server code)."""
