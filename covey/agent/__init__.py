"""One agent's run inside its Ray actor: the actor, its handle, its lifecycle and what it is given."""
