"""Under Ray the API credential stays out of agent actors: they get the session's model config
keyless (``AnthropicConfig.keyless``), naming its credential by id. The credential lives in the
driver that has it, in the cluster's one holder (the rate schedulers' actor, ``covey:ratelimits``:
the place an identity's state already lives) and in each node's model gateway: the driver gives
it to its node's gateway (``covey.actors.gateway.keyless``), which gives it to the holder; another
node's gateway looks it up there once, when a keyless config first reaches it. An agent's tools
see the run's environment as Claude Code gives it to its own (docs/rate-limits.md).
"""

from __future__ import annotations

from typing import Awaitable, Callable, TypeVar

from covey.actors.ratelimit import RateLimitHandle, rate_limit_handle
from covey.errors import AgentUnavailable, UserError
from covey.model.anthropic_config import AnthropicConfig
from covey.model.ratelimit_signals import Identity

R = TypeVar("R")

_HOLDER_IDENTITY = Identity("", "", "")
"""The holder's calls name no identity."""

_KEYED: dict[str, tuple[str | None, str | None]] = {}
"""This process's credentials by id (a gateway looks each up once)."""

_HOLDER: list[RateLimitHandle] = []
"""This process's handle to the holder, kept: the holder is not detached, and a named actor
with no handle left anywhere is let go (its owner is the node's gateway, which is detached)."""


def _holder() -> RateLimitHandle:
    if not _HOLDER:
        _HOLDER.append(rate_limit_handle(_HOLDER_IDENTITY))
    return _HOLDER[0]


async def _asked(call: Callable[[RateLimitHandle], Awaitable[R]]) -> R:
    """``call`` on the holder; once more on a new one if it was found gone (created again)."""
    try:
        return await call(_holder())
    except AgentUnavailable:
        _HOLDER.clear()
        return await call(_holder())


async def remember(config: AnthropicConfig) -> AnthropicConfig:
    """(In the node's gateway.) Give ``config``'s credential to the cluster's holder, and keep it
    here; its keyless form, which agent actors get."""
    keyless = await _asked(lambda holder: holder.remember_credential(config))
    if keyless.credential_id is not None:
        _KEYED[keyless.credential_id] = (config.api_key, config.auth_token)
    return keyless


async def keyed(config: AnthropicConfig) -> AnthropicConfig:
    """(In a node's gateway.) ``config`` with its credential: a keyless one's from this process,
    else from the cluster's holder."""
    if config.keyed or config.credential_id is None:
        return config
    if (found := _KEYED.get(config.credential_id)) is None:
        credential_id = config.credential_id
        found = await _asked(lambda holder: holder.credential(credential_id))
        if found is None:
            raise UserError("the API credential of this run is not known on this Ray cluster (the cluster's "
                            "covey:ratelimits actor was restarted?): start the run again")
        _KEYED[config.credential_id] = found
    return config.keyed_with(found)
