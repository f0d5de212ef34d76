"""WorktreeCreate hooks make a child's worktree instead of git (no repository needed), and their
failure refuses the launch; WorktreeRemove hooks run when a worktree covey made goes away, as in
Claude Code. No Ray: a registry stand-in records what reached it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from covey.definitions.builtin import BUILTIN_AGENTS
from covey.definitions.definition import AgentDefinition
from covey.errors import CoveyError
from covey.hooks.runner import HookRegistry
from covey.runtime.limits import Limits
from covey.runtime.ports import SessionRuntime
from covey.runtime.spec import AgentSpec
from covey.runtime.worktree import create_worktree
from covey.runtime.worktree_hooks import finish_with_hooks
from covey.subagents.agent_tool import AgentTool
from covey.tools.base import ToolContext, ToolServices
from tests.hooks.scripts import exit_with, py_hook


class _Registry:
    def __init__(self) -> None:
        self.specs: list = []

    async def launch(self, request, spec, **kwargs):
        self.specs.append(spec)
        raise CoveyError("reached the registry")


def _record(tmp_path: Path, out: Path) -> str:
    return py_hook(tmp_path, f"rec-{out.stem}", f"open({str(out)!r}, 'a').write(json.dumps(json.load(sys.stdin)) + '\\n')\n")


def _maker(tmp_path: Path, out: Path, root: Path) -> str:
    """A WorktreeCreate hook: records its payload, makes ``root/<name>`` and prints its path."""
    return py_hook(tmp_path, "maker", (
        f"p = json.load(sys.stdin); open({str(out)!r}, 'a').write(json.dumps(p) + '\\n')\n"
        f"d = os.path.join({str(root)!r}, p['name']); os.makedirs(d); print('making it...'); print(d)\n"))


async def _call(tmp_path: Path, hooks: HookRegistry) -> tuple[object, _Registry]:
    registry = _Registry()
    runtime = SessionRuntime(session_id="s-wt", registry=registry, mailbox=None, definitions=dict(BUILTIN_AGENTS),
                             limits=Limits.from_env({}), project_context={str(tmp_path): []})
    parent = AgentSpec(session_id="s-wt", agent_id="a-main", definition=AgentDefinition(name="main", description="m"),
                       prompt="go", model_id="claude-sonnet-4-6", cwd=str(tmp_path), runtime=runtime, tool_names=["Agent"])
    tool = AgentTool()
    ctx = ToolContext(agent_id="a-main", cwd=tmp_path, services=ToolServices(runtime=runtime, spec=parent, hooks=hooks))
    call = tool.input_model(description="d", prompt="p", subagent_type="general-purpose", isolation="worktree")
    return await tool.run(call, ctx), registry


async def test_worktree_create_hooks_make_the_worktree_without_git_and_remove_hooks_clean_a_refused_launch(tmp_path):
    made, removed, root = tmp_path / "made.jsonl", tmp_path / "removed.jsonl", tmp_path / "trees"
    root.mkdir()
    hooks = HookRegistry({"WorktreeCreate": [{"hooks": [{"type": "command", "command": _maker(tmp_path, made, root)}]}],
                          "WorktreeRemove": [{"hooks": [{"type": "command", "command": _record(tmp_path, removed)}]}]},
                         project_dir=tmp_path, session_id="s-wt")
    result, registry = await _call(tmp_path, hooks)  # tmp_path is no git repository: the hook needs none
    [payload] = [json.loads(line) for line in made.read_text().splitlines()]
    assert payload["hook_event_name"] == "WorktreeCreate" and payload["name"].startswith("agent-")
    [spec] = registry.specs
    assert spec.cwd == str((root / payload["name"]).resolve()) and spec.worktree.hook
    assert result.content == "reached the registry"  # the stand-in refused it, so the worktree goes again:
    [gone] = [json.loads(line) for line in removed.read_text().splitlines()]
    assert (gone["hook_event_name"], gone["worktree_path"]) == ("WorktreeRemove", spec.worktree.path)


async def test_a_failing_worktree_create_hook_refuses_the_launch(tmp_path):
    hooks = HookRegistry({"WorktreeCreate": [{"hooks": [{"type": "command", "command": exit_with(tmp_path, "no", 1, "no disk")}]}]},
                         project_dir=tmp_path, session_id="s-wt")
    result, registry = await _call(tmp_path, hooks)
    assert result.is_error and "WorktreeCreate hook failed" in result.content and "no disk" in result.content
    assert registry.specs == []  # refused before the registry heard of it


async def test_worktree_remove_hooks_run_when_an_unchanged_git_worktree_is_removed(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    removed = tmp_path / "removed.jsonl"
    hooks = HookRegistry({"WorktreeRemove": [{"hooks": [{"type": "command", "command": _record(tmp_path, removed)}]}]},
                         project_dir=repo, session_id="s-wt")
    worktree = await create_worktree(str(repo), "agent-abc")
    assert await finish_with_hooks(worktree, hooks, "agent-abc") is None  # removed: nothing kept
    [payload] = [json.loads(line) for line in removed.read_text().splitlines()]
    assert payload["worktree_path"] == worktree.path and not Path(worktree.path).exists()


async def test_a_hook_made_worktree_is_kept_at_its_agents_end_and_fires_no_remove_hook(tmp_path):
    from covey.runtime.worktree import Worktree, resume_place_problem
    from types import SimpleNamespace

    removed, place = tmp_path / "removed.jsonl", tmp_path / "tree"
    place.mkdir()
    hooks = HookRegistry({"WorktreeRemove": [{"hooks": [{"type": "command", "command": _record(tmp_path, removed)}]}]},
                         project_dir=tmp_path, session_id="s-wt")
    worktree = Worktree(path=str(place), branch="", original_head="", repo_root="", cwd=str(place), hook=True)
    kept = await finish_with_hooks(worktree, hooks, "agent-abc")
    assert kept == {"kept": True, "path": str(place), "branch": ""} and place.is_dir() and not removed.exists()
    assert resume_place_problem(SimpleNamespace(worktree=worktree, cwd=str(place))) is None  # no git to verify
