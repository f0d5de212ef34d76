"""ExitPlanMode: in plan mode the agent presents its plan; the person's approval ends plan mode.

The approval is the permission prompt itself (the policy always asks for this tool in plan
mode): approved, the agent's mode becomes ``default``, or the mode the answer chose (an SDK
``setMode`` update such as ``acceptEdits``, a PermissionRequest hook's), and the agent goes on to
implement; refused, the call is denied and the agent stays in plan mode.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic.json_schema import SkipJsonSchema

from covey.tools.base import Tool, ToolContext, ToolInput, ToolResult

NOT_IN_PLAN_MODE = (
    "You are not in plan mode. This tool is only for leaving plan mode after presenting a plan. "
    "If your plan was already approved, go on with the implementation."
)


class AllowedPrompt(ToolInput):
    tool: Literal["Bash"] = Field(description="The tool the permission is for.")
    prompt: str = Field(description="What the commands do, e.g. 'run the tests'.")


class ExitPlanModeInput(ToolInput):
    plan: str | SkipJsonSchema[None] = Field(
        None, description="The plan to present for approval (markdown), concise and complete.")
    allowedPrompts: list[AllowedPrompt] | SkipJsonSchema[None] = Field(  # noqa: N815 -- Claude Code's field name
        None, description="Kinds of commands the implementation will need, shown to the person approving.")


class ExitPlanMode(Tool):
    name = "ExitPlanMode"
    touches_files = False
    asked_in_plan_mode = True
    lead_only = True
    description = (
        "In plan mode, when your plan is ready: present it (`plan`) for the user's approval. Approved, plan "
        "mode ends and you implement the plan; refused, you stay in plan mode and revise it. Use it only "
        "to leave plan mode after planning an implementation, not for research questions."
    )
    input_model = ExitPlanModeInput

    async def run(self, input: ExitPlanModeInput, ctx: ToolContext) -> ToolResult:
        policy = getattr(ctx.services.spec, "permissions", None)
        if policy is None or not (policy.mode == "plan" or getattr(policy, "leaving_plan", False)):
            return ToolResult.error(NOT_IN_PLAN_MODE)
        policy.leaving_plan = False
        if policy.mode == "plan":  # the approval (the prompt before this call) chose no mode of its own
            policy.mode = "default"
        text = "User has approved your plan. You can now start coding. Start with updating your todo list if applicable"
        if input.plan:
            text += f"\n\n## Approved Plan:\n{input.plan}"
        return ToolResult(content=text, data={"plan": input.plan, "mode": policy.mode})

