"""Backends for the registry conformance suite: the in-memory supervisor (agents run in
this process, on the real runner) or the registry Ray actor (its raw, typed answers), a
session kit borrowed from the shared pool."""

from __future__ import annotations

import asyncio
import inspect
import uuid
from dataclasses import dataclass
from typing import Any

import pytest

from covey.agent.actor import _AgentActor
from covey.agent.handle import AgentHandle
from covey.ray.handle import TypedHandle
from covey.registry.supervisor import Supervisor
from covey.registry.warm_pool import WarmPool
from covey.runtime.limits import Limits
from covey.teams.mailbox import Mailbox

LIMITS = Limits(max_depth=2, max_concurrent=8)


@dataclass
class Backend:
    registry: Any
    """Answers as ``SupervisorProtocol`` says."""
    mailbox: Any


class _Method:
    """An in-process actor method called as Ray's are (``.options(...).remote(...)``): sent at once."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def options(self, **_: Any) -> "_Method":
        return self

    def remote(self, *args: Any, **kwargs: Any) -> Any:
        result = self.fn(*args, **kwargs)
        return _refs(result) if inspect.isasyncgen(result) else asyncio.ensure_future(result)


async def _refs(items: Any) -> Any:
    async for item in items:
        yield _ready(item)


async def _ready(value: Any) -> Any:
    return value


class _InProcess:
    def __init__(self) -> None:
        self.agent = _AgentActor()
        self._actor_id = uuid.uuid4().hex  # what AgentHandle compares and hashes

    def __getattr__(self, name: str) -> _Method:
        return _Method(getattr(self.agent, name))


class LocalAgentHandle(AgentHandle):
    """The real agent handle over an agent actor that runs in this process."""

    def kill(self) -> None:
        run = self.actor.agent._run
        if run is not None and run.task is not None:
            run.task.cancel()


class _RawRegistry:
    """The registry actor's own answers, unconverted by ``RegistryHandle``."""

    def __init__(self, handle: TypedHandle[Any]) -> None:
        self.handle = handle

    def __getattr__(self, name: str) -> Any:
        async def call(*args: Any, **kwargs: Any) -> Any:
            return await getattr(self.handle.actor, name).remote(*args, **kwargs)

        return call


@pytest.fixture(params=["memory", pytest.param("ray", marks=pytest.mark.ray)])
async def backend(request):
    if request.param == "memory":
        async def create(lane: str) -> AgentHandle:
            return LocalAgentHandle(_InProcess(), "local", node="local")

        supervisor = Supervisor(LIMITS, pool=WarmPool(create, {}), mailbox=Mailbox())
        yield Backend(supervisor, supervisor.watcher.mailbox)
        await supervisor.close()
        return
    # A session kit of the shared pool (tests/conftest.py ``kit_pool``): the registry and mailbox
    # actors a served session gets, recycled for the next test as the service recycles them.
    pool = request.getfixturevalue("kit_pool")
    kit = await pool.take_kit()
    registry, mailbox = kit.handles()
    await registry.configure(LIMITS)
    yield Backend(_RawRegistry(TypedHandle(kit.registry, "registry")), mailbox)
    pool.end_session(kit.session_id, reuse_kit=True)
