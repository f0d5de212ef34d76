"""The Claude Code whose print mode and control protocol covey speaks: one word, written once.

Plain Python: the thin client's answers (``covey.client.ports``) name it as the events do."""

CLAUDE_CODE_VERSION = "2.1.337"
"""The Claude Code version covey imitates (``system/init``'s and ``initialize``'s ``claude_code_version``)."""
