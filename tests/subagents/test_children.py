"""A child's spec is built from its parent's: the run's environment goes with it (no Ray)."""

from __future__ import annotations

from types import SimpleNamespace

from covey.definitions.builtin import BUILTIN_AGENTS
from covey.definitions.definition import AgentDefinition
from covey.runtime.limits import Limits
from covey.runtime.ports import SessionRuntime
from covey.runtime.spec import AgentSpec, RunSettings
from covey.subagents.children import child_spec

RUN_ENV = {"PATH": "/client/bin", "FOO": "bar", "ANTHROPIC_DEFAULT_HAIKU_MODEL": "client-haiku",
           "COVEY_DISABLE_OMIT_CLAUDE_MD": "1"}
CONTEXT = [{"role": "user", "content": [{"type": "text", "text": "the project's instructions"}]}]


def _parent(tmp_path, env):
    runtime = SessionRuntime(session_id="s", registry=None, mailbox=None, limits=Limits.from_env({}),
                             project_context={str(tmp_path): CONTEXT})
    main = AgentDefinition(name="main", description="main")
    return AgentSpec(session_id="s", agent_id="a-main", definition=main, prompt="go", model_id="claude-sonnet-4-6",
                     cwd=str(tmp_path), runtime=runtime, settings=RunSettings(env=env, project_dir=str(tmp_path)))


async def _child(parent, definition, **call):
    fields = {"model": None, "cwd": None, "prompt": "look around", "mode": None, "description": "look", **call}
    return await child_spec(parent, definition, SimpleNamespace(**fields), agent_id="a-child", tool_use_id="t1",
                            background=False, available_tools=["Read", "Grep", "Bash"])


async def test_a_child_carries_its_parents_env_and_grandchildren_too(tmp_path):
    parent = _parent(tmp_path, dict(RUN_ENV))
    child = await _child(parent, BUILTIN_AGENTS["general-purpose"])
    assert child.settings.env == RUN_ENV and child.settings.project_dir == str(tmp_path)
    grandchild = await _child(child, BUILTIN_AGENTS["general-purpose"])
    assert grandchild.settings.env == RUN_ENV


async def test_a_childs_aliases_and_kill_switch_come_from_the_runs_env(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_DEFAULT_HAIKU_MODEL", "service-haiku")
    monkeypatch.delenv("COVEY_DISABLE_OMIT_CLAUDE_MD", raising=False)
    explore = BUILTIN_AGENTS["Explore"]  # haiku, omitClaudeMd
    child = await _child(_parent(tmp_path, dict(RUN_ENV)), explore)
    assert child.model_id == "client-haiku"
    assert CONTEXT[0] in child.prelude  # the run's kill switch keeps the project's instructions


async def test_without_an_env_a_child_reads_this_process(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_DEFAULT_HAIKU_MODEL", "service-haiku")
    monkeypatch.delenv("COVEY_DISABLE_OMIT_CLAUDE_MD", raising=False)
    child = await _child(_parent(tmp_path, None), BUILTIN_AGENTS["Explore"])
    assert child.settings.env is None and child.model_id == "service-haiku"
    assert CONTEXT[0] not in child.prelude


async def test_a_child_inherits_its_parents_model_and_effort_unless_its_definition_says(tmp_path):
    parent = _parent(tmp_path, {}).model_copy(update={"model_id": "claude-opus-4-8", "effort": "max"})
    child = await _child(parent, BUILTIN_AGENTS["general-purpose"], effort=None)
    assert (child.model_id, child.effort) == ("claude-opus-4-8", "max")
    quick = AgentDefinition(name="quick", description="q", model="haiku", effort="low", source="project")
    child = await _child(parent, quick, effort=None)
    assert (child.model_id, child.effort) == ("claude-haiku-4-5", "low")
    child = await _child(parent, quick, effort="high", model="sonnet")
    assert (child.model_id, child.effort) == ("claude-sonnet-4-6", "high")
    forced = _parent(tmp_path, {"CLAUDE_CODE_SUBAGENT_MODEL": "claude-sonnet-4-5"})
    assert (await _child(forced, quick, effort=None)).model_id == "claude-sonnet-4-5"
