"""``--plugin-dir``: on a run (and through the service to its Session) and on ``covey agents``."""

from __future__ import annotations

import os
from pathlib import Path

from covey.cli import main as cli
from covey.service.session_options import session_for
from tests.trusting import trust

CORPUS = Path(__file__).parents[1] / "data" / "claude_files"
KIT = CORPUS / "plugins" / "review-kit"


def test_plugin_dir_is_repeatable_and_made_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = cli._parser().parse_args(["run", "-p", "x", "--plugin-dir", "a", "--plugin-dir", str(KIT)])
    assert cli._session_options(args)["plugin_dirs"] == [str(tmp_path / "a"), str(KIT)]


def test_a_served_runs_session_gets_the_plugin_dirs(tmp_path):
    request = {"cwd": str(tmp_path), "env": {"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
               "options": {"plugin_dirs": [str(KIT)], "model": "scripted:covey/cli/scenarios/ok.yaml"}}
    session = session_for(request, service=False)
    assert session.options.plugin_dirs == [str(KIT)] and "review-kit:ship" in session.skills


def test_covey_agents_shows_each_plugin_part_with_its_source(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = CORPUS / "skills" / "project"
    trust(tmp_path / "home", project)  # the person's project: its skills' allowed-tools apply
    assert cli.main(["agents", "--cwd", str(project), "--plugin-dir", str(KIT)]) == 0
    text = capsys.readouterr().out
    assert f"  review-kit 1.2.0  {KIT.resolve()} · from --plugin-dir" in text
    assert "    agents: review-kit:overreach, review-kit:security-reviewer, review-kit:style:linter" in text
    assert "    skills: review-kit:changelog-writer" in text and "    commands: review-kit:ship" in text
    assert "    hooks: PreToolUse, SessionStart" in text
    line = next(l for l in text.splitlines() if l.strip().startswith("agent-development"))
    assert "project skill" in line and "label: Agent Development" in line and "Bash(git add:*)" in line
    assert f"{KIT.resolve()}/agents/security-reviewer.md" in text
