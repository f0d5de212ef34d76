"""A definition's ``memory``: the folder of each scope, its MEMORY.md in the child's system prompt, the
file tools it gets, and the permission to use them there unasked (no Ray)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from covey.definitions.definition import AgentDefinition
from covey.definitions.loader import load_definitions
from covey.definitions.memory import MAX_INDEX_LINES, memory_dir, memory_prompt
from covey.permissions.decisions import Allow, Ask, Deny
from covey.permissions.policy import PermissionPolicy
from covey.permissions.rules import parse_rule
from covey.runtime.limits import Limits
from covey.runtime.ports import SessionRuntime
from covey.runtime.spec import AgentSpec, RunSettings
from covey.subagents.children import child_spec


@pytest.mark.parametrize("scope, env, expected", [
    ("user", {"HOME": "/h"}, "/h/.claude/agent-memory/reviewer"),
    ("user", {"HOME": "/h", "CLAUDE_CONFIG_DIR": "/cfg"}, "/cfg/agent-memory/reviewer"),
    ("project", {"HOME": "/h"}, "/proj/.claude/agent-memory/reviewer"),
    ("local", {"HOME": "/h"}, "/proj/.claude/agent-memory-local/reviewer"),
])
def test_each_scope_has_claude_codes_folder(scope, env, expected):
    assert memory_dir("reviewer", scope, project=Path("/proj"), env=env) == Path(expected)


def test_a_plugin_agents_name_is_one_safe_folder():
    assert memory_dir("kit:rev/../x", "project", project=Path("/p"), env={}).name == "kit-rev-..-x"
    assert memory_dir("..", "project", project=Path("/p"), env={}).name == "agent"


def test_the_prompt_holds_the_first_lines_of_memory_md_and_says_when_it_is_cut(tmp_path):
    assert "does not exist yet" in memory_prompt("r", "user", tmp_path)
    (tmp_path / "MEMORY.md").write_text("".join(f"note {i}\n" for i in range(MAX_INDEX_LINES + 5)))
    text = memory_prompt("r", "project", tmp_path)
    assert str(tmp_path) in text and "write nothing private" in text
    assert f"note {MAX_INDEX_LINES - 1}\n" in text and f"note {MAX_INDEX_LINES}\n" not in text
    assert "Only the start of MEMORY.md is shown" in text
    (tmp_path / "MEMORY.md").write_text("- tests run with `make check`\n")
    short = memory_prompt("r", "local", tmp_path)
    assert "- tests run with `make check`" in short and "Only the start" not in short


def _parent(tmp_path: Path) -> AgentSpec:
    runtime = SessionRuntime(session_id="s", registry=None, mailbox=None, limits=Limits.from_env({}),
                             project_context={str(tmp_path): []})
    policy = PermissionPolicy(mode="default", project_root=tmp_path, home=tmp_path / "home",
                              deny=[parse_rule("Edit(**/secret.md)", source="test", behavior="deny")])
    return AgentSpec(session_id="s", agent_id="a-main", definition=AgentDefinition(name="main"), prompt="go",
                     model_id="claude-sonnet-4-6", cwd=str(tmp_path), runtime=runtime, permissions=policy,
                     settings=RunSettings(project_dir=str(tmp_path), env={"HOME": str(tmp_path / "home")}))


async def _child(tmp_path: Path, **fields) -> AgentSpec:
    definition = AgentDefinition(name="rev", description="d", prompt="You review.", source="project", **fields)
    call = SimpleNamespace(model=None, cwd=None, prompt="p", mode=None, description="d")
    return await child_spec(_parent(tmp_path), definition, call, agent_id="a-c", tool_use_id="t", background=False,
                            available_tools=["Read", "Write", "Edit", "Grep", "Bash"])


async def test_a_child_with_memory_reads_its_index_in_its_system_prompt(tmp_path):
    folder = tmp_path / ".claude/agent-memory/rev"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("- the API lives in api/\n")
    system = (await _child(tmp_path, memory="project")).system[0]["text"]
    assert system.startswith("You review.") and "- the API lives in api/" in system and str(folder) in system
    plain = (await _child(tmp_path)).system[0]["text"]
    assert plain == "You review."


async def test_memory_brings_read_write_edit_unless_disallowed(tmp_path):
    assert (await _child(tmp_path, tools=["Grep"], memory="user")).tool_names == ["Read", "Write", "Edit", "Grep"]
    assert (await _child(tmp_path, tools=["Grep"])).tool_names == ["Grep"]
    denied = await _child(tmp_path, tools=["Grep"], memory="user", disallowed_tools=["Write"])
    assert denied.tool_names == ["Read", "Edit", "Grep"]


@pytest.mark.parametrize("scope, folder", [
    ("project", ".claude/agent-memory/rev"),  # under .claude: a protected path otherwise
    ("local", ".claude/agent-memory-local/rev"),
    ("user", "home/.claude/agent-memory/rev"),  # outside the project otherwise
])
async def test_the_childs_file_tools_use_its_memory_folder_unasked(tmp_path, scope, folder):
    policy = (await _child(tmp_path, memory=scope)).permissions
    note = str(tmp_path / folder / "MEMORY.md")
    for tool, read_only in (("Write", False), ("Edit", False), ("Read", True)):
        assert isinstance(policy.decide(tool, read_only, note), Allow)
    assert isinstance(policy.decide("Write", False, str(tmp_path / ".claude/settings.json")), Ask)
    assert isinstance(policy.decide("Write", False, str(tmp_path / folder / "secret.md")), Deny)  # deny rules win


async def test_without_memory_the_folder_is_asked_as_before(tmp_path):
    policy = (await _child(tmp_path)).permissions
    assert isinstance(policy.decide("Write", False, str(tmp_path / ".claude/agent-memory/rev/MEMORY.md")), Ask)
    grandchild = policy.for_child()  # a memory agent's child does not inherit its folder
    assert grandchild.memory_dirs == ()


def test_a_symlink_out_of_the_memory_folder_is_not_in_it(tmp_path):
    folder = tmp_path / "mem"
    folder.mkdir()
    (folder / "escape").symlink_to(tmp_path / "elsewhere")
    policy = PermissionPolicy(project_root=tmp_path / "proj", memory_dirs=[folder])
    assert isinstance(policy.decide("Write", False, str(folder / "escape" / "x")), Ask)
    assert isinstance(policy.decide("Write", False, str(folder / "x")), Allow)


def test_memory_is_read_from_files_and_flags_and_a_bad_scope_names_the_field(tmp_path):
    agents = tmp_path / "project/.claude/agents"
    agents.mkdir(parents=True)
    (agents / "a.md").write_text("---\nname: a\ndescription: d\nmemory: local\n---\nbody\n")
    (agents / "b.md").write_text("---\nname: b\ndescription: d\nmemory: forever\n---\nbody\n")
    result = load_definitions(tmp_path / "project", home=tmp_path / "home",
                              flag_agents={"c": {"description": "d", "prompt": "p", "memory": "user"}})
    assert result.definitions["a"].memory == "local" and result.definitions["c"].memory == "user"
    assert [(e.path.endswith("b.md"), e.field) for e in result.errors] == [(True, "memory")]
