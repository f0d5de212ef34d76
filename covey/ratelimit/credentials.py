"""Under Ray the API credential stays out of agent actors: they get the session's model config
keyless (``AnthropicConfig.keyless``), naming its credential by id. The credential lives in the
driver that has it, in the cluster's one holder (the rate schedulers' actor, ``covey:ratelimits``:
the place an identity's state already lives) and in each node's model gateway: the driver gives
it to its node's gateway (``covey.gateway.actor.keyless``), which gives it to the holder.

The holder never answers with a credential. Another node's gateway, meeting an id it does not
know, asks the holder to *send* it to that node's gateway: the holder looks the gateway up by
its name (``covey:gateway:<node id>``, a live node) and gives it the credential there
(``accept``). So a caller that is not a gateway, holding the holder's handle, learns nothing:
the credential goes only where a gateway is named, and both actors refuse Ray's generic
``__ray_call__`` (``covey.ray.handle.without_generic_calls``). A credential is sent only to the
servers it was given for (``Credentials.keyed``), so a keyless config naming another server
cannot carry it there either.
"""

from __future__ import annotations

from typing import Awaitable, Callable, TypeVar

import ray

from covey.errors import AgentUnavailable, UserError
from covey.model.anthropic_config import AnthropicConfig, Credential, Credentials
from covey.ratelimit.actor import RateLimitHandle, rate_limit_handle
from covey.ratelimit.signals import Identity

R = TypeVar("R")

_HOLDER_IDENTITY = Identity("", "", "")
"""The holder's calls name no identity."""

_KEYED = Credentials()
"""This process's credentials by id (a gateway's: given by a driver, or sent by the holder)."""

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
    """(In the node's gateway.) Keep ``config``'s credential here and give it to the cluster's
    holder; its keyless form, which agent actors get."""
    keyless = _KEYED.remember(config)
    await _asked(lambda holder: holder.remember_credential(config))
    return keyless


def accept(credential: Credential) -> bool:
    """(In a node's gateway.) A credential the holder sent here."""
    return _KEYED.accept(credential)


async def keyed(config: AnthropicConfig) -> AnthropicConfig:
    """(In a node's gateway.) ``config`` with its credential: a keyless one's from this process,
    else sent here by the cluster's holder."""
    if config.keyed or config.credential_id is None:
        return config
    if (found := _KEYED.keyed(config)) is None:
        credential_id, node_id = config.credential_id, ray.get_runtime_context().get_node_id()
        await _asked(lambda holder: holder.send_credential(credential_id, node_id))
        if (found := _KEYED.keyed(config)) is None:
            raise UserError("the API credential of this run is not known on this Ray cluster (the cluster's "
                            "covey:ratelimits actor was restarted?): start the run again")
    return found
