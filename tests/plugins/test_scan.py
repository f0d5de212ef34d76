"""Which plugins a session loads: --plugin-dir folders and enabledPlugins resolved to their installation."""

import json
import shutil
from pathlib import Path

from covey.plugins import load_plugins

CORPUS = Path(__file__).parents[1] / "data" / "claude_files" / "plugins"


def _install(home: Path, plugin_id: str, entries: list[dict] | dict) -> None:
    registry = home / ".claude" / "plugins" / "installed_plugins.json"
    registry.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(registry.read_text()) if registry.exists() else {"version": 2, "plugins": {}}
    data["plugins"][plugin_id] = entries
    registry.write_text(json.dumps(data))


def _copy(name: str, where: Path) -> Path:
    shutil.copytree(CORPUS / name, where)
    return where


def test_an_enabled_plugin_is_read_from_where_installed_plugins_json_puts_it(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    root = _copy("review-kit", home / ".claude/plugins/cache/tools/review-kit/1.2.0")
    _install(home, "review-kit@tools", [{"scope": "user", "installPath": str(root), "version": "1.2.0",
                                          "lastUpdated": "2026-11-01T00:00:00Z"}])
    scan = load_plugins(project, enabled={"review-kit@tools": "settings.json"}, home=home, env={})
    plugin = scan.plugins["review-kit"]
    assert plugin.root == root.resolve() and plugin.origin == "enabledPlugins 'review-kit@tools' (settings.json)"
    assert scan.problems == []


def test_this_projects_installation_wins_over_a_user_wide_one_and_version_1_registries_work(tmp_path):
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    wide = _copy("review-kit", tmp_path / "wide")
    here = _copy("review-kit", tmp_path / "here")
    other = _copy("review-kit", tmp_path / "other")
    _install(home, "review-kit@tools", [
        {"scope": "user", "installPath": str(wide), "lastUpdated": "2026-12-01"},
        {"scope": "project", "projectPath": str(project), "installPath": str(here), "lastUpdated": "2026-01-01"},
        {"scope": "local", "projectPath": str(tmp_path / "elsewhere"), "installPath": str(other)},
    ])
    assert load_plugins(project, enabled={"review-kit@tools": "s"}, home=home).plugins["review-kit"].root == here
    _install(home, "bare-helper@tools", {"scope": "user", "installPath": str(_copy("bare-helper", tmp_path / "b"))})
    assert "bare-helper" in load_plugins(project, enabled={"bare-helper@tools": "s"}, home=home).plugins


def test_claude_config_dir_moves_the_registry_and_the_cache_is_a_fallback(tmp_path):
    config = tmp_path / "config"
    _copy("review-kit", config / "plugins/cache/tools/review-kit/1.2.0")
    scan = load_plugins(tmp_path, enabled={"review-kit@tools": "s"}, home=tmp_path / "home",
                        env={"CLAUDE_CONFIG_DIR": str(config)})
    assert "review-kit" in scan.plugins


def test_an_enabled_plugin_that_is_not_installed_is_a_clear_warning(tmp_path):
    scan = load_plugins(tmp_path, enabled={"ghost@tools": "/p/.claude/settings.json"}, home=tmp_path / "home")
    [problem] = scan.problems
    assert problem.path == "/p/.claude/settings.json"
    assert "'ghost@tools' is enabled but not installed" in problem.message and "claude plugin install" in problem.message


def test_a_plugin_dir_copy_beats_the_installed_plugin_of_the_same_name(tmp_path):
    home = tmp_path / "home"
    installed = _copy("review-kit", tmp_path / "installed")
    _install(home, "review-kit@tools", [{"scope": "user", "installPath": str(installed)}])
    local = _copy("review-kit", tmp_path / "local")
    scan = load_plugins(tmp_path, plugin_dirs=[local], enabled={"review-kit@tools": "s"}, home=home)
    assert scan.plugins["review-kit"].root == local.resolve() and scan.plugins["review-kit"].origin == "--plugin-dir"
    assert "already loaded" in scan.problems[0].message
