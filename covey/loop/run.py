"""The agent loop: request, step, tools, repeat — bounded by ``max_turns``.

The loop yields events (``covey.events``) as they happen; whoever drives it
(the lifecycle, an actor, a test) decides where they go. It knows nothing of
Ray, sub-agents or transcripts: notifications arrive through an ``Inbox``.
"""

from __future__ import annotations

import time
from typing import Any, AsyncIterator, Awaitable, Callable, TypeVar

from covey.errors import ModelAPIError
from covey.events import AssistantEvent, CompactBoundary, Event, PermissionDenied, ResultEvent, StreamEvent, UserEvent
from covey.loop.compact import Compactor, estimate_tokens
from covey.loop.compacting import compacted
from covey.loop.config import Inbox, LoopConfig
from covey.loop.execute import ToolExecutor, interrupted_results
from covey.loop.stats import TurnEnding, LoopStats, result_event, structured_end, structured_reminder, tools_end
from covey.loop.steps import ContinueTurn, CutOff, FinalOutput, RunTools, Stop, next_step, pending_calls
from covey.loop.stream import OnStream, streamed
from covey.loop.wire import as_blocks, assistant_message, wire_message, with_breakpoint, with_breakpoints
from covey.model.base import Model, ModelRequest, TokenUsage
from covey.model.effort import request_effort
from covey.model.messages import Message, ToolUseBlock
from covey.model.thinking import fit_thinking, task_budget
from covey.observe.otel import traced_chat
from covey.teams.render import SentPrompt, render_notice
from covey.tools.structured_output import STRUCTURED_OUTPUT, StructuredOutput

CONTINUATIONS = 3
"""Cut-off replies in a row the loop asks the model to go on from, before the run ends on one."""
GO_ON = ("Your reply was cut off at the output token limit. Go on exactly where it stopped, mid-sentence "
         "if that is where it ended: no apology, no recap. Split what is left into smaller pieces.")
CUT_CALL = "This call was cut off at the output token limit before its input was complete; it did not run."

CostOf = Callable[[str, TokenUsage], float]  # (model_id, usage) -> USD: what a reply cost
StopCheck = Callable[[str], Awaitable["str | None"]]
"""``(final_text) -> reason``: a reason to keep going instead of stopping (Stop hooks), or None."""
E = TypeVar("E", bound=Event)


class AgentLoop:
    def __init__(
        self, *, model: Model, config: LoopConfig, executor: ToolExecutor, session_id: str = "",
        agent_id: str | None = None, cost_of: CostOf | None = None, inbox: Inbox | None = None,
        parent_tool_use_id: str | None = None, stop_check: StopCheck | None = None,
        compactor: Compactor | None = None, halted: Callable[[], str | None] = lambda: None,
        spent: Callable[[], str | None] = lambda: None, deferred: Callable[[], dict[str, Any] | None] = lambda: None,
    ) -> None:
        self.model, self.config, self.executor = model, config, executor
        self.session_id, self.agent_id = session_id, agent_id
        self.cost_of: CostOf = cost_of or (lambda model_id, usage: 0.0)
        self.inbox, self.parent_tool_use_id, self.stop_check = inbox, parent_tool_use_id, stop_check
        self.halted = halted
        """Why a hook said ``"continue": false`` (None: none did): the run ends after that step."""
        self.spent = spent
        """Why the session's budget is spent (None while it is not): checked after each reply."""
        self.deferred = deferred
        """Takes the call a PreToolUse hook deferred (None: none was): a lone one ends the run unanswered."""
        self.deferral: dict[str, Any] | None = None
        self.messages: list[dict[str, Any]] = []
        self.stats = LoopStats()
        self.denials: list[dict[str, Any]] = []
        self.last_stop_reason: str | None = None
        self.sent_tools: list[dict[str, Any]] | None = None
        """The tools array of the last request, without its breakpoint (what a fork inherits)."""
        self.compactor = compactor
        self.context_tokens = 0
        """The context the last reply reported (input, cache and output tokens)."""
        self.counted = 0
        """How many messages that figure covers; later ones are estimated."""
        self.cut_offs = 0
        """Replies cut off at ``max_tokens`` in a row."""
        tool = executor.tools.get(STRUCTURED_OUTPUT)
        self.structured = tool if isinstance(tool, StructuredOutput) else None
        """With ``--json-schema``: the tool whose valid call ends the run (docs/cli.md#structured-output)."""

    def cache_safe_params(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
        """System blocks, tools array and messages as the last request sent them, before its
        breakpoints (docs/subagents.md#caching): a fork re-adds them in the same places, so its
        prefix is that request's byte for byte."""
        tools = self.sent_tools if self.sent_tools is not None else self._tools()
        return list(self.config.system), list(tools), list(self.messages)

    def _tools(self) -> list[dict[str, Any]]:
        if self.config.tools is not None:
            return self.config.tools
        return [tool.schema() for tool in self.executor.tools.values()]

    async def run(self, messages: list[dict[str, Any]]) -> AsyncIterator[Event]:
        self.messages.extend(messages)
        for event in await self._tool_turn(pending) if (pending := pending_calls(self.messages)) else []:
            yield event  # a resumed session's deferred call: asked about (its hooks run) and run first
        first = True
        while True:
            if (not first or self.config.mail_before_first_turn) and (texts := await self._drain()):
                yield self._take_notifications(texts)
            first = False
            if self.stats.num_turns >= self.config.max_turns:
                yield self.result(TurnEnding("error_max_turns", f"Reached maximum number of turns ({self.config.max_turns})", "max_turns"))
                return
            message = None
            async for item in self._reply():
                if isinstance(item, Message):
                    message = item
                else:
                    yield item
            if message is None:  # the request failed, or spent the budget: its result is out
                return
            step = next_step(message)
            self.cut_offs = self.cut_offs + 1 if isinstance(step, CutOff) else 0
            match step:
                case CutOff(calls=calls) if self.cut_offs <= CONTINUATIONS:
                    yield self._go_on(calls)
                    continue
                case CutOff(text):
                    ending = TurnEnding("error_during_execution", text or "the model's reply hit max_tokens",
                                    "model_error", why="the model's reply hit max_tokens")
                case RunTools(calls):
                    for event in await self._tool_turn(calls):
                        yield event
                    if (end := tools_end(self.stats, structured_end(self.structured, message), self.halted(),
                                         self.deferral)) is None:
                        continue
                    ending = end
                case ContinueTurn():
                    continue
                case FinalOutput(text):
                    if reason := await self._stop_blocked(text) or (None if self.halted() else structured_reminder(self.structured)):
                        yield self._user_message(reason)
                        continue
                    ending = structured_end(self.structured, message) or TurnEnding(
                        "success", text, "stop_hook_prevented" if self.halted() else "completed")
                case Stop(reason, text):
                    ending = TurnEnding("error_during_execution", text or reason, "model_error", why=reason)
            yield await self._turn_result(ending)
            if ending.subtype != "success" or ending.deferred or not (texts := await self._await_background()):
                return
            yield self._take_notifications(texts)

    async def _reply(self) -> AsyncIterator[Event | Message]:
        """One request: a compaction first if one is due, the stream events (with partial messages),
        the assistant event and, last, the reply itself; on an API error or a spent budget, the run's
        result instead."""
        if (boundary := await self._compact_if_due()) is not None:
            yield boundary
        try:
            if self.config.partial_messages:
                async for item in streamed(self._request):
                    if isinstance(item, Message):
                        message = item
                    else:
                        yield self.event(StreamEvent, event=item)
            else:
                message = await self._request()
        except ModelAPIError as exc:
            # Claude Code's shape: the loop completed, the turn is an error ("API Error: ..." and the body).
            yield self.result(TurnEnding("success", exc.api_error_text(), "api_error", why=str(exc),
                                      api_error_status=exc.status_code, error=True))
            return
        for event in self._assistant_events(message):
            yield event
        if (spent := self.spent()) is not None:  # the reply was counted (its event told): no step after it
            yield self.result(TurnEnding("error_max_budget_usd", f"Stopped: {spent}", "max_budget_usd"))
            return
        yield message

    def _assistant_events(self, message: Message) -> list[AssistantEvent]:
        """The reply as Claude Code prints and records it: one assistant message per content block
        (a reply with none: one, empty), the stop reason on the last."""
        whole = wire_message(message)
        blocks = [[block] for block in whole["content"]] or [[]]
        pending = {"stop_reason": None, "stop_sequence": None}
        last = len(blocks) - 1
        return [self.event(AssistantEvent, message={**whole, "content": content, **({} if index == last else pending)},
                            request_id=message.request_id, ends_reply=index == last)
                for index, content in enumerate(blocks)]

    def _go_on(self, calls: tuple[ToolUseBlock, ...]) -> UserEvent:
        """After a cut-off reply: its calls answered as not run, and the model asked to go on."""
        blocks = [{"type": "tool_result", "tool_use_id": call.id, "content": CUT_CALL, "is_error": True} for call in calls]
        return self._user_message([*blocks, {"type": "text", "text": GO_ON}])

    def _user_message(self, content: str | list[dict[str, Any]]) -> UserEvent:
        self.messages.append({"role": "user", "content": content})
        return self.event(UserEvent, message=self.messages[-1])

    async def _compact_if_due(self) -> CompactBoundary | None:
        """Summarise the conversation when it nears the window (docs/compaction.md); None if not
        due, blocked by a PreCompact hook, or the summary failed (the run goes on uncompacted)."""
        tokens = self.context_tokens + estimate_tokens(self.messages[self.counted:])
        if self.compactor is None or not self.messages or not self.compactor.due(tokens):
            return None
        return await compacted(self, "auto", tokens)

    async def _request(self, on_stream: OnStream | None = None) -> Message:
        self.sent_tools = self._tools()
        thinking, max_tokens = fit_thinking(self.config.thinking, self.config.max_tokens)
        request = ModelRequest(
            model=self.config.model_id, system=with_breakpoint(self.config.system),
            messages=with_breakpoints(self.messages, self.config.inherited), tools=with_breakpoint(self.sent_tools),
            max_tokens=max_tokens, thinking=thinking, effort=request_effort(self.config.model_id, self.config.effort),
            task_budget=task_budget(self.config.model_id, self.config.task_budget), betas=self.config.betas,
            agent_id=self.agent_id, on_stream=on_stream,
        )
        started = time.monotonic()
        message = await traced_chat(self.model.create, request)
        self.stats.api_ms += int((time.monotonic() - started) * 1000)
        self.stats.num_turns += 1
        self.stats.turn_turns += 1
        self.last_stop_reason = message.stop_reason
        usage = TokenUsage.of(message.usage)
        self.stats.spend(usage, self.cost_of(message.model or self.config.model_id, usage))
        self.messages.append(assistant_message(message))
        self.context_tokens, self.counted = usage.total, len(self.messages)
        return message

    async def _tool_turn(self, calls: tuple[ToolUseBlock, ...]) -> list[Event]:
        """Run a turn's calls: the denials among them, then the user message with every result."""
        denied = len(self.denials)
        await self._run_tools(calls)
        if (deferral := self.deferred()) is not None and len(calls) == 1:
            self.messages.pop()  # as Claude Code: the call stays unanswered until the session resumes
            self.deferral = deferral
            return []
        events: list[Event] = self._denied_events(self.denials[denied:])
        return [*events, self.event(UserEvent, message=self.messages[-1], tool_use_result=self._tool_use_result())]

    async def _run_tools(self, calls: tuple[ToolUseBlock, ...]) -> list[dict[str, Any]]:
        results: dict[str, dict[str, Any]] = {}
        try:
            await self.executor.run_all(calls, results)
        finally:
            # Even when cancelled, every tool_use gets its tool_result so the
            # history stays valid for a later resume.
            blocks = interrupted_results(calls, results)
            if self.executor.batch_note:  # what PostToolBatch hooks said, after the results
                blocks = [*blocks, {"type": "text", "text": self.executor.batch_note}]
            if self.config.tool_result_reminder:
                blocks = [*blocks, {"type": "text", "text": f"<system-reminder>\n{self.config.tool_result_reminder}\n</system-reminder>"}]
            self.messages.append({"role": "user", "content": blocks})
        return blocks

    async def _stop_blocked(self, text: str) -> str | None:
        return await self.stop_check(text) if self.stop_check is not None else None

    async def _drain(self) -> list[str]:
        # Background shells that ended since the last turn notify too (Claude Code's <task-notification>).
        shells = [render_notice(notice) for notice in self.executor.ctx.processes.take_notices()]
        return [*shells, *(await self.inbox.drain() if self.inbox is not None else [])]

    async def _turn_result(self, ending: TurnEnding) -> ResultEvent:
        """The turn's result; ``goes_on`` while background work this run owns may still wake it."""
        inbox = self.inbox if ending.subtype == "success" and not ending.deferred and self._waits() else None
        return self.result(ending).model_copy(update={"goes_on": inbox is not None and await inbox.outstanding()})

    def _waits(self) -> bool:
        """Whether this run waits on after a final answer for background work it owns."""
        return self.inbox is not None and self.config.wait_for_background and self.inbox.owns_background()

    async def _await_background(self) -> list[str]:
        """After a final answer: wait for owned background work; its notices start a new turn."""
        if self.inbox is None or not self._waits():
            return []
        return await self._drain() or (await self.inbox.wait() if await self.inbox.outstanding() else [])

    def _take_notifications(self, texts: list[str]) -> UserEvent:
        """Append notices to the history; the event carries just the new content (for transcripts).
        A message sent alone that starts a user message is kept as the string it was (Claude Code's
        prompt record), so a truncating resume finds the turn it starts as sent."""
        blocks: str | list[dict[str, Any]] = [{"type": "text", "text": text} for text in texts]
        last = self.messages[-1] if self.messages else None
        # Keep roles alternating: after tool results the notices join that user message.
        if last is not None and last["role"] == "user":
            last["content"] = as_blocks(last["content"]) + as_blocks(blocks)
        else:
            if len(texts) == 1 and isinstance(texts[0], SentPrompt):
                blocks = str(texts[0])
            self.messages.append({"role": "user", "content": blocks})
        return self.event(UserEvent, message={"role": "user", "content": blocks}, taken_mail=True)

    def _tool_use_result(self) -> Any:
        """The structured result of the turn's call, when it made one call that has one (Claude Code
        puts one ``tool_use_result`` on each user event; covey answers a turn's calls in one)."""
        results = self.executor.structured
        return next(iter(results.values())) if len(results) == 1 else None

    def _denied_events(self, denials: list[dict[str, Any]]) -> list[Event]:
        texts = {block.get("tool_use_id"): block.get("content") for block in as_blocks(self.messages[-1]["content"])}
        return [PermissionDenied(session_id=self.session_id, agent_id=self.agent_id, tool_name=denial["tool_name"],
                                 tool_use_id=denial["tool_use_id"], message=str(texts.get(denial["tool_use_id"], "")))
                for denial in denials]

    def event(self, cls: type[E], **fields: Any) -> E:
        return cls(session_id=self.session_id, agent_id=self.agent_id, parent_tool_use_id=self.parent_tool_use_id, **fields)

    def result(self, ending: TurnEnding) -> ResultEvent:
        return result_event(self.stats, ending, session_id=self.session_id, agent_id=self.agent_id,
                            stop_reason=self.last_stop_reason, denials=self.denials)
