"""What an agent's next request should read from the prompt cache, for the rate scheduler.

Cache reads do not count toward the input-token limit on current models, so a request whose
prompt is mostly its agent's cached prefix must not wait for room for the whole prompt. An
agent's next request starts with the prefix its last request read or wrote (the reply's
``cache_read_input_tokens`` + ``cache_creation_input_tokens``): that is what it should read,
while the cache still holds it (five minutes, the API's default lifetime, renewed by each read).
The reply's usage corrects any error (the scheduler refunds or charges the difference).
"""

from __future__ import annotations

from collections import OrderedDict

from covey.model.base import TokenUsage

CACHE_LIFETIME_S = 300.0
MAX_AGENTS = 4096
"""Agents remembered at once (the ones heard from longest ago are forgotten first)."""


class CachedPrefixes:
    """The cached prefix of each agent's last request, and when it was last used."""

    def __init__(self, lifetime_s: float = CACHE_LIFETIME_S, max_agents: int = MAX_AGENTS) -> None:
        self.lifetime_s, self.max_agents = lifetime_s, max_agents
        self._prefixes: OrderedDict[str, tuple[int, float]] = OrderedDict()

    def expected_read(self, agent_id: str | None, now: float) -> int:
        """Tokens ``agent_id``'s next request should read from the cache at ``now`` (0: unknown or expired)."""
        found = self._prefixes.get(agent_id or "")
        if found is None or now - found[1] > self.lifetime_s:
            return 0
        return found[0]

    def record(self, agent_id: str | None, usage: TokenUsage, now: float) -> None:
        """A reply to ``agent_id``: the prefix it read or wrote is what the next one reads."""
        if not agent_id:
            return
        self._prefixes[agent_id] = (usage.cache_read_input_tokens + usage.cache_creation_input_tokens, now)
        self._prefixes.move_to_end(agent_id)
        while len(self._prefixes) > self.max_agents:
            self._prefixes.popitem(last=False)
