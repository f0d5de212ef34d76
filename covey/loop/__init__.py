"""The agent loop: one model turn at a time, each ending in an explicit next step."""

from covey.loop.config import Inbox, LoopConfig
from covey.loop.execute import ToolExecutor, tool_result_block
from covey.loop.run import AgentLoop
from covey.loop.steps import STOP_REASON_STEPS, ContinueTurn, FinalOutput, RunTools, Stop, next_step

__all__ = [
    "AgentLoop",
    "ContinueTurn",
    "FinalOutput",
    "Inbox",
    "LoopConfig",
    "RunTools",
    "STOP_REASON_STEPS",
    "Stop",
    "ToolExecutor",
    "next_step",
    "tool_result_block",
]
