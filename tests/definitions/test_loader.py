import json

from covey.definitions.definition import AgentDefinition
from covey.definitions.loader import DefinitionError, load_definitions


def write(path, text):
    """Write a definition file; one without ``name`` gets its file's stem, since Claude Code
    (and so covey) skips an agent file whose frontmatter has no ``name``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if text.startswith("---\n") and "\nname:" not in text.split("\n---", 1)[0]:
        text = f"---\nname: {path.stem}\n{text[4:]}"
    path.write_text(text)
    return path


def agent_md(description, body="You review code.", **fields):
    extra = "".join(f"{key}: {value}\n" for key, value in fields.items())
    return f"---\ndescription: {description}\n{extra}---\n{body}\n"


def load(tmp_path, **kwargs):
    home = tmp_path / "home"
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    return load_definitions(project, home=home, **kwargs)


def test_builtins_only_when_nothing_configured(tmp_path):
    result = load(tmp_path)
    assert "Explore" in result.definitions and result.errors == []
    assert all(d.source == "built-in" for d in result.definitions.values())


def test_project_file_is_loaded_exactly(tmp_path):
    path = write(
        tmp_path / "project/.claude/agents/reviewer.md",
        "---\ndescription: Reviews diffs\ntools: [Read, Grep]\nmodel: sonnet\n---\nYou review code carefully.\n",
    )
    reviewer = load(tmp_path).definitions["reviewer"]
    assert reviewer.name == "reviewer" and reviewer.description == "Reviews diffs"
    assert reviewer.tools == ["Read", "Grep"] and reviewer.model == "sonnet"
    assert reviewer.prompt == "You review code carefully."
    assert reviewer.source == "project" and reviewer.path == str(path)


def test_bad_file_is_reported_and_the_rest_load(tmp_path):
    agents = tmp_path / "project/.covey/agents"
    write(agents / "good.md", agent_md("fine"))
    bad = write(agents / "bad.md", agent_md("broken", maxTurns="lots"))
    broken_yaml = write(agents / "yaml.md", '---\ndescription: "never closed\n---\nbody\n')
    result = load(tmp_path)
    assert "good" in result.definitions
    assert "bad" not in result.definitions and "yaml" not in result.definitions
    fields = {(e.path, e.field) for e in result.errors}
    assert (str(bad), "maxTurns") in fields
    assert (str(broken_yaml), "frontmatter") in fields


def test_file_without_frontmatter_is_skipped_with_the_reason(tmp_path):
    # Claude Code reads a file without frontmatter as notes kept beside the agents, not an agent.
    path = write(tmp_path / "project/.claude/agents/notes.md", "just text\n")
    result = load(tmp_path)
    assert result.errors == [] and "notes" not in result.definitions
    assert [(s.path, s.field) for s in result.skipped] == [(str(path), None)]
    assert "no frontmatter block" in result.skipped[0].message


def test_comma_separated_tools_and_name_override(tmp_path):
    write(
        tmp_path / "project/.claude/agents/file.md",
        agent_md("x", name="pr-reviewer", tools="Read, Grep,Bash", disallowedTools="Write"),
    )
    definition = load(tmp_path).definitions["pr-reviewer"]
    assert definition.tools == ["Read", "Grep", "Bash"] and definition.disallowed_tools == ["Write"]


def test_unknown_keys_are_ignored_and_source_cannot_be_claimed(tmp_path):
    write(tmp_path / "project/.claude/agents/a.md", agent_md("x", frobnicate="yes", source="policy"))
    result = load(tmp_path)
    assert result.errors == [] and result.definitions["a"].source == "project"


def test_precedence_user_project_flag_policy(tmp_path):
    write(tmp_path / "home/.claude/agents/reviewer.md", agent_md("user"))
    write(tmp_path / "home/.covey/agents/helper.md", agent_md("user helper"))
    write(tmp_path / "project/.claude/agents/reviewer.md", agent_md("project"))
    write(tmp_path / "project/.covey/agents/Explore.md", agent_md("my explore"))
    assert load(tmp_path).definitions["reviewer"].description == "project"
    assert load(tmp_path).definitions["helper"].source == "user"
    assert load(tmp_path).definitions["Explore"].source == "project"

    flags = json.dumps({"reviewer": {"description": "flag", "prompt": "p", "tools": ["Read"], "model": "sonnet"}})
    flagged = load(tmp_path, flag_agents=flags).definitions["reviewer"]
    assert (flagged.description, flagged.source, flagged.tools, flagged.path) == ("flag", "flag", ["Read"], None)

    write(tmp_path / "policy/reviewer.md", agent_md("policy"))
    result = load(tmp_path, flag_agents=flags, policy_dir=tmp_path / "policy")
    assert result.definitions["reviewer"].source == "policy"


def test_plugin_is_below_user(tmp_path):
    write(tmp_path / "plugin/agents/linter.md", agent_md("plugin"))
    assert load(tmp_path, plugin_dirs=[tmp_path / "plugin"]).definitions["plugin:linter"].source == "plugin"
    write(tmp_path / "home/.covey/agents/linter.md", "---\nname: plugin:linter\ndescription: user\n---\nb\n")
    assert load(tmp_path, plugin_dirs=[tmp_path / "plugin"]).definitions["plugin:linter"].source == "user"


def test_api_definitions_and_flag_errors(tmp_path):
    extra = [AgentDefinition(name="api", description="from python")]
    result = load(tmp_path, extra=extra, flag_agents={"bad": {"maxTurns": 0}, "ok": {"description": "d"}})
    assert result.definitions["api"].source == "flag" and result.definitions["ok"].source == "flag"
    assert [(e.path, e.field) for e in result.errors] == [("--agents bad", "maxTurns")]
    assert load(tmp_path, flag_agents="{not json").errors[0].path == "--agents"
    assert load(tmp_path, flag_agents=[{"name": "l", "description": "d"}]).definitions["l"].source == "flag"


def test_strict_plugin_only_strips_hooks_and_mcp_from_user_and_project(tmp_path):
    hooks_md = "---\ndescription: x\nhooks:\n  PreToolUse:\n    - command: echo hi\nmcpServers: [slack]\n---\nbody\n"
    write(tmp_path / "project/.claude/agents/proj.md", hooks_md)
    write(tmp_path / "home/.claude/agents/usr.md", hooks_md)
    write(tmp_path / "policy/pol.md", hooks_md)
    loose = load(tmp_path).definitions
    assert loose["proj"].hooks and loose["proj"].mcp_servers == ["slack"]
    strict = load(tmp_path, policy_dir=tmp_path / "policy", strict_plugin_only=["hooks", "mcp"]).definitions
    for name in ("proj", "usr"):
        assert strict[name].hooks == {} and strict[name].mcp_servers == [] and strict[name].prompt == "body"
    assert strict["pol"].hooks and strict["pol"].mcp_servers == ["slack"]
    only_hooks = load(tmp_path, strict_plugin_only=["hooks"]).definitions["proj"]
    assert only_hooks.hooks == {} and only_hooks.mcp_servers == ["slack"]


def test_strict_plugin_only_locking_agents_skips_user_and_project_agents(tmp_path):
    write(tmp_path / "project/.claude/agents/proj.md", agent_md("project"))
    write(tmp_path / "home/.claude/agents/usr.md", agent_md("user"))
    write(tmp_path / "policy/pol.md", agent_md("policy"))
    for locked in (["agents"], True):
        definitions = load(tmp_path, policy_dir=tmp_path / "policy", strict_plugin_only=locked).definitions
        assert "proj" not in definitions and "usr" not in definitions and definitions["pol"].source == "policy"


def test_only_cwd_not_parents(tmp_path):
    write(tmp_path / ".claude/agents/parent.md", agent_md("parent"))
    project = tmp_path / "project"
    project.mkdir()
    assert "parent" not in load_definitions(project, home=tmp_path / "home").definitions


def test_coordinator_mode_builtins(tmp_path):
    assert set(load(tmp_path, coordinator=True).definitions) == {"worker"}


def test_definition_hooks_covey_lacks_are_skipped_with_a_warning(tmp_path):
    path = write(tmp_path / "project/.claude/agents/guard.md", (
        "---\ndescription: d\nhooks:\n  FileChanged: [{command: hello}]\n"
        "  PreToolUse: [{matcher: Bash, command: check, colour: red}]\n---\nbody\n"
    ))
    result = load(tmp_path)
    assert [str(w) for w in result.warnings] == [
        f"{path}: hooks.FileChanged: a Claude Code event covey never fires; skipped",
        f"{path}: hooks.PreToolUse[0].colour: field not supported by covey; skipped (the hook runs without it)",
    ]
    assert result.definitions["guard"].hooks == {"PreToolUse": [{"matcher": "Bash", "command": "check"}]}


def test_a_malformed_definition_hook_is_an_error_naming_file_and_field(tmp_path):
    write(tmp_path / "project/.claude/agents/good.md", agent_md("fine"))
    bad = write(tmp_path / "project/.claude/agents/bad.md", "---\ndescription: d\nhooks:\n  Stop: [{matcher: '(', command: x}]\n---\nb\n")
    result = load(tmp_path)
    assert "good" in result.definitions and "bad" not in result.definitions
    assert [(e.path, e.field) for e in result.errors] == [(str(bad), "hooks.Stop[0].matcher")]


def test_flag_and_api_definitions_hooks_are_checked_too(tmp_path):
    flags = {"f": {"description": "d", "prompt": "p", "hooks": {"PreToolUse": [{"command": ""}]}}}
    api = AgentDefinition(name="api", hooks={"FileChanged": [{"command": "x"}]})
    result = load(tmp_path, flag_agents=flags, extra=[api])
    assert [(e.path, e.field) for e in result.errors] == [("--agents f", "hooks.PreToolUse[0].command")]
    assert [str(w) for w in result.warnings] == ["agent 'api': hooks.FileChanged: a Claude Code event covey never fires; skipped"]
    assert result.definitions["api"].hooks == {}


def test_an_alias_bomb_in_an_agent_file_is_an_error_naming_the_file(tmp_path):
    from tests.common.test_safe_yaml import BOMB

    path = write(tmp_path / "project/.claude/agents/bomb.md", f"---\ndescription: d\n{BOMB}---\nbody\n")
    result = load(tmp_path)
    assert "bomb" not in result.definitions
    (error,) = result.errors
    assert error.path == str(path) and error.field == "frontmatter" and "aliases" in error.message


def test_a_definition_file_over_1_mib_is_refused_unread(tmp_path):
    path = write(tmp_path / "project/.claude/agents/huge.md", agent_md("d", body="x" * (1024 * 1024 + 1)))
    result = load(tmp_path)
    assert "huge" not in result.definitions
    assert [str(e) for e in result.errors] == [
        f"{path}: too large: over 1,048,576 bytes (1 MiB), the most a definition file may be; not read"]


def test_an_over_long_description_is_an_error_naming_file_and_field(tmp_path):
    from covey.common.frontmatter import MAX_DESCRIPTION_CHARS

    path = write(tmp_path / "project/.claude/agents/wordy.md", agent_md("w" * (MAX_DESCRIPTION_CHARS + 1)))
    result = load(tmp_path)
    assert "wordy" not in result.definitions
    (error,) = result.errors
    assert (error.path, error.field) == (str(path), "description") and "20000" in error.message


def test_a_fifo_among_the_agent_files_does_not_hang_the_load(tmp_path):
    import os

    folder = tmp_path / "project/.claude/agents"
    write(folder / "ok.md", agent_md("fine"))
    os.mkfifo(folder / "pipe.md")
    assert "ok" in load(tmp_path).definitions  # returns at all: the FIFO is never opened for reading
