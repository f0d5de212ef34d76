"""A corpus of Claude Code settings files (tests/data/claude_files/settings/) and a table of
calls with the decision Claude Code makes for each: covey must decide the same, and warn
about the same rules, naming the file and the rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from covey.permissions.policy import PermissionPolicy
from covey.session.setup import policy_from_settings
from covey.settings.merged import Settings

CORPUS = Path(__file__).parent.parent / "data" / "claude_files" / "settings"
TABLE = json.loads((CORPUS / "decisions.json").read_text())
READ_ONLY_TOOLS = {"Read", "Glob", "Grep"}


def _policy(project: str, mode: str, home: Path) -> PermissionPolicy:
    root = (CORPUS / project).resolve()
    settings = Settings.load(root, home=home)
    return policy_from_settings(settings, mode=mode, project_root=root, home=home)


@pytest.mark.parametrize("project, mode, tool, subject, expected, why", TABLE["cases"],
                         ids=[f"{c[0]}:{c[2]}:{c[3]}" for c in TABLE["cases"]])
def test_each_call_is_decided_as_claude_code_decides_it(tmp_path, project, mode, tool, subject, expected, why):
    home = tmp_path / "home"
    home.mkdir()
    if subject is not None:
        subject = subject.format(project=(CORPUS / project).resolve(), home=home)
    decision = _policy(project, mode, home).decide(tool, tool in READ_ONLY_TOOLS, subject, {})
    assert decision.behavior == expected, f"{why}: {decision.reason}"


@pytest.mark.parametrize("project", sorted(TABLE["warnings"]))
def test_each_file_warns_about_exactly_the_rules_claude_code_warns_about(tmp_path, project):
    settings = Settings.load((CORPUS / project).resolve(), home=tmp_path)
    got = [(Path(w.source).name, w.field, w.message) for w in settings.warnings]
    expected = TABLE["warnings"][project]
    assert [(name, field) for name, field, _ in got] == [(name, field) for name, field, _ in expected]
    for (_, _, message), (_, _, says) in zip(got, expected):
        assert says in message
