"""The session's kit: its registry (with the warm pool) and mailbox actors, started on the
driver's node, or borrowed ready from the covey service; and the ``SessionRuntime`` every
agent of the session shares."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Callable

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from covey.gateway.actor import keyless
from covey.teams.mailbox_actor import MailboxHandle, mailbox_actor_class
from covey.pool.shared_pool import SharedPoolHandle, pool_name
from covey.client.paths import service_dir
from covey.registry.warm_pool import default_pool_size
from covey.agent.warmup import model_modules
from covey.definitions.context import project_context
from covey.ray.cluster import NAMESPACE, ensure_ray
from covey.registry.actor import RegistryHandle, registry_actor_class
from covey.runtime.session_runtime import SessionRuntime
from covey.session.main_agent import setting_sources, tool_options
from covey.session.setup import readable_paths
from covey.common.subprocess_env import travelling_env
from covey.agent.catalog import tool_names

if TYPE_CHECKING:
    from covey.session.core import Session

_ray_nodes: Callable[[], list[dict[str, Any]]] = ray.nodes
"""``ray.nodes``, typed (Ray's own is not)."""


class Kit:
    """What a session started or borrowed, for ``close`` to end or give back."""

    def __init__(self) -> None:
        self.runtime: SessionRuntime | None = None
        self.started_ray = False
        self.lender: SharedPoolHandle | None = None
        """The covey service's shared pool, for a served session."""
        self.lost_actor = False
        """One of the session's own actors died (``SessionBroken``): its kit is not reused."""
        self.owned: list[Any] = []
        """Actors this session kills at ``close`` (its registry and mailbox, main agents it holds)."""


async def start(session: Session) -> SessionRuntime:
    """Join or start Ray and start the session's actors (idempotent); a served session
    borrows ready ones from the covey service instead."""
    kit = session.kit
    if kit.runtime is not None:
        return kit.runtime
    registry, mailbox = await _borrowed(session) if session.options.service else _own(session)
    cwd, options, sources = str(session.cwd), tool_options(session), setting_sources(session)
    kit.runtime = SessionRuntime(
        session_id=session.session_id, registry=registry, mailbox=mailbox, definitions=session.definitions,
        limits=session.limits, transcript_dir=str(session.transcript_folder), can_ask=session.asker is not None,
        skills=session.skills, tools=options, tool_names=tool_names(options), spread=_spread(),
        shared_fs=bool(session.options.shared_fs), env=travelling_env(session.options.env),
        child_events=session.options.child_events,
        project_context={cwd: await asyncio.to_thread(project_context, cwd, omit=False, sources=sources)},
        setting_sources=sources,
    )
    # Agent actors get the real model's config without the API credential (the node's model
    # gateway looks it up): it is not in their specs.
    session.options.model = await keyless(session.options.model)
    return kit.runtime


def _spread() -> bool:
    """The cluster has more than one live node."""
    nodes: list[dict[str, Any]] = _ray_nodes()
    return sum(1 for node in nodes if node.get("Alive")) > 1


def _own(session: Session) -> tuple[RegistryHandle, MailboxHandle]:
    """A private registry (with its own warm pool) and mailbox, on the driver's node."""
    options, kit = session.options, session.kit
    kit.started_ray = ensure_ray(options.address, verbose=options.verbose)
    prefix = f"covey:{session.session_id[:8]}"
    home = ray.get_runtime_context().get_node_id()
    # The session's own actors live with the driver: losing another node must not lose them.
    common = {"namespace": NAMESPACE, "scheduling_strategy": NodeAffinitySchedulingStrategy(home, soft=False)}
    size = options.pool_size if options.pool_size is not None else default_pool_size()
    sizes = {"home": size, "any": size} if _spread() else {"home": size}
    mailbox = MailboxHandle(mailbox_actor_class().options(name=f"{prefix}:mailbox", **common).remote(), "mailbox")
    registry_actor = registry_actor_class().options(name=f"{prefix}:registry", **common).remote(
        session.limits, mailbox, session.session_id, sizes, home, model_modules(options.model),
    )
    registry = RegistryHandle(registry_actor, "registry")
    kit.owned += [registry, mailbox]
    return registry, mailbox


async def _borrowed(session: Session) -> tuple[RegistryHandle, MailboxHandle]:
    """The covey service's ready session kit: a registry that borrows agent actors from
    the service's shared pool, and a mailbox. The session takes the kit's id."""
    if not ray.is_initialized():
        from covey.client.join import join_service

        join_service(session.options.verbose)
    lender = session.kit.lender = SharedPoolHandle.named(pool_name(str(service_dir())))
    # A resumed session, or one given its id, keeps its id; any other takes the kit's.
    fixed = session.session_id if (session.resumed is not None or session.options.session_id) else None
    taken = await lender.take_kit(model_modules(session.options.model), session_id=fixed)
    if taken.session_id != session.session_id:
        renamed(session, taken.session_id)
    registry, mailbox = taken.handles()
    await registry.configure(session.limits)
    return registry, mailbox


def renamed(session: Session, session_id: str) -> None:
    """The session takes the kit's id: what was named after the id it had follows (the files its
    agents read without asking, its debug log)."""
    session.session_id = session_id
    session.policy.readable = tuple(readable_paths(session.transcript_folder, session_id))
    if session.debug is not None:
        session.debug.renamed(session_id)
