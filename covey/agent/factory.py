"""Creates the agent actors a warm pool holds: named readably, placed by lane (``AgentFactory``)."""

from __future__ import annotations

import asyncio
import itertools
import logging
from typing import Any

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from covey.agent.actor import agent_actor_class
from covey.agent.handle import AgentHandle
from covey.errors import AgentUnavailable
from covey.ray.handle import RayActor
from covey.ray.resources import resources_of

log = logging.getLogger(__name__)


class AgentFactory:
    """Creates agent actors, named readably: on the home node for file-touching agents
    ("home"), over every alive node in turn for the others ("any").

    "any" uses Ray's ``NodeAffinitySchedulingStrategy(node, soft=False)`` with the node
    taken in turn from ``ray.nodes()``: pooled actors live long and are reused, so where
    each one starts matters, and plain ``SPREAD`` (best effort) was seen to put every one
    of them on the head node. With ``soft=True`` Ray 2.60 placed about one in three on the
    other node of a healthy two-node cluster (logged target against actual node), so the
    affinity is hard, and an actor whose node went away in between is started again with
    ``SPREAD``.

    A lane of an agent that asks for resources (``AgentResources.lane``) makes its actors with
    those options, so Ray places them where the resources are and the autoscaler sees the demand;
    the home node is preferred, softly (``soft=True``: any node that has them when it does not).
    """

    def __init__(
        self, session_id: str, home_node_id: str | None = None, *, preload: tuple[str, ...] = (),
        peers: tuple[RayActor, ...] = (),
    ) -> None:
        self.session_id = session_id
        self.home_node_id = home_node_id
        self.preload, self.peers = preload, peers
        self.cls = agent_actor_class()
        self._seq = itertools.count(1)
        self._turn = itertools.count()

    async def create(self, lane: str) -> AgentHandle:
        name = f"covey:{self.session_id[:8]}:agent-{next(self._seq)}"
        if (resources := resources_of(lane)) is not None:
            options = resources.ray_options()
            if self.home_node_id and not resources.label_selector:  # labels pick the node themselves
                options["scheduling_strategy"] = NodeAffinitySchedulingStrategy(self.home_node_id, soft=True)
            return await self._started(name, None, options)
        if lane == "home" and self.home_node_id:
            return await self._started(name, NodeAffinitySchedulingStrategy(self.home_node_id, soft=False))
        if lane == "any" and (node := self._next_node()) is not None:
            try:
                return await self._started(name, NodeAffinitySchedulingStrategy(node, soft=False))
            except AgentUnavailable:  # the node went away since ray.nodes() said it was alive
                log.info("agent actor %s could not start on node %s; letting Ray place it", name, node)
        return await self._started(name, "SPREAD" if lane == "any" else None)

    async def _started(self, name: str, strategy: NodeAffinitySchedulingStrategy | str | None,
                       asked: dict[str, Any] | None = None) -> AgentHandle:
        options: dict[str, Any] = {"name": name, **(asked or {})}
        if strategy is not None:
            options["scheduling_strategy"] = strategy
        handle = AgentHandle(self.cls.options(**options).remote(self.preload, self.peers), name)
        try:
            handle.node = await handle.node_id()  # ready when it answers; where it landed, for the tree
        except (AgentUnavailable, asyncio.CancelledError):  # cancelled: a launch given up while Ray held it
            handle.kill()
            raise
        return handle

    def _next_node(self) -> str | None:
        nodes: list[dict[str, Any]] = ray.nodes()  # type: ignore[no-untyped-call]  # Ray leaves it unannotated
        alive = sorted(str(node["NodeID"]) for node in nodes if node.get("Alive"))
        return alive[next(self._turn) % len(alive)] if alive else None
