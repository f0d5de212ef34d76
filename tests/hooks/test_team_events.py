"""TaskCreated, TaskCompleted and TeammateIdle fire where Claude Code fires them: from TaskCreate and
TaskUpdate in the agent that calls them, and at a teammate's turn end (no Ray: in-memory board,
``run_agent`` driven directly)."""

from __future__ import annotations

import json
from pathlib import Path

from covey.agent.lifecycle import AgentServices, run_agent
from covey.definitions.definition import AgentDefinition
from covey.hooks import HookRegistry, read_hooks
from covey.hooks.teammate_idle import teammate_turn_end
from covey.model.scripted import ScriptedModel
from covey.runtime.spec import AgentSpec, RunSettings, TeamSeat
from covey.subagents.task_tools import TaskCreate, TaskUpdate
from covey.teams.board import TaskBoard
from covey.teams.context import TeamContext
from covey.teams.mailbox import Mailbox
from covey.tools.base import ToolContext, ToolServices
from tests.hooks.scripts import answer, dump_stdin, exit_with, py_hook, read_json


def _hooks(event: str, *commands: str) -> dict:
    return {event: [{"hooks": [{"type": "command", "command": c} for c in commands]}]}


def _team(me: str = "team-lead") -> TeamContext:
    return TeamContext(mailbox=Mailbox(), me=me, my_agent_id="agent-1", team_name="alpha", board=TaskBoard())


def _ctx(tmp_path: Path, registry: HookRegistry | None, team: TeamContext, spec=None) -> ToolContext:
    return ToolContext(agent_id="agent-1", cwd=tmp_path, services=ToolServices(team=team, hooks=registry, spec=spec))


def _registry(tmp_path: Path, hooks: dict) -> HookRegistry:
    return HookRegistry(hooks, project_dir=tmp_path, session_id="s-1")


async def _create(ctx: ToolContext, subject="Write the parser", description="Parse the config"):
    return await TaskCreate().run(TaskCreate.input_model.model_validate({"subject": subject, "description": description}), ctx)


async def _update(ctx: ToolContext, **raw):
    return await TaskUpdate().run(TaskUpdate.input_model.model_validate(raw), ctx)


def test_the_three_events_register_without_a_warning():
    parsed = read_hooks({event: [{"hooks": [{"type": "command", "command": "x"}]}]
                         for event in ("TaskCreated", "TaskCompleted", "TeammateIdle")}, "settings.json")
    assert parsed.warnings == [] and sorted(parsed.config) == ["TaskCompleted", "TaskCreated", "TeammateIdle"]


# --- TaskCreated -------------------------------------------------------------------------

async def test_task_created_gets_claude_codes_fields_and_the_task_stays(tmp_path):
    out = tmp_path / "created.json"
    team = _team()
    result = await _create(_ctx(tmp_path, _registry(tmp_path, _hooks("TaskCreated", dump_stdin(tmp_path, "d", out))), team))
    payload = read_json(out)["payload"]
    assert not result.is_error and [t.subject for t in await team.board.list()] == ["Write the parser"]
    assert payload["hook_event_name"] == "TaskCreated" and payload["session_id"] == "s-1"
    assert (payload["task_id"], payload["task_subject"], payload["task_description"]) == (
        result.data.id, "Write the parser", "Parse the config")
    assert payload["team_name"] == "alpha" and "teammate_name" not in payload  # the lead is no teammate


async def test_task_created_exit_2_deletes_the_task_and_the_model_reads_why(tmp_path):
    team = _team()
    hooks = _hooks("TaskCreated", exit_with(tmp_path, "no", 2, "Subjects start with [TICKET-n]"))
    result = await _create(_ctx(tmp_path, _registry(tmp_path, hooks), team))
    assert result.is_error and result.content == "TaskCreated hook feedback:\nSubjects start with [TICKET-n]"
    assert await team.board.list() == []


async def test_task_created_decision_block_refuses_and_continue_false_is_ignored(tmp_path):
    blocking, stopping = _team(), _team()
    block = answer(tmp_path, "b", {"decision": "block", "reason": "too vague"})
    refused = await _create(_ctx(tmp_path, _registry(tmp_path, _hooks("TaskCreated", block)), blocking))
    stop = answer(tmp_path, "s", {"continue": False, "stopReason": "enough"})
    registry = _registry(tmp_path, _hooks("TaskCreated", stop))
    kept = await _create(_ctx(tmp_path, registry, stopping))
    assert refused.is_error and "too vague" in refused.content and await blocking.board.list() == []
    assert not kept.is_error and len(await stopping.board.list()) == 1 and registry.halted is None


# --- TaskCompleted from TaskUpdate -------------------------------------------------------

async def _started(team: TeamContext, owner: str = "amy") -> str:
    task = await team.board.create("Write the parser", "Parse the config")
    await team.board.update(task.id, {"status": "in_progress", "owner": owner})
    return task.id


async def test_task_completed_exit_2_keeps_the_task_open_and_writes_nothing_of_the_patch(tmp_path):
    team = _team()
    task_id = await _started(team)
    hooks = _hooks("TaskCompleted", exit_with(tmp_path, "tests", 2, "Tests are failing"))
    result = await _update(_ctx(tmp_path, _registry(tmp_path, hooks), team), taskId=task_id, status="completed",
                           owner="bob")
    task = await team.board.get(task_id)
    assert result.is_error and result.content == "TaskCompleted hook feedback:\nTests are failing"
    assert (task.status, task.owner) == ("in_progress", "amy")


async def test_task_completed_passes_with_a_teammates_name_and_the_task_closes(tmp_path):
    out = tmp_path / "done.json"
    team = _team(me="amy")
    task_id = await _started(team)
    seat = TeamSeat(name="alpha", member="amy", roster=None, board=team.board)
    ctx = _ctx(tmp_path, _registry(tmp_path, _hooks("TaskCompleted", dump_stdin(tmp_path, "d", out))), team,
               spec=_teammate_spec(tmp_path, {}, seat))
    result = await _update(ctx, taskId=task_id, status="completed")
    payload = read_json(out)["payload"]
    assert not result.is_error and (await team.board.get(task_id)).status == "completed"
    assert {k: payload[k] for k in ("hook_event_name", "task_id", "task_subject", "teammate_name", "team_name")} == {
        "hook_event_name": "TaskCompleted", "task_id": task_id, "task_subject": "Write the parser",
        "teammate_name": "amy", "team_name": "alpha"}


async def test_task_completed_fires_only_when_a_task_becomes_completed(tmp_path):
    team = _team()
    task_id = await _started(team)
    hooks = _hooks("TaskCompleted", exit_with(tmp_path, "no", 2, "never"))
    ctx = _ctx(tmp_path, _registry(tmp_path, hooks), team)
    assert not (await _update(ctx, taskId=task_id, status="pending")).is_error  # another status: no hook
    await team.board.update(task_id, {"status": "completed"})
    assert not (await _update(ctx, taskId=task_id, status="completed")).is_error  # already completed: no hook


async def test_task_completed_continue_false_from_task_update_is_ignored(tmp_path):
    team = _team()
    task_id = await _started(team)
    registry = _registry(tmp_path, _hooks("TaskCompleted", answer(tmp_path, "s", {"continue": False})))
    result = await _update(_ctx(tmp_path, registry, team), taskId=task_id, status="completed")
    assert not result.is_error and (await team.board.get(task_id)).status == "completed" and registry.halted is None


# --- a teammate's turn end ---------------------------------------------------------------

async def _turn_end(tmp_path: Path, hooks: dict, team: TeamContext):
    registry = _registry(tmp_path, hooks)
    registry.describe("agent-amy", agent_type="general-purpose", subagent=True)
    registry.after_stop = teammate_turn_end(registry, team, cwd=tmp_path)
    return await registry.run_stop("agent-amy", subagent=True, last_message="done")


async def test_teammate_idle_exit_2_keeps_the_teammate_working_with_the_feedback(tmp_path):
    out = tmp_path / "idle.json"
    hooks = _hooks("TeammateIdle", dump_stdin(tmp_path, "d", out), exit_with(tmp_path, "no", 2, "Run the build first"))
    outcome = await _turn_end(tmp_path, hooks, _team(me="amy"))
    payload = read_json(out)["payload"]
    assert outcome.blocked and not outcome.stop
    assert outcome.reason == "TeammateIdle hook feedback:\nRun the build first"
    assert (payload["hook_event_name"], payload["teammate_name"], payload["team_name"]) == ("TeammateIdle", "amy", "alpha")
    assert payload["agent_id"] == "agent-amy"


async def test_teammate_idle_continue_false_stops_the_teammate(tmp_path):
    hooks = _hooks("TeammateIdle", answer(tmp_path, "s", {"continue": False, "stopReason": "quota used"}),
                   exit_with(tmp_path, "no", 2, "keep going"))
    outcome = await _turn_end(tmp_path, hooks, _team(me="amy"))
    assert outcome.stop and outcome.stop_reason == "quota used" and not outcome.blocked


async def test_a_teammates_turn_end_fires_task_completed_for_its_own_tasks_in_progress(tmp_path):
    log = tmp_path / "log.jsonl"
    record = py_hook(tmp_path, "rec", f"open({str(log)!r}, 'a').write(sys.stdin.read() + '\\n')\n")
    team = _team(me="amy")
    mine, theirs = await _started(team, "amy"), await _started(team, "bob")
    hooks = {**_hooks("TaskCompleted", record, exit_with(tmp_path, "no", 2, "lint fails")), **_hooks("TeammateIdle", record)}
    outcome = await _turn_end(tmp_path, hooks, team)
    fired = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(p["hook_event_name"], p.get("task_id")) for p in fired] == [("TaskCompleted", mine), ("TeammateIdle", None)]
    assert theirs not in outcome.reason and outcome.reason == "TaskCompleted hook feedback:\nlint fails"
    assert (await team.board.get(mine)).status == "in_progress"  # the hooks check; TaskUpdate completes


async def test_a_blocking_stop_hook_sends_the_teammate_back_before_teammate_idle_runs(tmp_path):
    out = tmp_path / "idle.json"
    hooks = {**_hooks("SubagentStop", exit_with(tmp_path, "no", 2, "not yet")),
             **_hooks("TeammateIdle", dump_stdin(tmp_path, "d", out))}
    outcome = await _turn_end(tmp_path, hooks, _team(me="amy"))
    assert outcome.blocked and outcome.reason == "not yet" and not out.exists()


# --- through run_agent ---------------------------------------------------------------------

def _teammate_spec(tmp_path: Path, hooks: dict, seat: TeamSeat | None, **extra) -> AgentSpec:
    return AgentSpec(
        session_id="s-1", agent_id="agent-amy", definition=AgentDefinition(name="general-purpose", description="d"),
        prompt="go", model_id="claude-sonnet-4-6", cwd=str(tmp_path), tool_names=["TaskCreate", "TaskUpdate"],
        max_turns=6, transcript_dir=str(tmp_path / "t"), team=seat, depth=1 if seat else 0,
        settings=RunSettings(hooks=hooks, project_dir=str(tmp_path)), **extra)


async def _run(spec: AgentSpec, team: TeamContext, *turns) -> ScriptedModel:
    model = ScriptedModel.from_turns([*turns, {"text": "done"}])
    services = AgentServices(model=model, team=team, extra_tools=[TaskCreate(), TaskUpdate()])
    [event async for event in run_agent(spec, services)]
    return model


async def test_in_a_running_agent_task_create_fires_task_created_and_the_model_reads_the_refusal(tmp_path):
    team = _team()
    hooks = _hooks("TaskCreated", exit_with(tmp_path, "no", 2, "Subjects need a ticket"))
    call = {"tool_use": [{"name": "TaskCreate", "input": {"subject": "x", "description": "y"}}]}
    model = await _run(_teammate_spec(tmp_path, hooks, None), team, call)
    assert "TaskCreated hook feedback:\\nSubjects need a ticket" in json.dumps(model.requests[1].messages[-1])
    assert await team.board.list() == []


async def test_a_running_teammate_is_sent_back_to_work_by_teammate_idle_once(tmp_path):
    marker = tmp_path / "asked"
    once = py_hook(tmp_path, "once", f"import pathlib\np = pathlib.Path({str(marker)!r})\n"
                                     "if not p.exists():\n    p.touch()\n    sys.stderr.write('Write the summary file')\n"
                                     "    sys.exit(2)\n")
    team = _team(me="amy")
    seat = TeamSeat(name="alpha", member="amy", roster=None, board=team.board)
    model = ScriptedModel.from_turns([{"text": "idle now"}, {"text": "summary written"}])
    services = AgentServices(model=model, team=team)
    events = [e async for e in run_agent(_teammate_spec(tmp_path, _hooks("TeammateIdle", once), seat), services)]
    assert len(model.requests) == 2
    assert "TeammateIdle hook feedback:\\nWrite the summary file" in json.dumps(model.requests[1].messages[-1])
    assert events[-1].result == "summary written"
