import pytest

from covey.errors import UserError
from covey.hooks import HookMatcher, parse_hooks


def test_settings_shape_is_parsed():
    config = parse_hooks({
        "PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt", "timeout": 5}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "check"}]}],
    }, "settings")
    (group,) = config["PreToolUse"]
    assert group.matcher == "Edit|Write" and group.hooks[0].command == "fmt" and group.hooks[0].timeout_s == 5
    assert config["Stop"][0].matcher == "" and config["Stop"][0].hooks[0].timeout_s is None
    # Claude Code's defaults: 600 s, 30 s on UserPromptSubmit.
    assert config["Stop"][0].hooks[0].timeout_for("Stop") == 600
    assert config["Stop"][0].hooks[0].timeout_for("UserPromptSubmit") == 30


def test_short_frontmatter_shape_is_parsed():
    config = parse_hooks({"PreToolUse": [{"command": "echo hi"}, {"matcher": "Bash", "command": "x", "timeout": 3}]}, "a.md")
    first, second = config["PreToolUse"]
    assert first.matcher == "" and first.hooks[0].command == "echo hi"
    assert second.matcher == "Bash" and second.hooks[0].timeout_s == 3


@pytest.mark.parametrize("raw, field", [
    (["PreToolUse"], "hooks"),
    ({"PreToolUse": {"command": "x"}}, "hooks.PreToolUse"),
    ({"PreToolUse": ["echo hi"]}, "hooks.PreToolUse[0]"),
    ({"PreToolUse": [{"matcher": "Bash", "hooks": {"type": "command", "command": "x"}}]}, "hooks.PreToolUse[0].hooks"),
    ({"PreToolUse": [{"hooks": [{"type": "command"}]}]}, "hooks.PreToolUse[0].hooks[0].command"),
    ({"PreToolUse": [{"hooks": [{"type": "command", "command": "  "}]}]}, "hooks.PreToolUse[0].hooks[0].command"),
    ({"PreToolUse": [{"hooks": [{"type": "command", "command": 3}]}]}, "hooks.PreToolUse[0].hooks[0].command"),
    ({"PreToolUse": [{"hooks": ["echo hi"]}]}, "hooks.PreToolUse[0].hooks[0]"),
    ({"PreToolUse": [{"command": "x", "timeout": -1}]}, "hooks.PreToolUse[0].timeout"),
    ({"PreToolUse": [{"matcher": "Edit(", "command": "x"}]}, "hooks.PreToolUse[0].matcher"),
    ({"PreToolUse": [{"matcher": 3, "command": "x"}]}, "hooks.PreToolUse[0].matcher"),
    ({"Stop": [{"hooks": [{"type": 1, "command": "x"}]}]}, "hooks.Stop[0].hooks[0].type"),
])
def test_malformed_config_is_an_error_naming_the_source_and_field(raw, field):
    with pytest.raises(UserError) as info:
        parse_hooks(raw, "agents/rev.md")
    assert str(info.value).startswith("agents/rev.md: ") and f"{field!r}" in str(info.value)


@pytest.mark.parametrize("matcher, tool, expected", [
    ("Edit|Write", "Edit", True),
    ("Edit|Write", "Write", True),
    ("Edit|Write", "Read", False),
    ("Edit", "NotebookEdit", False),  # exact names: not a substring
    ("Edit.*", "NotebookEdit", True),  # a regular expression is unanchored, as in Claude Code
    ("^Edit$", "NotebookEdit", False),
    ("Edit, Write", "Write", True),  # a comma separates exact names too
    ("code-reviewer", "code-reviewer", True),
    ("*", "Bash", True),
    ("", "Bash", True),
    ("mcp__.*", "mcp__slack__post", True),
    ("mcp__.*", "Bash", False),
    ("Task", "Agent", True),
    ("Bash|Task", "Agent", True),
    ("Agent", "Agent", True),
    ("Bash", None, True),  # tool-less events ignore the matcher
])
def test_matcher(matcher, tool, expected):
    assert HookMatcher(matcher=matcher).matches(tool, tool=True) is expected
