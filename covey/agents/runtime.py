"""``SessionRuntime`` under its former module, for the modules that import it from here (the
session's). It is defined once, with the ports it bundles, in ``covey.registry.protocols``;
the driver holds it with the handle classes it made, which this name gives: a driver's
``runtime.registry`` is a ``RegistryHandle``. Loaded on first use (``covey.lazy``), so
this module imports nothing above its layer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

from covey.lazy import lazy_exports

if TYPE_CHECKING:
    from covey.actors.handle import AgentHandle
    from covey.actors.mailbox import MailboxHandle
    from covey.actors.registry_handle import RegistryHandle
    from covey.agents.travel import Sealed as Sealed
    from covey.registry import protocols

    SessionRuntime: TypeAlias = protocols.SessionRuntime[RegistryHandle, MailboxHandle, AgentHandle]
else:
    __getattr__ = lazy_exports(__name__, {"SessionRuntime": "covey.registry.protocols", "Sealed": "covey.agents.travel"})
