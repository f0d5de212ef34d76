"""Issue 39 item 6: a hostile plugin (manifest, hooks file, registry) is one problem line naming
the file and the field; the plugin's other parts, and the other plugins, still load."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from covey.plugins.scan import load_plugins
from tests.hostile_files import huge, special_files

MANIFEST_BAD = {
    "truncated": ('{"name": "bad"', None, "not valid JSON"),
    "top-level-list": ('["bad"]', None, "must hold a JSON object, not list"),
    "deep": ('{"name": "bad", "x": ' + "[" * 50_000 + "]" * 50_000 + "}", None, "nests"),
    "name-int": ('{"name": 5}', "name", "valid string"),
    "name-empty": ('{"name": ""}', "name", "at least 1 character"),
    "agents-int": ('{"name": "bad", "agents": 5}', "agents", "valid string"),
    "hooks-int": ('{"name": "bad", "hooks": 5}', "hooks", "valid string"),
    "nul-byte": ('{"name": "b\x00ad"}', None, "Invalid control character"),
}


def _plugin(root: Path, name: str, manifest: str | None = None) -> Path:
    folder = root / name
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / "agents").mkdir()
    (folder / "agents" / "helper.md").write_text("---\nname: helper\ndescription: helps\n---\nHelp.\n")
    if manifest is not None:
        (folder / ".claude-plugin" / "plugin.json").write_text(manifest)
    return folder


def _scan(tmp_path: Path, *folders: Path):
    (tmp_path / "project").mkdir(exist_ok=True)
    return load_plugins(tmp_path / "project", plugin_dirs=folders, home=tmp_path / "home", env={})


def _one_line(problems: list, path: Path, words: str, field: str | None = None) -> None:
    mine = [str(problem) for problem in problems if problem.path == str(path)]
    assert len(mine) == 1 and "\n" not in mine[0] and words in mine[0], mine
    if field is not None:
        assert f"field {field!r}" in mine[0], mine[0]


@pytest.mark.parametrize("name", sorted(MANIFEST_BAD))
def test_a_hostile_manifest_skips_its_plugin_in_one_line_and_the_others_load(tmp_path, name):
    text, field, words = MANIFEST_BAD[name]
    bad, good = _plugin(tmp_path, "bad", text), _plugin(tmp_path, "good", '{"name": "good"}')
    scan = _scan(tmp_path, bad, good)
    assert list(scan.plugins) == ["good"]
    _one_line(scan.problems, bad / ".claude-plugin" / "plugin.json", words, field)



SPECIAL = special_files("too large: over 4,194,304 bytes", b'{"name": "\xff"}')


@pytest.mark.parametrize("name", sorted(SPECIAL))
def test_a_special_or_huge_manifest_is_refused_unread(tmp_path, name):
    make, words = SPECIAL[name]
    bad, good = _plugin(tmp_path, "bad"), _plugin(tmp_path, "good")
    make(bad / ".claude-plugin" / "plugin.json")
    scan = _scan(tmp_path, bad, good)
    assert list(scan.plugins) == ["good"]
    _one_line(scan.problems, bad / ".claude-plugin" / "plugin.json", words)


HOOKS_BAD = {
    "truncated": ('{"hooks": {', "not valid JSON"),
    "deep": ('{"hooks": ' + "{\"a\": " * 300 + "1" + "}" * 300 + "}", "more than 200 levels"),
    "event-int": ('{"hooks": {"PreToolUse": 5}}', "PreToolUse"),
}
HOOKS_SPECIAL = {"fifo": (os.mkfifo, "FIFO"), "huge-200mb": (huge, "too large"),
                 "symlink-dev-zero": (lambda path: path.symlink_to("/dev/zero"), "character device")}


@pytest.mark.parametrize("name", sorted(HOOKS_BAD) + sorted(HOOKS_SPECIAL))
def test_a_hostile_hooks_file_drops_those_hooks_in_one_line_and_the_plugin_loads(tmp_path, name):
    plugin = _plugin(tmp_path, "kit", '{"name": "kit"}')
    path = plugin / "hooks" / "hooks.json"
    path.parent.mkdir()
    if name in HOOKS_BAD:
        path.write_text(HOOKS_BAD[name][0])
    else:
        HOOKS_SPECIAL[name][0](path)
    scan = _scan(tmp_path, plugin)
    assert scan.plugins["kit"].hooks == {} and scan.plugins["kit"].agent_paths
    _one_line(scan.problems, path, HOOKS_BAD[name][1] if name in HOOKS_BAD else HOOKS_SPECIAL[name][1])


@pytest.mark.parametrize("make", [os.mkfifo, lambda path: path.symlink_to("/dev/zero"),
                                  lambda path: path.write_text("[" * 100_000)], ids=["fifo", "dev-zero", "deep"])
def test_a_hostile_installed_plugins_registry_never_hangs_and_says_the_plugin_is_not_installed(tmp_path, make):
    registry = tmp_path / "home" / ".claude" / "plugins" / "installed_plugins.json"
    registry.parent.mkdir(parents=True)
    make(registry)
    (tmp_path / "project").mkdir()
    scan = load_plugins(tmp_path / "project", enabled={"kit@market": "settings.json"}, home=tmp_path / "home", env={})
    assert scan.plugins == {} and len(scan.problems) == 1 and "'kit@market' is enabled but not installed" in str(
        scan.problems[0])


def test_a_plugins_hostile_agent_files_are_one_line_each_and_its_other_agents_load(tmp_path):
    from covey.definitions.loader import load_definitions
    from tests.common.test_safe_yaml import BOMB

    plugin = _plugin(tmp_path, "kit", '{"name": "kit"}')
    agents = plugin / "agents"
    (agents / "bomb.md").write_text(f"---\ndescription: d\n{BOMB}---\nb\n")
    os.mkfifo(agents / "pipe.md")
    (agents / "zero.md").symlink_to("/dev/zero")
    (tmp_path / "project").mkdir()
    result = load_definitions(tmp_path / "project", home=tmp_path / "home", plugin_dirs=[plugin])
    assert "kit:helper" in result.definitions
    assert sorted(error.path for error in result.errors) == [str(agents / n) for n in ("bomb.md", "pipe.md", "zero.md")]
    assert all("\n" not in str(error) for error in result.errors)
