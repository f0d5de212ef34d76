"""Running the tool calls of one assistant message.

Every tool_use gets exactly one tool_result, in call order. Consecutive
read-only (or concurrent-safe) calls run together; any other call runs alone,
in order, so an Edit never races a Read of the same file. Unknown tools, invalid
input, denials and exceptions all become ``is_error`` results the model can act on.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Iterable, Sequence

from covey.model.messages import ToolUseBlock
from pydantic import ValidationError

from covey.common.tool_names import canonical_tool_name
from covey.loop.heartbeat import beat, every_s
from covey.observe.otel import tool_ended, tool_span
from covey.tools.base import Tool, ToolContext, ToolResult

Gate = Callable[[Tool, Any, ToolContext], Awaitable["ToolResult | Any"]]
"""Checks a call before it runs (permissions, PreToolUse hooks): returns the
input to run with (possibly changed) or a ToolResult that replaces the call."""

After = Callable[[Tool, Any, ToolResult, ToolContext], Awaitable[ToolResult]]
"""Sees a finished call (PostToolUse hooks); may replace its result."""

AfterBatch = Callable[[Sequence[ToolUseBlock], dict[str, dict[str, Any]], ToolContext], Awaitable["str | None"]]
"""Sees every call of one reply with its result block (PostToolBatch hooks): a note for the model, or None."""


class ToolExecutor:
    def __init__(
        self,
        tools: Iterable[Tool],
        ctx: ToolContext,
        *,
        gate: Gate | None = None,
        after: After | None = None,
    ) -> None:
        self.tools = {tool.name: tool for tool in tools}
        self.ctx = ctx
        self.gate = gate
        self.after = after
        self.after_batch: AfterBatch | None = None
        self.batch_note: str | None = None
        """What ``after_batch`` said of the last batch: the model reads it with the results."""
        self.structured: dict[str, Any] = {}
        """The last batch's structured results by tool_use id (Claude Code's ``tool_use_result``),
        for the calls that have one: the Agent tool's output, ``"Error: ..."`` for a failed call."""

    def lookup(self, name: str) -> Tool | None:
        return self.tools.get(canonical_tool_name(name))

    async def run_all(self, calls: Sequence[ToolUseBlock], results: dict[str, dict[str, Any]]) -> None:
        """Fill ``results`` (tool_use id -> tool_result block) for every call.

        ``results`` is owned by the caller so that, on cancellation, it still holds
        what finished and the caller can close the rest (see ``interrupted_results``).
        """
        self.structured, self.batch_note = {}, None
        for batch in self._batches(calls):
            blocks = await asyncio.gather(*(self.run_one(call) for call in batch))
            for call, block in zip(batch, blocks):
                results[call.id] = block
        if self.after_batch is not None and calls:
            self.batch_note = await self.after_batch(calls, results, self.ctx)

    def _batches(self, calls: Sequence[ToolUseBlock]) -> list[list[ToolUseBlock]]:
        batches: list[list[ToolUseBlock]] = []
        for call in calls:
            if self._concurrent(call) and batches and self._concurrent(batches[-1][0]):
                batches[-1].append(call)
            else:
                batches.append([call])
        return batches

    def _concurrent(self, call: ToolUseBlock) -> bool:
        tool = self.lookup(call.name)
        # An unknown tool only produces an error result: safe to run with others.
        return tool is None or tool.read_only or tool.read_only_hint or tool.concurrent

    async def run_one(self, call: ToolUseBlock) -> dict[str, Any]:
        tool = self.lookup(call.name)
        pulse = self._heartbeat(tool, call)
        try:
            with tool_span(tool.name if tool else call.name, call.id) as span:
                # The last guard on what any tool (an MCP server's, a hook's replacement...) brings into the context.
                result = (await self._result_of(call)).capped()
                tool_ended(span, result)
        finally:
            if pulse is not None:
                pulse.cancel()
        if (structured := structured_result(tool, result)) is not None:
            self.structured[call.id] = structured
        return tool_result_block(call.id, result, as_blocks=bool(getattr(tool, "result_as_blocks", False)))

    def _heartbeat(self, tool: Tool | None, call: ToolUseBlock) -> asyncio.Task[None] | None:
        """A ``tool_progress`` every ``heartbeat_s`` while a tool that has one runs (covey/loop/heartbeat.py)."""
        every = every_s(getattr(tool, "heartbeat_s", None), self.ctx.env)
        if tool is None or not every or self.ctx.emit is None:
            return None
        return asyncio.create_task(beat(self.ctx.emit, call, tool.name, every, self.ctx.services.session_id or ""))

    async def _result_of(self, call: ToolUseBlock) -> ToolResult:
        tool = self.lookup(call.name)
        if tool is None:
            known = ", ".join(sorted(self.tools)) or "none"
            return ToolResult.error(f"No such tool: {call.name!r}. Available tools: {known}.")
        try:
            parsed = tool.input_model.model_validate(call.input)
        except ValidationError as exc:
            return ToolResult.error(f"Invalid input for {tool.name}: {_validation_summary(exc)}")
        ctx = self.ctx.for_call(call.id)
        try:
            if self.gate is not None:
                gated = await self.gate(tool, parsed, ctx)
                if isinstance(gated, ToolResult):
                    return gated
                parsed = gated
            result = await _run(tool, parsed, ctx)
            if self.after is not None:  # a failed call too: PostToolUseFailure hooks see it
                result = await self.after(tool, parsed, result, ctx)
            return result
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a gate or hook never raises into the loop either
            return ToolResult.error(f"{tool.name} failed: {type(exc).__name__}: {exc}")


async def _run(tool: Tool, input: Any, ctx: ToolContext) -> ToolResult:
    try:
        return await tool.run(input, ctx)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a tool never raises into the loop
        return ToolResult.error(f"{tool.name} failed: {type(exc).__name__}: {exc}")


def tool_result_block(tool_use_id: str, result: ToolResult, *, as_blocks: bool = False) -> dict[str, Any]:
    """The tool_result the model reads; ``as_blocks``: its content as a list of text blocks
    (Claude Code sends the Agent tool's that way), else a string."""
    content: Any = [{"type": "text", "text": result.content}] if as_blocks and not result.is_error else result.content
    if result.blocks and not result.is_error:  # images travel as blocks beside the text
        content = [*([{"type": "text", "text": result.content}] if result.content else []), *result.blocks]
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    if result.is_error:
        block["is_error"] = True
    return block


def structured_result(tool: Tool | None, result: ToolResult) -> Any:
    """Claude Code's ``tool_use_result`` for a call: ``"Error: ..."`` for a failed one, else what
    the tool's ``tool_use_result(result)`` makes of its data (None: the tool has none)."""
    if result.is_error:
        return f"Error: {result.content}"
    shape = getattr(tool, "tool_use_result", None)
    return shape(result) if shape is not None else None


def interrupted_results(calls: Sequence[ToolUseBlock], results: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Results for every call, in order, with unfinished ones closed as interrupted."""
    closed = ToolResult.error("Interrupted: the run was cancelled before this tool call finished.")
    return [results.get(call.id) or tool_result_block(call.id, closed) for call in calls]


def _validation_summary(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"]) or "input"
        problems.append(f"{where}: {error['msg']}")
    return "; ".join(problems)
