"""ExitPlanMode: the permission prompt is the plan's approval; approved, plan mode ends; refused, it stays."""

from pathlib import Path

from covey.loop.execute import ToolExecutor
from covey.loop.gate import PermissionGate
from covey.model.messages import ToolUseBlock
from covey.permissions.decisions import Deny
from covey.permissions.policy import PermissionPolicy
from covey.tools.base import ToolContext, ToolServices
from covey.tools.plan_mode import NOT_IN_PLAN_MODE, ExitPlanMode


class Spec:
    def __init__(self, policy):
        self.permissions = policy


def setup(tmp_path, mode, answer):
    asked = []

    async def asker(request):
        asked.append(request)
        return answer

    policy = PermissionPolicy(mode=mode, project_root=tmp_path, asker=asker)
    ctx = ToolContext(agent_id="agent-main", cwd=tmp_path, services=ToolServices(spec=Spec(policy)))
    executor = ToolExecutor([ExitPlanMode()], ctx, gate=PermissionGate(policy, asker))
    return policy, executor, asked


async def call(executor, **input):
    return await executor.run_one(ToolUseBlock(id="toolu_1", name="ExitPlanMode", input=input))


async def test_approved_plan_leaves_plan_mode(tmp_path):
    policy, executor, asked = setup(tmp_path, "plan", True)
    block = await call(executor, plan="1. Edit a.py\n2. Run the tests")
    assert "is_error" not in block and block["content"].startswith("User has approved your plan.")
    assert "## Approved Plan:\n1. Edit a.py" in block["content"]
    assert policy.mode == "default"
    (request,) = asked
    assert request.tool_name == "ExitPlanMode" and request.input["plan"].startswith("1. Edit a.py")


async def test_refused_plan_stays_in_plan_mode_with_the_message(tmp_path):
    policy, executor, asked = setup(tmp_path, "plan", Deny(message="Split step 2 first.", source="user"))
    block = await call(executor, plan="do it all")
    assert block["is_error"] and "Split step 2 first." in block["content"]
    assert policy.mode == "plan" and len(asked) == 1


async def test_outside_plan_mode_it_asks_nobody_and_says_so(tmp_path):
    policy, executor, asked = setup(tmp_path, "default", True)
    block = await call(executor, plan="x")
    assert block["is_error"] and block["content"] == NOT_IN_PLAN_MODE
    assert asked == [] and policy.mode == "default"


async def test_other_changes_stay_denied_in_plan_mode(tmp_path):
    policy = PermissionPolicy(mode="plan", project_root=tmp_path)
    assert isinstance(policy.decide("Write", False, str(tmp_path / "a")), Deny)
    assert not isinstance(policy.decide("ExitPlanMode", False, None), Deny)


async def test_bad_input_is_an_error(tmp_path):
    policy, executor, asked = setup(tmp_path, "plan", True)
    block = await call(executor, allowedPrompts=[{"tool": "Write", "prompt": "x"}])
    assert block["is_error"] and "Invalid input" in block["content"] and policy.mode == "plan" and asked == []


async def test_an_approval_that_chooses_accept_edits_keeps_it(tmp_path):
    from covey.permissions.decisions import Allow
    from covey.service.asker import from_response

    answer = from_response({"behavior": "allow", "updatedPermissions": [
        {"type": "setMode", "mode": "acceptEdits", "destination": "session"}]})
    assert isinstance(answer, Allow) and answer.set_mode == "acceptEdits"
    policy, executor, asked = setup(tmp_path, "plan", answer)
    block = await call(executor, plan="edit a.py")
    assert "is_error" not in block and block["content"].startswith("User has approved your plan.")
    assert policy.mode == "acceptEdits"
    again = await call(executor, plan="edit a.py")  # the plan was approved: there is no plan mode to leave
    assert again["is_error"] and again["content"] == NOT_IN_PLAN_MODE
