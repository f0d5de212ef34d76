"""Each row as one agent, launched through the session's registry (``RegistryRows``).

The map is a session: its registry admits every row's agent with the session's checks (the
concurrency limit, the spawn budget, ``--max-budget-usd`` over the whole map), takes a warm
actor from the pool (the session's own, or the covey service's) and watches it; each
request goes through the node's gateway and the account's rate scheduler like any agent's.
The map itself is the session's root in the registry's books (``register_main``), and each
row a child of it that this driver follows to its end, as a parent follows a sync child. Its
actor is placed as a sub-agent's is (``placement_lane``): on any node in turn on a cluster,
unless it has file tools and the nodes share no filesystem (then where the files are), or a
definition that asks for resources (then where Ray finds them).

A row's agent runs as the main agent of a session of its own: its own session id and
transcript (``<session>.jsonl``, indexed for ``covey -p --resume <session id>``), the main
agent's answer tool with ``--json-schema``, and its ``@`` mentions off (a row's text is data,
it reads no file by naming it).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from covey.definitions.definition import AgentDefinition
from covey.errors import AgentUnavailable, LimitExceeded, UserError
from covey.events import ResultEvent
from covey.ids import AgentId, new_session_id
from covey.rowmap.rows import Row
from covey.rowmap.summary import RowResult
from covey.runtime.records import FinalReport, LaunchRequest
from covey.runtime.spec import AgentSpec
from covey.session import Session
from covey.session.record import record_session
from covey.session.runtime import SessionRuntime
from covey.subagents.children import child_spec
from covey.subagents.launch import placement_lane
from covey.tools.structured_output import STRUCTURED_OUTPUT
from covey.transcripts.transcript import agent_transcript

SLOT_WAIT_S = 0.2
"""How long a row waits before asking again when the session's concurrency limit is reached."""


@dataclass(frozen=True)
class _RowCall:
    """A row's task as the Agent tool's call would give it (``child_spec`` reads these)."""

    prompt: str
    description: str
    model: str | None = None
    cwd: str | None = None
    effort: str | None = None
    mode: str | None = None


class RegistryRows:
    """Runs rows as agents of ``session`` (started by ``open``), each launched through its registry."""

    def __init__(self, session: Session, definition: AgentDefinition | None = None) -> None:
        self.session, self.definition = session, definition
        self.map_id = AgentId.new()
        self._runtime: SessionRuntime | None = None
        self._base_spec: AgentSpec | None = None

    async def open(self, label: str) -> None:
        """Start the session and register the map as its root agent."""
        runtime = self._runtime = await self.session.start()
        config = self.session.config
        await runtime.registry.register_main(self.map_id, config.model_id, str(config.cwd), label)

    async def close(self, summary: str, failed: bool) -> None:
        if self._runtime is not None:
            report = FinalReport(status="failed" if failed else "completed", text=summary)
            await self._runtime.registry.finish_main(self.map_id, report)

    @property
    def runtime(self) -> SessionRuntime:
        if self._runtime is None:
            raise UserError("the map's session has not started")
        return self._runtime

    async def run_row(self, row: Row, prompt: str, attempt: int) -> RowResult:
        """One attempt at ``row``: its agent launched, followed to its end, its figures."""
        spec = await self._spec(row, prompt)
        request = LaunchRequest(
            agent_id=spec.agent_id, parent_agent_id=self.map_id, depth=1, description=f"row {row.index}",
            prompt=prompt, agent_type=spec.definition.name, model=spec.model_id, cwd=spec.cwd, background=False)
        try:
            launched = await self._launch(request, spec)
        except AgentUnavailable as exc:
            return self._lost(spec.session_id, exc)
        if launched is None:
            return RowResult(status="stopped", error=self._budget_text)
        config = self.session.config
        record_session(config.roots, session_id=spec.session_id, main_agent_id=spec.agent_id, cwd=config.cwd,
                       model_id=spec.model_id, mode=self.session.slot.mode)
        report, result = await self._follow(launched.actor, spec.agent_id)
        if report is None and result is None and not await self.runtime.registry.back(wait_s=1.0):
            return self._lost(spec.session_id, AgentUnavailable("the registry did not answer"))
        return result_of(report, result, spec.session_id)

    @staticmethod
    def _lost(session_id: str, exc: Exception) -> RowResult:
        """The map's own session is gone (the service or its node died): no row fails for it; the map
        stops and a run of the same map goes on from the journal."""
        return RowResult(status="stopped", session_id=session_id,
                         error=f"the map's session lost its registry ({exc}): run the same map again to go on")

    async def _launch(self, request: LaunchRequest, spec: AgentSpec) -> Any:
        """The launch; None when the session's budget is spent. Waits for a slot while the
        session's concurrency limit is reached (the rows' own sub-agents count too)."""
        output_file = str(agent_transcript(spec))
        while True:
            try:
                return await self.runtime.registry.launch(request, spec, follow=True, output_file=output_file,
                                                          lane=placement_lane(spec, self.runtime))
            except LimitExceeded as exc:
                if exc.limit == "budget":
                    self._budget_text = str(exc)
                    return None
                if exc.limit != "concurrency":
                    raise
            await asyncio.sleep(SLOT_WAIT_S)

    _budget_text = "the session budget is spent"

    async def _follow(self, actor: Any, agent_id: str) -> tuple[FinalReport | None, ResultEvent | None]:
        """The row's agent's report and result event; stopped (Ctrl-C), its agent is killed first."""
        report: FinalReport | None = None
        result: ResultEvent | None = None
        try:
            async for item in actor.follow(agent_id):
                if isinstance(item, FinalReport):
                    report = item
                elif isinstance(item, ResultEvent):
                    result = item
        except asyncio.CancelledError:
            await asyncio.shield(self.runtime.registry.kill_agent(agent_id, "the map was stopped"))
            raise
        except AgentUnavailable:
            # The stream broke, but the run may have ended first: the registry keeps every run's report.
            report = await self.runtime.registry.report_of(agent_id)
        return report, result

    async def _base(self) -> AgentSpec:
        """Every row's spec but its ids and prompt, built once per map: the rows' requests share
        their system prompt and tools byte for byte (the prompt cache), and no row's text is read
        as a command (``/compact``) or for ``@`` mentions."""
        if self._base_spec is None:
            main = self.session.main_spec("", self.runtime)
            update: dict[str, Any] = {"mentions": [], "compact_request": None, "parent_agent_id": self.map_id}
            if self.definition is not None:
                child = await child_spec(main, self.definition, _RowCall(prompt="", description="a row"),
                                         agent_id=main.agent_id, tool_use_id=None, background=False,
                                         available_tools=self.runtime.tool_names)
                schema = [STRUCTURED_OUTPUT] if main.output_schema is not None else []
                update |= {"definition": child.definition, "model_id": child.model_id, "system": child.system,
                           "prelude": child.prelude, "tool_names": [*child.tool_names, *schema],
                           "permissions": child.permissions, "max_turns": child.max_turns, "effort": child.effort}
            self._base_spec = main.model_copy(update=update)
        return self._base_spec

    async def _spec(self, row: Row, prompt: str) -> AgentSpec:
        """The row's agent: the session's main agent (or the definition's) in a session of its own."""
        base = await self._base()
        spec = base.model_copy(update={"agent_id": AgentId.new(), "session_id": new_session_id(), "prompt": prompt,
                                       "description": f"row {row.index}"})
        transcript = str(agent_transcript(spec))
        return spec.model_copy(update={"settings": spec.settings.model_copy(update={"session_transcript": transcript})})


def result_of(report: FinalReport | None, result: ResultEvent | None, session_id: str) -> RowResult:
    """A row's attempt from its agent's report and result event (either may be missing: a dead actor)."""
    if report is None and result is None:
        return RowResult(status="failed", session_id=session_id, error="its agent ended without a report")
    if result is not None and result.subtype == "error_max_budget_usd":
        return RowResult(status="stopped", session_id=session_id, error=result.result or "the session budget is spent")
    completed = report.status == "completed" if report is not None else not result.is_error  # type: ignore[union-attr]
    if result is not None and result.is_error:
        completed = False
    text = result.result if result is not None else (report.text if report is not None else "")
    usage = report.usage if report is not None else None
    return RowResult(
        status="completed" if completed else "failed", result=text,
        structured_output=result.structured_output if result is not None else None,
        cost_usd=report.cost_usd if report is not None else 0.0,
        turns=(report.turns or 0) if report is not None else (result.num_turns if result is not None else 0),
        session_id=session_id, error=None if completed else (text or (report.status if report else "failed")),
        tokens={} if usage is None else {"input": usage.input_tokens, "output": usage.output_tokens,
                                         "cache_read": usage.cache_read_input_tokens,
                                         "cache_creation": usage.cache_creation_input_tokens},
        duration_ms=report.duration_ms if report is not None else (result.duration_ms if result is not None else 0),
        rate_wait_s=sum(max(0.0, float(w.get("until", 0)) - float(w.get("since", 0)))
                        for w in (report.rate_waits if report is not None else [])),
    )
