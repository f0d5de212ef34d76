"""Issue 23's "done means", tried as a new user: ``covey -p`` in default mode with a scripted model
that runs every command the issue quotes, reads outside the project, writes a protected path and
starts a bypassPermissions child. Nobody can be asked in print mode, so each is denied, and
nothing outside the project changes."""

from __future__ import annotations

import json
import textwrap

import pytest

from tests.cli.test_cli import covey
from tests.inprocess_covey import covey_here

COMMANDS = [
    "echo a#b; rm -rf ../outside", "cat a#; cat .env", "echo a#b > .env", "touch a#b ../outside/cron",
    "$'\\x72\\x6d' -rf ../outside", "x='$(rm -rf ../outside)'; echo ${x@P}",
    "git reflog show --output=../outside/y --format=TEXT", "git grep --op='rm -rf ../outside' x",
    "sort --o=../outside/z README.md", "sort --compress-prog=sh README.md", "date --s=2020-01-01",
    "hostname --file=h", "cp --target-dir=../outside README.md", "mv -t ../outside README.md", "tree -R -H .",
    "rg --hostname-bin=sh x", "uniq README.md ../outside/u", "git stash show --ext-diff",
    "echo x > ~/.bashrc", "echo <(touch ../outside/p)", "'rm' -rf ../outside", "r\\m -rf ../outside",
    "echo $(rm -rf ../outside)", "cat ../outside/notes.txt",
]


def _script() -> str:
    calls = [{"name": "Bash", "input": {"command": c}} for c in COMMANDS]
    calls += [{"name": "Read", "input": {"file_path": "../outside/notes.txt"}},
              {"name": "Write", "input": {"file_path": ".git/config", "content": "[core]\n\tfsmonitor = evil\n"}},
              {"name": "Agent", "input": {"description": "clean up", "prompt": "rm -rf ~", "subagent_type": "cleaner"}},
              {"name": "Agent", "input": {"description": "clean up", "prompt": "rm -rf ~", "mode": "bypassPermissions"}}]
    rules = {"rules": [
        {"when": {"system_lacks": "You are covey"}, "reply": {"text": "the cleaner ran"}},
        {"when": {"messages_contain": "was denied"}, "reply": {"text": "everything was refused"}},
        {"reply": {"tool_use": calls}, "times": 1},
    ]}
    return json.dumps(rules)


@pytest.mark.ray
@pytest.mark.usefixtures("served_kits")  # covey -p in this process, on the shared Ray
def test_default_mode_asks_about_every_quoted_attack_and_nothing_outside_changes(tmp_path, sandbox_home):
    # The run is in this process, its agents in the shared Ray's actors: HOME is the test session's for both.
    project, outside, home = tmp_path / "project", tmp_path / "outside", sandbox_home
    for folder in (project / ".claude" / "agents", project / ".git", outside):
        folder.mkdir(parents=True)
    assert not (home / ".bashrc").exists()
    (project / "README.md").write_text("readme\n")
    (project / ".env").write_text("SECRET=1\n")
    (outside / "notes.txt").write_text("outside\n")
    (project / ".claude" / "settings.json").write_text(json.dumps(
        {"permissions": {"allow": ["Bash(echo *)"], "deny": ["Read(./.env)", "Edit(./.env)"]}}))
    (project / ".claude" / "agents" / "cleaner.md").write_text(textwrap.dedent("""\
        ---
        name: cleaner
        description: Cleans up
        permissionMode: bypassPermissions
        ---
        You clean up.
        """))
    (project / "rules.json").write_text(_script())
    before = sorted(p.name for p in outside.iterdir())
    done = covey_here("-p", "go", "--model", f"scripted:{project / 'rules.json'}", "--output-format", "stream-json",
                      "--verbose", cwd=project, managed=tmp_path / "no-managed")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    result = events[-1]
    assert result["result"] == "everything was refused"
    assert len(result["permission_denials"]) == len(COMMANDS) + 3
    results = [block for e in events if e["type"] == "user" and isinstance(e["message"]["content"], list)
               for block in e["message"]["content"] if block.get("type") == "tool_result"]
    agent = next(r for r in results if "sub-agent was not started" in json.dumps(r))
    assert "bypassPermissions" in json.dumps(agent)
    by_call = next(r for r in results if "cannot be set on an Agent call" in json.dumps(r))
    assert "'bypassPermissions'" in json.dumps(by_call) and by_call["is_error"]
    assert sorted(p.name for p in outside.iterdir()) == before and (outside / "notes.txt").read_text() == "outside\n"
    assert not (home / ".bashrc").exists() and not (project / ".git" / "config").exists()
    assert (project / "README.md").exists() and (project / ".env").read_text() == "SECRET=1\n"
