"""The session's kit: its registry (with the warm pool) and mailbox actors, started on the
driver's node, or borrowed ready from the covey service; the ``SessionRuntime`` every agent of
the session shares; and the end of all it started (``stop``, ``close``)."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any, Callable

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from covey.agent.catalog import tool_names
from covey.agent.handle import AgentHandle
from covey.agent.warmup import model_modules
from covey.client.paths import service_dir
from covey.common.subprocess_env import travelling_env
from covey.definitions.context import project_context
from covey.events import ResultEvent
from covey.gateway.actor import keyless
from covey.hooks.runner import HookRegistry
from covey.hooks.session_end import fire_session_end
from covey.pool.shared_pool import SharedPoolHandle, pool_name
from covey.ray.cluster import NAMESPACE, ensure_ray, shutdown_if_started
from covey.registry.actor import registry_actor_class
from covey.registry.handle import RegistryHandle
from covey.registry.warm_pool import default_pool_size
from covey.session import ephemeral
from covey.session.config import SessionConfig
from covey.session.debug_log import DebugLog
from covey.session.main_agent import setting_sources, tool_options, transcript
from covey.session.runtime import SessionRuntime
from covey.teams.mailbox_actor import MailboxHandle, mailbox_actor_class

if TYPE_CHECKING:
    from covey.session.main_slot import MainAgentSlot
    from covey.session.watch import SessionBroken

log = logging.getLogger(__name__)

_ray_nodes: Callable[[], list[dict[str, Any]]] = ray.nodes
"""``ray.nodes``, typed (Ray's own is not)."""

STOP_GRACE_S = 5.0


class Kit:
    """What a session started or borrowed, for ``close`` to end or give back."""

    def __init__(self, config: SessionConfig, session_id: str, debug: DebugLog | None = None) -> None:
        self.config = config
        self.session_id = session_id
        """The session's id (a served session that borrows a kit may take the kit's: ``renamed``)."""
        self.debug = debug
        """The session's debug log (``--debug``), closed at ``discard``."""
        self.runtime: SessionRuntime | None = None
        self.model: Any = config.options.model
        """The main model as agent actors get it: without its API credential once ``start`` has run."""
        self.started_ray = False
        self.lender: SharedPoolHandle | None = None
        """The covey service's shared pool, for a served session."""
        self.lost_actor = False
        """One of the session's own actors died (``SessionBroken``): its kit is not reused."""
        self.owned: list[Any] = []
        """Actors this session kills at ``close`` (its registry and mailbox, main agents it holds)."""
        self.kept_worktrees: list[dict[str, Any]] = []
        """Worktrees that agents stopped by ``stop`` kept (they had changes): path and branch."""
        self.ended = False
        """SessionEnd hooks ran (``close`` may be called more than once)."""

    async def start(self) -> SessionRuntime:
        """Join or start Ray and start the session's actors (idempotent); a served session
        borrows ready ones from the covey service instead."""
        if self.runtime is not None:
            return self.runtime
        config = self.config
        registry, mailbox = await self._borrowed() if config.options.service else self._own()
        cwd, options, sources = str(config.cwd), tool_options(config), setting_sources(config)
        self.runtime = SessionRuntime(
            session_id=self.session_id, registry=registry, mailbox=mailbox, definitions=config.definitions,
            limits=config.limits, transcript_dir=str(config.transcript_folder), can_ask=config.asker is not None,
            skills=config.skills, tools=options, tool_names=tool_names(options), spread=_spread(),
            shared_fs=bool(config.options.shared_fs), env=travelling_env(config.options.env),
            child_events=config.options.child_events,
            project_context={cwd: await asyncio.to_thread(project_context, cwd, omit=False, sources=sources)},
            setting_sources=sources,
        )
        # Agent actors get the real model's config without the API credential (the node's model
        # gateway looks it up): it is not in their specs.
        self.model = await keyless(config.options.model)
        return self.runtime

    def _own(self) -> tuple[RegistryHandle, MailboxHandle]:
        """A private registry (with its own warm pool) and mailbox, on the driver's node."""
        options = self.config.options
        self.started_ray = ensure_ray(options.address, verbose=options.verbose)
        prefix = f"covey:{self.session_id[:8]}"
        home = ray.get_runtime_context().get_node_id()
        # The session's own actors live with the driver: losing another node must not lose them.
        common = {"namespace": NAMESPACE, "scheduling_strategy": NodeAffinitySchedulingStrategy(home, soft=False)}
        size = options.pool_size if options.pool_size is not None else default_pool_size()
        sizes = {"home": size, "any": size} if _spread() else {"home": size}
        mailbox = MailboxHandle(mailbox_actor_class().options(name=f"{prefix}:mailbox", **common).remote(), "mailbox")
        registry_actor = registry_actor_class().options(name=f"{prefix}:registry", **common).remote(
            self.config.limits, mailbox, self.session_id, sizes, home, model_modules(options.model),
        )
        registry = RegistryHandle(registry_actor, "registry")
        self.owned += [registry, mailbox]
        return registry, mailbox

    async def _borrowed(self) -> tuple[RegistryHandle, MailboxHandle]:
        """The covey service's ready session kit: a registry that borrows agent actors from
        the service's shared pool, and a mailbox. The session takes the kit's id."""
        config = self.config
        if not ray.is_initialized():
            from covey.client.join import join_service

            join_service(config.options.verbose)
        lender = self.lender = SharedPoolHandle.named(pool_name(str(service_dir())))
        # A resumed session, or one given its id, keeps its id; any other takes the kit's.
        fixed = self.session_id if (config.resumed is not None or config.options.session_id) else None
        taken = await lender.take_kit(model_modules(config.options.model), session_id=fixed)
        if taken.session_id != self.session_id:
            self.renamed(taken.session_id)
        registry, mailbox = taken.handles()
        await registry.configure(config.limits)
        return registry, mailbox

    def renamed(self, session_id: str) -> None:
        """The session takes the kit's id: what is named after it follows (its debug log; the files
        its agents read without asking, when the main spec is next built)."""
        self.session_id = session_id
        if self.debug is not None:
            self.debug.renamed(session_id)

    async def take_main(self, runtime: SessionRuntime) -> AgentHandle:
        """A warm actor from the pool for the main agent, owned until given back."""
        main = await runtime.registry.take("home")
        self.owned.append(main)
        return main

    async def give_back(self, main: AgentHandle) -> None:
        """The main agent's actor back to the pool (the session's, or the covey service's)."""
        if self.runtime is not None:  # else close() has killed it
            self.owned.remove(main)
            await self.runtime.registry.release(main)

    async def stop(self, reason: str, grace_s: float = STOP_GRACE_S) -> list[dict[str, Any]]:
        """Stop every agent of the session, each with its cleanup (a kept worktree stays, and is
        returned); what does not stop in ``grace_s`` is killed by ``close``."""
        runtime = self.runtime
        if runtime is None:
            return []
        mains = [handle for handle in self.owned if isinstance(handle, AgentHandle)]
        stopping: list[asyncio.Future[Any]] = [
            asyncio.ensure_future(asyncio.wait_for(main.cancel("killed", reason), grace_s)) for main in mains]
        stopping.append(asyncio.ensure_future(asyncio.wait_for(runtime.registry.stop_all(reason), grace_s * 2)))
        done = await asyncio.gather(*stopping, return_exceptions=True)
        kept: list[dict[str, Any]] = done[-1] if isinstance(done[-1], list) else []
        self.kept_worktrees += kept
        return kept

    async def broken(self, exc: SessionBroken, agent_id: str) -> ResultEvent:
        """Stop what is left of a session that lost an actor; its error result."""
        self.lost_actor = True
        await self.stop(str(exc))
        text = f"{exc}: the run cannot go on, and every agent of the session was stopped."
        return ResultEvent.failure(text, session_id=self.session_id, agent_id=agent_id)

    async def interrupt(self, main: AgentHandle, slot: MainAgentSlot, reason: str) -> bool:
        """Stop the main agent's turn; the Interrupt hooks run while it stops (they cannot hold it up)."""
        stopped, _ = await asyncio.gather(main.cancel("killed", reason),
                                          fire_interrupt(self.config, slot, self.session_id))
        return bool(stopped)

    def close(self, slot: MainAgentSlot, reason: str = "other") -> None:
        """Run the SessionEnd hooks (``reason``: Claude Code's, ``other`` for a run that simply
        ended), then kill every actor the session started (pooled agents die with the registry that
        owns them; a served session's borrowed ones are ended by the service's pool), then Ray if
        covey started it, then its debug log and (a session not kept) its files."""
        if slot.turns and not self.ended:
            self.ended = True
            fire_session_end(self.config.settings.hooks, reason=reason, project_dir=self.config.config_root,
                             env=self.config.options.env, session_id=self.session_id, mode=slot.mode,
                             transcript_path=transcript(self.config, self.session_id, slot.agent_id))
        if self.lender is not None and self.runtime is not None:
            # The kit's actors are the pool's: it kills or reuses them with what this session held.
            self.lender.end_session(self.session_id, reuse_kit=not (self.runtime.teams or self.lost_actor))
        for handle in reversed(self.owned):
            handle.kill()
        self.owned.clear()
        self.runtime = None
        shutdown_if_started(self.started_ray)
        self.started_ray = False
        self.discard()  # last: the SessionEnd hooks may read its transcript

    def discard(self) -> None:
        """What the session keeps open outside Ray: its debug log, and a session not kept's files."""
        if self.debug is not None:
            self.debug.close()
            self.debug = None
        ephemeral.remove(self.config.private)


def _spread() -> bool:
    """The cluster has more than one live node."""
    nodes: list[dict[str, Any]] = _ray_nodes()
    return sum(1 for node in nodes if node.get("Alive")) > 1


async def fire_interrupt(config: SessionConfig, slot: MainAgentSlot, session_id: str) -> None:
    """The session's Interrupt hooks (the user stopped the turn), with the fields the TypeScript
    SDK 0.3.337's CLI sends: ``source: "user"``, ``reason: "stop"``, ``via: "client"``."""
    groups = (config.settings.hooks or {}).get("Interrupt")
    if not groups:
        return
    hooks = HookRegistry({"Interrupt": groups}, project_dir=config.config_root, env=config.options.env,
                         session_id=session_id, transcript_path=transcript(config, session_id, slot.agent_id),
                         callback=config.options.on_hook_callback, mode_of=lambda: slot.mode)
    try:
        await hooks.run_interrupt()
    except Exception:  # a hook never keeps the turn from stopping
        log.exception("Interrupt hooks failed")
