"""Agent definitions and isolation end to end, through the real SDK."""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path

import git
import pytest

from covey.definitions.definition import AgentDefinition
from covey.events import TaskNotification, UserEvent
from covey.session import Session
from tests.session.scripts import CHILD, MAIN, agent_call, rule
from tests.session.served import model_for, requests_with, served, text_of, tool_names

pytestmark = [pytest.mark.ray, pytest.mark.usefixtures("served_kits")]  # sessions borrow pooled actors


def _project(tmp_path: Path, *, claude_md: str | None = None, repo: bool = False) -> Path:
    project = tmp_path / "proj"
    project.mkdir(exist_ok=True)
    if claude_md:
        (project / "CLAUDE.md").write_text(claude_md)
    if repo:
        r = git.Repo.init(project)
        (project / "README.md").write_text("hello\n")
        r.index.add(["README.md"] + (["CLAUDE.md"] if claude_md else []))
        r.index.commit("first")
    return project


async def _run(project: Path, api, tmp_path: Path, prompt: str = "go", **options):
    options.setdefault("max_turns", 8)  # a script that goes wrong ends quickly instead of looping
    session = Session(cwd=str(project), model=model_for(api), transcript_dir=str(tmp_path / "t"), pool_size=2, **options)
    try:
        result = await asyncio.wait_for(session.run(prompt), 120)
        records = {r.agent_id: r for r in await session.runtime.registry.records()}
        return result, records
    finally:
        session.close()


def _main_tool_results(result) -> list[dict]:
    main = result.agents["agent_id"]
    return [b for e in result.events if isinstance(e, UserEvent) and e.agent_id == main
            for b in map(_text_content, e.message["content"]) if b.get("type") == "tool_result"]


def _text_content(block: dict) -> dict:
    """A tool_result with its content as one string (the Agent tool's comes as text blocks, as Claude Code's)."""
    content = block.get("content")
    if isinstance(content, list):
        return {**block, "content": "".join(part.get("text", "") for part in content)}
    return block


async def test_explore_is_cheap_read_only_and_blind_to_project_context_while_general_purpose_is_not(tmp_path):
    project = _project(tmp_path, claude_md="PROJECT_RULES_MARKER: always be kind", repo=True)
    with served(
        rule({**CHILD, "messages_contain": "EXPLORE_TASK"}, {"text": "explored"}),
        rule({**CHILD, "messages_contain": "GENERAL_TASK"}, {"text": "generally done"}),
        rule({**MAIN, "last_tool_result_contains": "explored"}, {"text": "both done"}),
        rule(MAIN, {"tool_use": [agent_call("EXPLORE_TASK", subagent_type="Explore"), agent_call("GENERAL_TASK")]}),
    ) as api:
        result, _ = await _run(project, api, tmp_path)
    assert result.result == "both done"
    (explore,) = requests_with(api, "EXPLORE_TASK")[:1]
    (general,) = requests_with(api, "GENERAL_TASK")[:1]
    assert explore["model"] == "claude-haiku-4-5"
    assert not {"Edit", "Write", "NotebookEdit", "Agent"} & set(tool_names(explore))
    assert "PROJECT_RULES_MARKER" not in text_of(explore) and "Current branch" not in text_of(explore)
    assert "PROJECT_RULES_MARKER" in text_of(general) and "Current branch" in text_of(general)
    assert "=== CRITICAL: READ-ONLY MODE ===" in text_of(explore)
    assert "PARENT" not in text_of(general) and "go" != general["messages"][-1]["content"]


async def test_a_markdown_definition_is_selectable_and_a_malformed_one_does_not_stop_the_run(tmp_path):
    project = _project(tmp_path)
    agents = project / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(textwrap.dedent("""\
        ---
        name: reviewer
        description: Reviews code
        tools: [Read, Grep]
        model: sonnet
        ---
        REVIEWER_PROMPT_MARKER: review carefully.
        """))
    (agents / "broken.md").write_text("---\nname: broken\ndescription: b\nmaxTurns: lots\n---\nbody\n")
    with served(
        rule(CHILD, {"text": "reviewed"}),
        rule({**MAIN, "last_tool_result_contains": "reviewed"}, {"text": "done"}),
        rule(MAIN, {"tool_use": agent_call("REVIEW_TASK", subagent_type="reviewer")}),
    ) as api:
        session_errors = Session(cwd=str(project), model=model_for(api)).definition_errors
        result, _ = await _run(project, api, tmp_path)
    assert result.result == "done"
    (child,) = requests_with(api, "REVIEW_TASK")[:1]
    assert child["model"] == "claude-sonnet-4-6" and tool_names(child) == ["Read", "Grep"]
    assert "REVIEWER_PROMPT_MARKER" in child["system"][0]["text"]
    assert any("broken.md" in str(e.path) and e.field == "maxTurns" for e in session_errors)


async def test_verification_runs_in_the_background_and_its_notification_arrives(tmp_path):
    project = _project(tmp_path)
    with served(
        rule(CHILD, {"text": "VERDICT: PASS"}),
        rule({**MAIN, "last_message_contains": "VERDICT"}, {"text": "verified"}),
        rule({**MAIN, "last_tool_result_contains": "Async agent launched"}, {"text": "waiting"}),
        rule(MAIN, {"tool_use": agent_call("check it", subagent_type="Verification")}),
    ) as api:
        result, records = await _run(project, api, tmp_path)
    assert "Async agent launched" in _main_tool_results(result)[0]["content"]
    assert [e.status for e in result.events if isinstance(e, TaskNotification)] == ["completed"]
    assert result.result == "verified"


async def test_a_bubbling_child_asks_the_root_and_an_async_default_child_is_denied_without_blocking(tmp_path):
    project = _project(tmp_path)
    asked = []

    def on_permission(request):
        asked.append(request)
        return True

    bubbler = AgentDefinition(name="bubbler", description="asks up", prompt="BUBBLER", permissionMode="bubble")
    with served(
        rule({**CHILD, "last_tool_result_contains": "nobody"}, {"text": "bash denied"}),
        rule({**CHILD, "last_tool_result_contains": "(no output)"}, {"text": "bash ran"}),
        rule(CHILD, {"tool_use": {"name": "Bash", "input": {"command": "rm -f does-not-exist"}}}),
        rule({**MAIN, "last_message_contains": "<task-notification>"}, {"text": "all done"}),
        rule({**MAIN, "last_tool_result_contains": "Async agent launched"}, {"text": "waiting"}),
        rule(MAIN, {"tool_use": [agent_call("BUBBLE_TASK", subagent_type="bubbler"),
                                 agent_call("ASYNC_TASK", background=True)]}),
    ) as api:
        result, records = await _run(project, api, tmp_path, agents=[bubbler], on_permission=on_permission)
    assert [r.subject for r in asked] == ["rm -f does-not-exist"]  # only the bubbling child asked
    async_requests = requests_with(api, "ASYNC_TASK")
    denial = [b for r in async_requests for m in r["messages"] for b in (m["content"] if isinstance(m["content"], list) else [])
              if b.get("type") == "tool_result"]
    assert denial and denial[0].get("is_error") and "nobody" in denial[0]["content"].lower()
    assert result.result == "all done"


async def test_a_pre_tool_use_hook_that_exits_2_blocks_the_call_and_the_model_sees_why(tmp_path):
    project = _project(tmp_path)
    (project / ".claude").mkdir()
    hook = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "echo 'NO_BASH_TODAY' >&2; exit 2"}]}]}}
    (project / ".claude" / "settings.json").write_text(json.dumps(hook))
    with served(
        rule({**MAIN, "last_tool_result_contains": "NO_BASH_TODAY"}, {"text": "blocked as expected"}),
        rule(MAIN, {"tool_use": {"name": "Bash", "input": {"command": "touch SHOULD_NOT_EXIST"}}}),
    ) as api:
        result, _ = await _run(project, api, tmp_path, permission_mode="bypassPermissions")
    block = _main_tool_results(result)[0]
    assert block.get("is_error") and "NO_BASH_TODAY" in block["content"]
    assert not (project / "SHOULD_NOT_EXIST").exists()
    assert result.result == "blocked as expected"


async def test_a_worktree_childs_edit_is_kept_and_reported_and_an_unchanged_worktree_is_removed(tmp_path):
    project = _project(tmp_path, repo=True)
    with served(
        rule({**CHILD, "messages_contain": "EDIT_TASK", "last_tool_result_contains": "Created "}, {"text": "edited"}),
        rule({**CHILD, "messages_contain": "EDIT_TASK"},
             {"tool_use": {"name": "Write", "input": {"file_path": "new.txt", "content": "from the child\n"}}}),
        rule({**CHILD, "messages_contain": "IDLE_TASK"}, {"text": "nothing to do"}),
        rule({**MAIN, "last_tool_result_contains": "Worktree kept"}, {"text": "done"}),
        rule(MAIN, {"tool_use": [agent_call("EDIT_TASK", isolation="worktree"),
                                 agent_call("IDLE_TASK", isolation="worktree")]}),
    ) as api:
        result, records = await _run(project, api, tmp_path, permission_mode="acceptEdits")
    by_prompt = {r.prompt: r for r in records.values() if r.role == "subagent"}
    kept = by_prompt["EDIT_TASK"].worktree
    assert kept and Path(kept["path"], "new.txt").read_text() == "from the child\n"
    assert kept["branch"].startswith("covey/")
    assert not (project / "new.txt").exists()  # the main checkout is untouched
    assert by_prompt["IDLE_TASK"].worktree is None
    worktrees = git.Repo(project).git.worktree("list")
    assert kept["path"] in worktrees and worktrees.count("\n") == 1  # main + the kept one only
    assert kept["path"] in _main_tool_results(result)[0]["content"]
