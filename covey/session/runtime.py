"""``SessionRuntime`` as the driver holds it: the ports bundle of ``covey.runtime.ports`` typed by
the handle classes the session made, so a driver's ``runtime.registry`` is a ``RegistryHandle``."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

from covey.runtime import ports

if TYPE_CHECKING:
    from covey.agent.handle import AgentHandle
    from covey.registry.handle import RegistryHandle
    from covey.teams.mailbox_actor import MailboxHandle

    SessionRuntime: TypeAlias = ports.SessionRuntime[RegistryHandle, MailboxHandle, AgentHandle]
else:
    SessionRuntime = ports.SessionRuntime
