"""Coordination state shared by agents: the mailbox (and, for teams, roster and task board)."""
