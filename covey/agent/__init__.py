"""Ray actors and the handles that are the only code making Ray calls on them: agents, their pool, the mailbox, teams."""
