"""Protected names compare without case where the file system does; .claude's commands, agents and
skills are writable as Claude Code allows; a worktree child edits only its worktree (issue 39 item 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from covey.permissions import paths
from covey.permissions.paths import case_insensitive, protected_part
from tests.security._policies import bash, policy, project

ROOT = Path("/proj")
FOLDED = [".GIT/config", ".Git/hooks/pre-commit", ".Claude/settings.json", ".MCP.json", ".Covey/settings.json",
          ".BASHRC", ".VSCode/settings.json", ".gitConfig", ".Claude.json", ".SSH/id_rsa"]


@pytest.mark.parametrize("name", FOLDED)
def test_a_differently_cased_protected_name_is_protected_on_a_case_insensitive_fs(name):
    assert protected_part(ROOT / name, [ROOT], insensitive=True) is not None
    assert protected_part(ROOT / name, [ROOT], insensitive=False) is None


@pytest.mark.parametrize("name", FOLDED)
def test_the_policy_asks_for_them_in_bypass_mode_when_the_fs_folds_case(tmp_path, monkeypatch, name):
    root, home = project(tmp_path)
    monkeypatch.setattr(paths, "case_insensitive", lambda directory: True)
    assert policy(root, home, "bypassPermissions").decide("Write", False, str(root / name), {}).behavior == "ask"
    assert bash(policy(root, home, "bypassPermissions"), f"echo x > {name}") == "ask"


def test_linux_here_is_case_sensitive_and_says_so(tmp_path):
    root, home = project(tmp_path)
    case_insensitive.cache_clear()
    assert case_insensitive(root) is False
    assert policy(root, home, "bypassPermissions").decide("Write", False, str(root / ".GIT" / "config"), {}).behavior == "allow"
    assert policy(root, home, "bypassPermissions").decide("Write", False, str(root / ".git" / "config"), {}).behavior == "ask"


@pytest.mark.parametrize("name", [".claude/agents/x.md", ".claude/commands/deploy.md", ".claude/skills/s/SKILL.md"])
def test_claude_commands_agents_and_skills_are_writable_in_bypass_mode(tmp_path, name):
    root, home = project(tmp_path)
    assert policy(root, home, "bypassPermissions").decide("Write", False, str(root / name), {}).behavior == "allow"
    assert policy(root, home, "acceptEdits").decide("Write", False, str(root / name), {}).behavior == "allow"


@pytest.mark.parametrize("name", [".claude/settings.json", ".claude/settings.local.json", ".claude/agents",
                                  ".claude/hooks/x.sh", ".git/agents/x.md", ".claude/x/agents/y.md"])
def test_the_rest_of_claude_stays_protected(tmp_path, name):
    root, home = project(tmp_path)
    assert policy(root, home, "bypassPermissions").decide("Write", False, str(root / name), {}).behavior == "ask"


@pytest.mark.parametrize("tool,target", [("Edit", "proj/src/app.py"), ("Write", "proj/new.py"),
                                         ("Bash", "touch ../proj/x"), ("Write", "../proj/y")])
def test_a_worktree_child_in_accept_edits_does_not_write_the_main_checkout(tmp_path, tool, target):
    root, home = project(tmp_path)
    worktree = tmp_path / "wt"
    worktree.mkdir()
    child = policy(root, home, "acceptEdits").for_child(cwd=worktree, project_root=worktree)
    subject = target if tool == "Bash" or target.startswith("..") else str(tmp_path / target)
    assert child.decide(tool, False, subject, {}).behavior == "ask"
    assert child.decide("Write", False, str(worktree / "a.py"), {}).behavior == "allow"


DENIED_SPELLINGS = [(".env", ".ENV"), (".env", ".Env"), ("secrets/**", "SECRETS/key"), ("secrets/**", "a/Secrets/key"),
                    ("./config/prod.yaml", "CONFIG/PROD.yaml"), ("**/*.pem", "certs/SERVER.PEM")]


@pytest.mark.parametrize("rule, spelled", DENIED_SPELLINGS)
@pytest.mark.parametrize("tool", ["Read", "Edit"])
def test_a_deny_rule_covers_every_spelling_where_the_fs_folds_case(tmp_path, monkeypatch, rule, spelled, tool):
    from covey.permissions import rules

    root, home = project(tmp_path)
    monkeypatch.setattr(rules, "case_insensitive", lambda directory: True)
    name = "Write" if tool == "Edit" else "Read"
    decided = policy(root, home, "bypassPermissions", deny=[f"{tool}({rule})"]).decide(name, name == "Read",
                                                                                           str(root / spelled), {})
    assert decided.behavior == "deny"


@pytest.mark.parametrize("rule, spelled", DENIED_SPELLINGS)
def test_on_a_case_sensitive_fs_another_spelling_is_another_file(tmp_path, monkeypatch, rule, spelled):
    from covey.permissions import rules

    root, home = project(tmp_path)
    monkeypatch.setattr(rules, "case_insensitive", lambda directory: False)
    decided = policy(root, home, "default", deny=[f"Read({rule})"]).decide("Read", True, str(root / spelled), {})
    assert decided.behavior == "allow"


def test_an_allow_rule_keeps_its_case_so_it_never_allows_more_than_written(tmp_path, monkeypatch):
    from covey.permissions import rules

    root, home = project(tmp_path)
    monkeypatch.setattr(rules, "case_insensitive", lambda directory: True)
    allowing = policy(root, home, "default", allow=["Edit(src/**)"])
    assert allowing.decide("Write", False, str(root / "src" / "a.py"), {}).behavior == "allow"
    assert allowing.decide("Write", False, str(root / "SRC" / "a.py"), {}).behavior == "ask"
