"""What a tool reaches of the agent's world above it, as narrow protocols: the types of
``ToolServices``' fields whose classes live above the tools (the session runtime, the agent's
spec, a fork's starting point, the inbox). Each names only what a plain tool reads; the tools
that launch and coordinate agents read more (``covey.runtime.ports``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from covey.permissions.policy import PermissionPolicy


class Reported(Protocol):
    """An ended run's report as TaskOutput shows it (``FinalReport``)."""

    @property
    def text(self) -> str: ...


class TaskRecord(Protocol):
    """What TaskOutput and TaskStop read of an agent's run record (``RunRecord``)."""

    @property
    def agent_id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def output_file(self) -> str | None: ...
    @property
    def report(self) -> Reported | None: ...


class AgentStops(Protocol):
    """The registry as TaskOutput and TaskStop reach it (``RegistryPort``)."""

    async def kill_agent(self, agent_id: str, reason: str = "killed on request") -> bool: ...
    async def record(self, agent_id: str) -> TaskRecord | None: ...


class ToolRuntime(Protocol):
    """The session's runtime as a plain tool reaches it (``SessionRuntime``); the tools that launch and
    coordinate agents read more of it (``covey.runtime.ports``)."""

    @property
    def registry(self) -> AgentStops: ...


class OwnSpec(Protocol):
    """What a plain tool reads of the running agent's own spec (``AgentSpec``): its permission policy."""

    @property
    def permissions(self) -> PermissionPolicy | None: ...


class CacheSafe(Protocol):
    """An agent's last request as sent, and its read-file cache (``CacheSafeParams``): what a fork copies."""

    @property
    def system(self) -> list[dict[str, Any]]: ...
    @property
    def tools(self) -> list[dict[str, Any]]: ...
    @property
    def messages(self) -> list[dict[str, Any]]: ...
    @property
    def thinking(self) -> dict[str, Any] | None: ...
    @property
    def read_files(self) -> dict[str, float]: ...


class LaunchNotes(Protocol):
    """This agent's inbox as the Agent tool tells it of a background launch (``RuntimeInbox``)."""

    def note_launch(self, task: Any = None, *, tool_use_id: str | None = None) -> None: ...
