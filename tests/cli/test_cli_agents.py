from covey.cli.agents import list_agents_text
from covey.definitions.loader import load_definitions


def test_lists_types_with_source_model_tools_then_errors(tmp_path):
    agents = tmp_path / ".claude/agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text("---\nname: reviewer\ndescription: r\ntools: Read, Grep\nmodel: sonnet\n---\nbody\n")
    (agents / "bad.md").write_text("---\nname: bad\ndescription: b\nmaxTurns: lots\n---\nbody\n")
    text = list_agents_text(load_definitions(tmp_path, home=tmp_path / "home"))
    reviewer = next(line for line in text.splitlines() if line.strip().startswith("reviewer"))
    assert "project" in reviewer and "model: sonnet" in reviewer and "tools: Read, Grep" in reviewer
    assert any(line.strip().startswith("Explore") and "model: haiku" in line for line in text.splitlines())
    assert f"{agents / 'bad.md'}: maxTurns: " in text


def test_lists_definition_hooks_that_were_skipped(tmp_path):
    agents = tmp_path / ".claude/agents"
    agents.mkdir(parents=True)
    (agents / "guard.md").write_text("---\nname: guard\ndescription: g\nhooks:\n  FileChanged: [{command: x}]\n---\nbody\n")
    text = list_agents_text(load_definitions(tmp_path, home=tmp_path / "home"))
    assert "1 setting(s) skipped (hooks covey lacks, fields a plugin agent may not set):" in text
    assert f"{agents / 'guard.md'}: hooks.FileChanged: a Claude Code event covey never fires; skipped" in text
