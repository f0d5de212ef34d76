"""Issue 15's "done means", as a user meets it: a Claude Code project (agents in subfolders, an
unquoted ``description: Use when: …``, a skill folder whose frontmatter names it otherwise, a plugin
with an agent, a skill, a command and hooks, settings with Claude Code's newer hook events, a Stop
hook reading ``transcript_path``) through the ``covey`` command."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.cli.test_cli import covey
from tests.inprocess_covey import covey_here
from tests.trusting import trust

PROJECT = Path(__file__).parents[1] / "data" / "claude_files" / "project"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(PROJECT, copy)
    return copy


def _env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home")}


def test_covey_agents_lists_every_part_with_claude_codes_names_and_sources(project, tmp_path):
    trust(tmp_path / "home", project)  # the person's project: its skills' allowed-tools apply
    done = covey("agents", "--plugin-dir", "plugins/toolkit", cwd=project, env=_env(tmp_path), timeout=60,
                 managed=tmp_path / "managed")
    assert done.returncode == 0, done.stderr
    lines = {line.split()[0]: line for line in done.stdout.splitlines() if line.startswith("  ") and line.split()}
    agents = project / ".claude" / "agents"
    reviewer = f"project ({agents / 'review/code-reviewer.md'}) · model: haiku · tools: Read, Grep, Glob"
    assert reviewer in lines["code-reviewer"]  # its description's "Use when: …" repaired as Claude Code does
    assert f"project ({agents / 'review/deep/security-auditor.md'})" in lines["security-auditor"]
    assert "model: inherit" in lines["helper"]
    assert f"plugin ({project / 'plugins/toolkit/agents/linter.md'})" in lines["toolkit:linter"]
    assert "label: Agent Development · allowed-tools: Bash(ls:*) Read" in lines["agent-development"]
    assert "plugin skill" in lines["toolkit:lint-fix"] and "plugin command" in lines["toolkit:lint"]
    assert f"{agents / 'notes.md'}: name: skipped: no 'name'" in done.stdout and "notes" not in lines
    assert "definition error" not in done.stdout


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")  # covey -p in this process, on the shared Ray
def test_a_run_resolves_the_skill_and_agent_and_fires_the_hooks(project, tmp_path):
    # In this process the agents' actors have the test session's HOME (tests/conftest.py), so the
    # run keeps it too (no user settings there: its ~/.claude holds only other tests' sessions,
    # under projects/) rather than name another the actors would not see.
    user = Path.home() / ".claude"
    assert not any((user / name).exists() for name in ("settings.json", "agents", "skills", "commands"))
    done = covey_here("-p", "review my change", "--model", "scripted:rules.yaml", "--plugin-dir", "plugins/toolkit",
                      "--output-format", "stream-json", "--verbose", cwd=project, managed=tmp_path / "managed")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[-1]["result"] == "PARENT DONE: the reviewer found no problems"
    init = events[0]
    assert {"agent-development", "toolkit:lint-fix", "toolkit:lint"} <= set(init["skills"])
    assert {"code-reviewer", "security-auditor", "toolkit:linter"} <= set(init["agents"])
    log = (project / "hooks.log").read_text().splitlines()
    assert log == [
        "plugin-session-start",            # the plugin's SessionStart (its output reached the model: rules.yaml)
        "SubagentStart code-reviewer",     # settings' SubagentStart, with the agent's type
        "Stop last-assistant='PARENT DONE: the reviewer found no problems'",  # read from transcript_path
        "SessionEnd",
    ]
